"""The trained local analyzer: three logistic regressions over question and primary-retrieval features.

Trained by bench/analyzer_train.py (scikit-learn, for training only); the weights ship in
analyzer/data/weights.npz and inference here is numpy only: standardise, one matrix product, softmax.
No network, no LLM call; about a millisecond a question once the question is embedded (and in a
graph run the primary retrieval has already embedded it: `retrieval.search` caches query vectors).

If the weights file is missing, unreadable or does not match this code or the embedder, the local
analyzer says so once in the log and uses the rule-based analyzer (`analyze_local`), never failing.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .features import BLOCKS, LEXICAL_NAMES, NGRAM_BUCKETS, RETRIEVAL_NAMES, feature_blocks, hit_field
from .rules import analyze_rules
from .schema import Analysis

log = logging.getLogger(__name__)

WEIGHTS_PATH = Path(__file__).resolve().parent / "data" / "weights.npz"
FORMAT = 1
HEADS = ("question_type", "info_pattern", "evidence")
PROBE = "Which river is longer, the Severn or the Thames?"


class WeightsError(ValueError):
    """The weights file cannot be used (missing, corrupt, or made for other features or embedder)."""


@dataclass(frozen=True)
class Head:
    """One judgement: a multinomial (or binary, as two rows) logistic regression on standardised features."""

    classes: tuple[str, ...]
    blocks: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (classes, features)
    intercept: np.ndarray  # (classes,)

    def proba(self, x: np.ndarray) -> np.ndarray:
        """The probability of each class for one feature vector (softmax of the standardised linear scores)."""
        z = self.coef @ ((x - self.mean) / self.scale) + self.intercept
        z = np.exp(z - z.max())
        return z / z.sum()


class TrainedAnalyzer:
    """predict(question, primary hits) -> Analysis(backend="local-trained")."""

    def __init__(self, heads: dict[str, Head], meta: dict[str, Any], embedder=None):
        self.heads = heads
        self.meta = meta
        self._embedder = embedder

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path = WEIGHTS_PATH, embedder=None) -> TrainedAnalyzer:
        """Load the heads from a weights file; WeightsError when it is missing or unreadable."""
        path = Path(path)
        if not path.is_file():
            raise WeightsError(f"weights file not found: {path}")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = {key: np.asarray(data[key], dtype=np.float64) for key in data.files if key != "meta"}
        except Exception as e:  # a truncated or foreign file raises zipfile, OSError, ValueError or KeyError
            raise WeightsError(f"weights file {path} is unreadable: {type(e).__name__}: {e}") from e
        return cls(_heads_from(meta, arrays, path), meta, embedder)

    @property
    def uses_embedding(self) -> bool:
        """Whether a head reads the question's embedding (the embedder is then needed)."""
        return any("embedding" in h.blocks for h in self.heads.values())

    @property
    def embedder(self):
        """The sentence embedder, loaded on first use and checked to be the one the weights were trained with."""
        if self._embedder is None:
            from longqa.retrieval.index.embed.embedder import get_embedder

            embedder = get_embedder()
            check_embedder(self.meta, embedder)
            self._embedder = embedder
        return self._embedder

    def embed(self, question: str) -> np.ndarray:
        """The question's vector; shares `retrieval.search`'s query cache, so the vector the primary
        retrieval computed for the same text is reused."""
        from longqa.retrieval.search.search import query_vector

        return query_vector(self.embedder, question)

    # -- prediction ------------------------------------------------------------------------
    def features(
        self,
        question: str,
        hits: Sequence[Any] = (),
        embedding: np.ndarray | None = None,
        blocks: Sequence[str] = BLOCKS,
    ) -> dict[str, np.ndarray]:
        """The named feature blocks of a question and its hits (the embedding computed when asked for and not given)."""
        if "embedding" in blocks and embedding is None:
            embedding = self.embed(question)
        return feature_blocks(question, hits, embedding, blocks)

    def probabilities(
        self, question: str, hits: Sequence[Any] = (), embedding: np.ndarray | None = None
    ) -> dict[str, dict[str, float]]:
        """Each head's class probabilities for a question and its primary hits."""
        needed = {b for h in self.heads.values() for b in h.blocks}
        feats = self.features(question, hits, embedding, tuple(b for b in BLOCKS if b in needed))
        out = {}
        for name, head in self.heads.items():
            p = head.proba(np.concatenate([feats[b] for b in head.blocks]))
            out[name] = {c: float(v) for c, v in zip(head.classes, p, strict=True)}
        return out

    def predict(self, question: str, hits: Sequence[Any] = (), embedding: np.ndarray | None = None) -> Analysis:
        """The most probable class of each head as an Analysis (backend `local-trained`; no evidence without hits)."""
        probs = self.probabilities(question, hits, embedding)
        best = {name: max(p, key=p.get) for name, p in probs.items()}
        evidence = best["evidence"] if hits else "no"  # nothing retrieved holds no evidence
        note = "p=" + "/".join(f"{probs[n][best[n]]:.2f}" for n in HEADS)
        return Analysis(
            question_type=best["question_type"],
            info_pattern=best["info_pattern"],
            evidence=evidence,
            backend="local-trained",
            note=note,
        )


def embedder_fingerprint(embedder) -> dict[str, Any]:
    """What identifies the embedder the weights were trained with: its name, dimension and the vector of
    a fixed probe sentence (the directory name alone does not tell two models apart)."""
    vector = embedder.embed([PROBE])[0]
    return {
        "name": embedder.name,
        "dim": int(embedder.dimension),
        "probe": PROBE,
        "probe_vector": [round(float(x), 6) for x in vector],
    }


def check_embedder(meta: dict[str, Any], embedder) -> None:
    """Raise WeightsError unless `embedder` embeds like the one the weights were trained with."""
    spec = meta.get("embedder") or {}
    if int(embedder.dimension) != int(meta.get("embedding_dim", -1)):
        raise WeightsError(
            f"weights expect {meta.get('embedding_dim')}-dimensional question embeddings, "
            f"the embedder {embedder.name!r} gives {embedder.dimension}"
        )
    expected = np.asarray(spec.get("probe_vector", []), dtype=np.float64)
    got = np.asarray(embedder.embed([spec.get("probe", PROBE)])[0], dtype=np.float64)
    if (
        expected.shape != got.shape
        or float(expected @ got) / (np.linalg.norm(expected) * np.linalg.norm(got) + 1e-12) < 0.98
    ):
        raise WeightsError(
            f"weights were trained with another embedder than {embedder.name!r} (probe similarity below 0.98)"
        )


def _heads_from(meta: dict[str, Any], arrays: dict[str, np.ndarray], path: Path) -> dict[str, Head]:
    if meta.get("format") != FORMAT:
        raise WeightsError(f"weights file {path} has format {meta.get('format')!r}; this code reads {FORMAT}")
    widths = {
        "lexical": len(LEXICAL_NAMES),
        "retrieval": len(RETRIEVAL_NAMES),
        "embedding": meta.get("embedding_dim"),
        "ngrams": meta.get("ngram_buckets"),
    }
    if (
        list(meta.get("lexical_names", [])) != list(LEXICAL_NAMES)
        or list(meta.get("retrieval_names", [])) != list(RETRIEVAL_NAMES)
        or meta.get("ngram_buckets") not in (None, NGRAM_BUCKETS)
    ):
        raise WeightsError(f"weights file {path} was trained on other features than analyzer/features.py computes")
    heads = {}
    for name in HEADS:
        spec = meta.get("heads", {}).get(name)
        if spec is None:
            raise WeightsError(f"weights file {path} has no {name} head")
        blocks = tuple(spec["blocks"])
        if not blocks or any(b not in widths or not widths[b] for b in blocks):
            raise WeightsError(f"weights file {path}: {name} uses unknown feature blocks {blocks}")
        n = sum(int(widths[b]) for b in blocks)
        try:
            head = Head(
                classes=tuple(spec["classes"]),
                blocks=blocks,
                mean=arrays[f"{name}__mean"],
                scale=arrays[f"{name}__scale"],
                coef=arrays[f"{name}__coef"],
                intercept=arrays[f"{name}__intercept"],
            )
        except KeyError as e:
            raise WeightsError(f"weights file {path} lacks array {e}") from e
        k = len(head.classes)
        if (
            head.coef.shape != (k, n)
            or head.mean.shape != (n,)
            or head.scale.shape != (n,)
            or head.intercept.shape != (k,)
            or not np.all(np.isfinite(head.coef))
            or not np.all(head.scale > 0)
        ):
            raise WeightsError(f"weights file {path}: {name} arrays do not fit {k} classes x {n} features")
        heads[name] = head
    return heads


# -- the default local backend ---------------------------------------------------------------------

_lock = threading.Lock()
_loaded: dict[str, TrainedAnalyzer | WeightsError] = {}


def default_analyzer(path: str | Path | None = None) -> tuple[TrainedAnalyzer | None, str]:
    """The trained analyzer for `path` (default WEIGHTS_PATH), loaded once; or (None, why not),
    warned once per path."""
    key = str(path or WEIGHTS_PATH)
    with _lock:
        if key not in _loaded:
            try:
                _loaded[key] = TrainedAnalyzer.load(key)
            except WeightsError as e:
                log.warning("trained local analyzer unavailable, using the rule-based analyzer: %s", e)
                _loaded[key] = e
        value = _loaded[key]
    return (None, str(value)) if isinstance(value, WeightsError) else (value, "")


def _disable(path: str, error: WeightsError) -> None:
    with _lock:
        _loaded[path] = error


def analyze_local(question: str, hits: Sequence[Any] = (), path: str | Path | None = None) -> Analysis:
    """The local backend: the trained analyzer, else the rule-based one (the analysis notes why)."""
    analyzer, why = default_analyzer(path)
    if analyzer is not None:
        try:
            return analyzer.predict(question, hits)
        except WeightsError as e:  # e.g. a different embedder: do not try again in this process
            log.warning("trained local analyzer unusable, using the rule-based analyzer: %s", e)
            _disable(str(path or WEIGHTS_PATH), e)
            why = str(e)
        except Exception as e:  # noqa: BLE001 - the analysis must never end a run; logged in full
            why = f"{type(e).__name__}: {e}"
            log.warning(
                "trained local analyzer failed on this question (%s), using the rule-based analyzer", why, exc_info=True
            )
    texts = [str(hit_field(h, "text") or "") for h in hits]
    analysis = analyze_rules(question, texts)
    analysis.note = f"trained analyzer unavailable ({why}); used rules"
    return analysis
