"""Train the local analyzer (OkraLong's three judgements without an LLM) and write its weights file.

Deterministic: the labelled set is built (or read from its cache under --home) by bench/analyzer_data.py,
split by item group (seeded hash, 20% held out), and three logistic regressions (scikit-learn, lbfgs; this
is the only place scikit-learn is used) are fitted on the training part, each with its feature blocks and
L2 strength chosen by 5-fold grouped cross-validation on the training part alone. The shipped weights are
exactly the model whose held-out numbers bench/analyzer_report.py prints (held-out groups are never trained on).

    python bench/analyzer_train.py                 # 600 HotpotQA + 100 MuSiQue items, 278 TAT-QA reports
    python bench/analyzer_train.py --n-hotpotqa 20 --n-musique 10 --n-tatqa 10 --out /tmp/w.npz   # quick

Building the set embeds and indexes every long context once (about 1,000 contexts of 4,000-11,000 words;
tens of minutes on 2 cores, more on a busy machine); it is cached and resumable, so a second run only trains.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.analyzer_data import (  # noqa: E402
    EVAL_ONLY,
    PAPERS_RULE,
    TATQA_WORDS,
    TEST_FRACTION,
    build_records,
    is_test,
    labels,
    question_embeddings,
)
from longqa.analyzer.features import LEXICAL_NAMES, NGRAM_BUCKETS, RETRIEVAL_NAMES, feature_blocks  # noqa: E402
from longqa.analyzer.trained import FORMAT, HEADS, WEIGHTS_PATH, Head, TrainedAnalyzer, embedder_fingerprint  # noqa: E402

HEAD_CANDIDATES: dict[str, tuple[tuple[str, ...], ...]] = {
    # feature blocks tried per judgement; the one with the best grouped-CV accuracy on the training part ships.
    # The question type sees the question only (hand and paper questions have no document to retrieve from).
    "question_type": (("lexical", "embedding", "ngrams"), ("lexical", "embedding"), ("lexical", "ngrams")),
    "info_pattern": (("lexical", "retrieval"), ("retrieval",), ("lexical", "embedding", "retrieval")),
    "evidence": (("lexical", "retrieval"), ("retrieval",), ("lexical", "embedding", "retrieval")),
}
C_GRID = (0.01, 0.03, 0.1, 0.3, 1.0)
RAW_NGRAMS, NGRAM_SCALE = True, 0.1


def _width(block: str, total: int, blocks: Sequence[str]) -> int:
    fixed = {"lexical": len(LEXICAL_NAMES), "retrieval": len(RETRIEVAL_NAMES), "ngrams": NGRAM_BUCKETS}
    return fixed.get(block, total - sum(fixed[b] for b in blocks if b != block and b in fixed))


def default_home() -> Path:
    if os.environ.get("LONGQA_ANALYZER_HOME"):
        return Path(os.environ["LONGQA_ANALYZER_HOME"]).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "longqa-analyzer"


def add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--home",
        type=Path,
        default=default_home(),
        help="cache: indexes, labelled records, question embeddings ($LONGQA_ANALYZER_HOME)",
    )
    p.add_argument(
        "--n-hotpotqa",
        type=int,
        default=300,
        help="items of hotpotqa_a (and of hotpotqa_b with --hotpotqa-b index) asked of long documents",
    )
    p.add_argument("--n-musique", type=int, default=100)
    p.add_argument("--n-tatqa", type=int, default=None, help="TAT-QA contexts (default all 278)")
    p.add_argument(
        "--tatqa-words",
        type=int,
        default=TATQA_WORDS,
        help="TAT-QA documents padded with other reports to this many words (0 = own context only)",
    )
    p.add_argument(
        "--hotpotqa-b",
        choices=["questions", "index", "none"],
        default="index",
        help="hotpotqa_b: question-type labels only, also retrieval labels, or not used",
    )
    p.add_argument("--seed", type=int, default=0)


def data_config(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "n_hotpotqa": args.n_hotpotqa,
        "n_musique": args.n_musique,
        "n_tatqa": args.n_tatqa,
        "tatqa_words": args.tatqa_words,
        "seed": args.seed,
        "hotpotqa_b": args.hotpotqa_b,
    }


def load_labelled(args: argparse.Namespace, log=print) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """Records with their labels attached (rec["labels"][head]: str or None) and the question embeddings."""
    from bench.common import offline_env

    offline_env()
    records = build_records(args.home, data_config(args), log=log)
    for rec in records:
        lab = labels(rec)
        rec["labels"] = {
            "question_type": rec.get("type"),
            "info_pattern": lab and lab["info_pattern"],
            "evidence": lab and lab["evidence"],
        }
        rec["found"] = lab and lab["found"]
        rec["test"] = is_test(rec["group"], args.seed, TEST_FRACTION)
    return records, question_embeddings(records, args.home)


def primary_hits(rec: dict[str, Any]) -> list[dict[str, Any]]:
    return (rec.get("retrieval") or {}).get("hybrid", {}).get("hits", [])


def design(records: Sequence[dict[str, Any]], blocks: Sequence[str], emb: dict[str, np.ndarray]) -> np.ndarray:
    rows = []
    for rec in records:
        f = feature_blocks(rec["question"], primary_hits(rec), emb.get(rec["question"]), blocks)
        rows.append(np.concatenate([f[b] for b in blocks]))
    return np.vstack(rows)


def fit_head(
    x: np.ndarray,
    y: Sequence[str],
    groups: Sequence[str],
    blocks: Sequence[str],
    seed: int = 0,
    c_grid: Sequence[float] = C_GRID,
) -> tuple[Head, dict[str, Any]]:
    """Standardise, choose C by 5-fold grouped CV (accuracy; skipped when one C is given), refit on all of x.
    scikit-learn is used here only."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    y = np.asarray(y)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-8] = 1.0
    if "ngrams" in blocks and RAW_NGRAMS:  # hashed counts: kept as they are (a rare n-gram is not amplified)
        start = sum(_width(b, x.shape[1], blocks) for b in blocks[: list(blocks).index("ngrams")])
        mean[start : start + NGRAM_BUCKETS] = 0.0
        scale[start : start + NGRAM_BUCKETS] = NGRAM_SCALE
    z = (x - mean) / scale
    folds = list(GroupKFold(n_splits=5).split(z, y, groups)) if len(set(groups)) >= 5 and len(c_grid) > 1 else []
    scores = {}
    for c in c_grid:
        correct = 0
        for tr, va in folds:
            if len(set(y[tr])) < 2:
                correct += int(np.sum(y[va] == Counter(y[tr]).most_common(1)[0][0]))
                continue
            model = LogisticRegression(C=c, max_iter=5000, random_state=seed).fit(z[tr], y[tr])
            correct += int(np.sum(model.predict(z[va]) == y[va]))
        scores[c] = correct / len(y) if folds else 0.0
    best = max(c_grid, key=lambda c: (scores[c], -c)) if folds else c_grid[0]
    model = LogisticRegression(C=best, max_iter=5000, random_state=seed).fit(z, y)
    coef, intercept = model.coef_, model.intercept_
    if coef.shape[0] == 1:  # binary: as two softmax rows (0, w) and (0, b) -> the same probabilities
        coef = np.vstack([np.zeros_like(coef[0]), coef[0]])
        intercept = np.array([0.0, intercept[0]])
    head = Head(
        classes=tuple(str(c) for c in model.classes_),
        blocks=tuple(blocks),
        mean=mean,
        scale=scale,
        coef=coef,
        intercept=intercept,
    )
    return head, {"C": best, "cv_accuracy": {str(c): round(s, 4) for c, s in scores.items()}}


def train(
    records: Sequence[dict[str, Any]],
    emb: dict[str, np.ndarray],
    seed: int = 0,
    head_blocks: dict[str, tuple[str, ...]] | None = None,
    c_fixed: dict[str, float] | None = None,
    heads_to_fit: Sequence[str] = HEADS,
    log=print,
) -> tuple[TrainedAnalyzer, dict[str, Any]]:
    """One analyzer from `records` (all of them are training data). Per head, each candidate block set of
    HEAD_CANDIDATES gets its C by grouped CV and the best (CV accuracy) is kept; `head_blocks` fixes the
    blocks of the heads it names and `c_fixed` their C (no CV for a head with both fixed)."""
    heads, info = {}, {}
    for name in heads_to_fit:
        rows = [r for r in records if r["labels"][name] is not None]
        y, groups = [r["labels"][name] for r in rows], [r["group"] for r in rows]
        t0 = time.perf_counter()
        candidates = (head_blocks[name],) if head_blocks and name in head_blocks else HEAD_CANDIDATES[name]
        grid = (c_fixed[name],) if c_fixed and name in c_fixed else C_GRID
        fits = []
        for blocks in candidates:
            head, fit = fit_head(design(rows, blocks, emb), y, groups, blocks, seed, grid)
            fits.append((max(fit["cv_accuracy"].values()), -len(fits), head, fit))
            if len(candidates) > 1:
                log(f"  {name} on {' + '.join(blocks)}: C={fit['C']}, cv accuracy {fits[-1][0]:.3f}")
        cv, _, head, fit = max(fits, key=lambda f: f[:2])
        heads[name] = head
        info[name] = {
            "n": len(rows),
            "classes": list(head.classes),
            "blocks": list(head.blocks),
            "labels": dict(Counter(y)),
            **fit,
            "candidates": {" + ".join(f[2].blocks): f[0] for f in fits},
            "seconds": round(time.perf_counter() - t0, 1),
        }
        log(
            f"  {name}: {len(rows)} examples, {' + '.join(head.blocks)}, C={fit['C']}"
            + (f", cv accuracy {cv:.3f}" if len(grid) > 1 else "")
        )
    dim = next(len(v) for v in emb.values())
    meta = {
        "format": FORMAT,
        "embedder": None,
        "embedding_dim": dim,
        "lexical_names": list(LEXICAL_NAMES),
        "retrieval_names": list(RETRIEVAL_NAMES),
        "ngram_buckets": NGRAM_BUCKETS,
        "heads": {n: {"classes": list(h.classes), "blocks": list(h.blocks)} for n, h in heads.items()},
        "training": info,
    }
    return TrainedAnalyzer(heads, meta), meta


def save_weights(analyzer: TrainedAnalyzer, path: Path) -> None:
    arrays = {}
    for name, head in analyzer.heads.items():
        arrays.update(
            {
                f"{name}__mean": head.mean,
                f"{name}__scale": head.scale,
                f"{name}__coef": head.coef,
                f"{name}__intercept": head.intercept,
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(
        tmp, meta=np.asarray(json.dumps(analyzer.meta)), **{k: v.astype(np.float32) for k, v in arrays.items()}
    )
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_args(p)
    p.add_argument("--out", type=Path, default=WEIGHTS_PATH, help="weights file to write")
    args = p.parse_args(argv)
    records, emb = load_labelled(args)
    train_rows = [r for r in records if not r["test"] and r["dataset"] not in EVAL_ONLY]
    print(
        f"{len(records)} records, {len(train_rows)} for training ({len({r['group'] for r in train_rows})} "
        f"groups), {len(records) - len(train_rows)} held out"
    )
    analyzer, meta = train(train_rows, emb, args.seed)
    from longqa.retrieval.index.embed.embedder import get_embedder

    meta["embedder"] = embedder_fingerprint(get_embedder())
    meta["data"] = {
        "config": data_config(args),
        "test_fraction": TEST_FRACTION,
        "papers_rule": PAPERS_RULE,
        "datasets": dict(Counter(r["dataset"] for r in train_rows)),
        "created": dt.datetime.now().isoformat(timespec="seconds"),
    }
    save_weights(analyzer, args.out)
    check = TrainedAnalyzer.load(args.out)  # what ships must load and agree with what was trained
    probe = next(r for r in records if r["test"] and r["dataset"] not in EVAL_ONLY)
    a = check.predict(probe["question"], primary_hits(probe), emb[probe["question"]])
    b = analyzer.predict(probe["question"], primary_hits(probe), emb[probe["question"]])
    assert (a.question_type, a.info_pattern, a.evidence) == (b.question_type, b.info_pattern, b.evidence)
    print(f"weights: {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")


if __name__ == "__main__":
    main()
