"""Features of the trained local analyzer, shared by training (bench/analyzer_train.py) and inference.

Three blocks, each a fixed-length float vector:
- lexical:   cues of the question alone (wh-word, comparatives, " or ", numbers, quotes, capitalised
             spans, summarizing and arithmetic vocabulary, length);
- embedding: the question's all-MiniLM-L6-v2 vector (computed by the caller; the retrieval already
             embeds the question for the primary search, so in a graph run it is a cache hit);
- retrieval: the primary retrieval (3 chunks, hybrid 1:1) — dense and BM25 scores and their margins,
             whether the two retrievers agree on the hits, how much of the question the chunks cover.

Pure Python + numpy (no scikit-learn), so inference costs well under a millisecond without the embedding.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from longqa.retrieval.bm25 import bm25_tokens

from .rules import question_type as rule_question_type
from .schema import QUESTION_TYPES

_WORDS = re.compile(r"[A-Za-z0-9][\w'\-]*")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_QUOTED = re.compile(r"\"([^\"]{2,})\"|“([^”]{2,})”|'([^']{3,})'")
_CAPITALISED = re.compile(r"\b[A-Z][\w'\-]*(?:\s+(?:of|the|de|van|von|and|&)?\s*[A-Z][\w'\-]*)*")
_ACRONYM = re.compile(r"\b[A-Z]{2,}[A-Za-z0-9]*\b")
_AUX = (
    "is",
    "are",
    "was",
    "were",
    "do",
    "does",
    "did",
    "can",
    "could",
    "has",
    "have",
    "had",
    "will",
    "would",
    "should",
    "may",
)
_IMPERATIVE = (
    "summarize",
    "summarise",
    "describe",
    "explain",
    "list",
    "give",
    "outline",
    "name",
    "calculate",
    "compute",
    "compare",
    "discuss",
    "provide",
    "identify",
)
_HOW_QUANTITY = re.compile(r"^how (many|much|long|old|big|large|far|often|tall|high|wide|deep|fast)\b", re.I)
_PREP_WH = re.compile(r"^(in|on|at|from|for|to|by|of|during|with|under) (which|what|whom|whose)\b", re.I)
_OR_TAIL = re.compile(r",\s*[^,?]+\s+or\s+[^,?]+\?\s*$", re.I)
_COMPARATIVE = re.compile(
    r"\b(\w+er than|more|less|fewer|older|younger|larger|smaller|bigger|longer|shorter|earlier|later|first|last|"
    r"higher|lower|greater|faster|slower|better|worse|most|least|oldest|youngest|largest|smallest|longest|"
    r"earliest|latest|highest|lowest|greatest)\b",
    re.I,
)
_BOTH = re.compile(
    r"\b(both|either|neither|same|in common|compare[ds]?|comparison|differ\w*|similar\w*|"
    r"which of the (two|three))\b",
    re.I,
)
_ARITHMETIC = re.compile(
    r"\b(change[ds]?|percent(age)?|average|mean|total|sum|ratio|difference|increase[ds]?|decrease[ds]?|grow(th)?|"
    r"decline[ds]?|rate|proportion|portion|combined|calculate|compute|per|share|margin|net|cagr|"
    r"how (many|much))\b|%",
    re.I,
)
_SUMMARIZING = re.compile(
    r"\b(summar\w+|describe|description|explain\w*|overview|outline|main|key|major|overall|approach\w*|role|"
    r"impact|significance|lessons?|themes?|strateg\w+|process|mechanism|arguments?|reasons?|challenges?|"
    r"policy|findings?|recommendations?|consequences?|causes?|benefits?|risks?|limitations?|strengths?|"
    r"weakness\w*|work|works|affect\w*|handle\w*|happen\w*|evolve\w*|view|say|says)\b",
    re.I,
)
_BRIDGE = re.compile(r"\b(of|by|for|in|at|from) the \w+(?: \w+)? (of|that|which|who|whose|where|when)\b", re.I)
_RELATIVE = re.compile(r"(?<!^)\b(that|which|who|whom|whose|where)\b(?! (is|are|was|were)\b)", re.I)
_YEAR_TEXT = r"\b(1[5-9]\d\d|20\d\d)\b"
_FROM_TO_YEARS = re.compile(rf"\b(from|between)\b[^?]*{_YEAR_TEXT}[^?]*\b(to|and)\b[^?]*{_YEAR_TEXT}", re.I)
_RESEARCH = re.compile(r"\b(they|their|the authors?|this (paper|work|study)|proposed|model|dataset|baselines?)\b", re.I)

WH_SLOTS = (
    "what",
    "which",
    "who",
    "when",
    "where",
    "why",
    "how-quantity",
    "how",
    "prep-wh",
    "aux",
    "imperative",
    "other",
)

LEXICAL_NAMES: tuple[str, ...] = (
    *(f"start:{w}" for w in WH_SLOTS),
    "log_words",
    "content_words",
    "has_or",
    "or_tail",
    "comparatives",
    "both_same",
    "arithmetic_cues",
    "summarizing_cues",
    "bridge_phrases",
    "relative_clauses",
    "possessives",
    "of_the",
    "numbers",
    "years",
    "from_to_years",
    "percent_sign",
    "currency",
    "quoted",
    "capitalised_spans",
    "capitalised_share",
    "acronyms",
    "question_mark",
    "research_cues",
    "commas",
    *(f"rule:{t}" for t in QUESTION_TYPES),
)

RETRIEVAL_NAMES: tuple[str, ...] = (
    "n_hits",
    "dense_max",
    "dense_mean",
    "dense_min",
    "dense_gap",
    "dense_missing",
    "bm25_max_per_term",
    "bm25_mean_per_term",
    "bm25_gap",
    "bm25_log_max",
    "bm25_missing",
    "fused_1",
    "fused_2",
    "fused_3",
    "both_scored",
    "top_is_dense_best",
    "top_is_bm25_best",
    "dense_bm25_agree",
    "dense_bm25_rank_corr",
    "cover_union",
    "cover_max",
    "cover_mean",
    "bigram_cover",
    "names_present",
    "names_cover",
    "numbers_present",
    "numbers_cover",
    "quoted_cover",
    "digit_share",
    "table_share",
    "words_per_hit",
    "cover_hit_1",
    "cover_hit_2",
    "cover_hit_3",
    "row_match",
    "years_present",
    "years_cover",
    "names_spread",
    "names_in_one_hit",
)


NGRAM_BUCKETS = 2048


def ngram_features(question: str, buckets: int = NGRAM_BUCKETS) -> np.ndarray:
    """Word unigrams and bigrams of the lower-cased question (digits folded to 0, with start and end
    markers), hashed (CRC-32, stable across processes) into `buckets` counts, L2-normalised."""
    words = ["<s>", *(re.sub(r"\d", "0", w.lower()) for w in _WORDS.findall(question)), "</s>"]
    grams = words[1:-1] + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    v = np.zeros(buckets, dtype=np.float32)
    for g in grams:
        v[zlib.crc32(g.encode("utf-8")) % buckets] += 1.0
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


def _first_words(question: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(question)[:2]]


def _wh_slot(question: str) -> str:
    q = question.strip()
    words = _first_words(q)
    first = words[0] if words else ""
    if _HOW_QUANTITY.match(q):
        return "how-quantity"
    if _PREP_WH.match(q):
        return "prep-wh"
    if first in ("what", "which", "when", "where", "why", "how"):
        return first
    if first in ("who", "whom", "whose"):
        return "who"
    if first in _AUX:
        return "aux"
    if first in _IMPERATIVE:
        return "imperative"
    return "other"


def capitalised_spans(question: str) -> list[str]:
    """Capitalised word runs other than the question's first word (names, titles)."""
    q = question.strip()
    first = _WORDS.match(q)
    skip = first.end() if first else 0
    return [m.group(0) for m in _CAPITALISED.finditer(q) if m.start() >= skip]


def numbers_in(text: str) -> set[str]:
    """The numbers written in a text, thousands separators removed."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def lexical_features(question: str) -> np.ndarray:
    """Features of the question's own wording: its wh-word, length, and cues of comparison, arithmetic, summaries,
    bridges, numbers, years, money and quotes."""
    q = " ".join(question.split())
    words = _WORDS.findall(q)
    n_words = max(1, len(words))
    caps = capitalised_spans(q)
    slot = _wh_slot(q)
    values = [float(slot == s) for s in WH_SLOTS]
    values += [
        math.log1p(len(words)),
        len(bm25_tokens(q)) / 10.0,
        float(bool(re.search(r"\bor\b", q, re.I))),
        float(bool(_OR_TAIL.search(q))),
        min(3, len(_COMPARATIVE.findall(q))) / 3.0,
        min(2, len(_BOTH.findall(q))) / 2.0,
        min(3, len(_ARITHMETIC.findall(q))) / 3.0,
        min(3, len(_SUMMARIZING.findall(q))) / 3.0,
        min(2, len(_BRIDGE.findall(q))) / 2.0,
        min(3, len(_RELATIVE.findall(q))) / 3.0,
        min(2, q.count("'s") + q.count("’s")) / 2.0,
        min(3, len(re.findall(r"\bof the\b", q, re.I))) / 3.0,
        min(4, len(_NUMBER.findall(q))) / 4.0,
        min(2, len(_YEAR.findall(q))) / 2.0,
        float(bool(_FROM_TO_YEARS.search(q))),
        float("%" in q or bool(re.search(r"\bpercent", q, re.I))),
        float(bool(re.search(r"[$€£¥]|\b(dollars?|euros?|usd|eur|million|billion|thousand)\b", q, re.I))),
        float(bool(_QUOTED.search(q))),
        min(4, len(caps)) / 4.0,
        sum(len(c.split()) for c in caps) / n_words,
        min(3, len(_ACRONYM.findall(q))) / 3.0,
        float(q.endswith("?")),
        min(2, len(_RESEARCH.findall(q))) / 2.0,
        min(3, q.count(",")) / 3.0,
    ]
    rule = rule_question_type(q)  # the rule-based analyzer's verdict: generalises across datasets' styles
    values += [float(rule == t) for t in QUESTION_TYPES]
    return np.asarray(values, dtype=np.float32)


def hit_field(hit: Any, name: str) -> Any:
    """A hit as the graph's state holds it (a dict) or as a search returns it (a ScoredChunk)."""
    if isinstance(hit, Mapping):
        return hit.get(name)
    if name == "text":
        chunk = getattr(hit, "chunk", None)
        return chunk.text if chunk is not None else getattr(hit, "text", "")
    return getattr(hit, name, None)


def _rank_corr(a: list[float], b: list[float]) -> float:
    """Sign agreement of pairwise orderings (Kendall's tau without ties correction)."""
    pairs = [(i, j) for i in range(len(a)) for j in range(i + 1, len(a))]
    if not pairs:
        return 0.0
    return sum(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in pairs) / len(pairs)


def _row_match(terms: set[str], lines: list[str]) -> float:
    """The largest share of `terms` found in one table row (a line starting with '|')."""
    if not terms:
        return 0.0
    rows = [set(bm25_tokens(ln)) for ln in lines if ln.lstrip().startswith("|")]
    return max((len(terms & r) / len(terms) for r in rows), default=0.0)


def _score_features(hits: list[Any], n_terms: int) -> list[float]:
    """The hits' scores: dense and BM25 (per question term) levels and spreads, missing scores, the fused
    scores of the top three, and whether the two retrievers agree on the best hit and the order."""
    dense = [hit_field(h, "dense_score") for h in hits]
    bm25 = [hit_field(h, "bm25_score") for h in hits]
    fused = [float(hit_field(h, "score") or 0.0) for h in hits]
    d = [float(x) for x in dense if x is not None]
    b = [float(x) / n_terms for x in bm25 if x is not None]
    n = max(1, len(hits))
    both = [i for i in range(len(hits)) if dense[i] is not None and bm25[i] is not None]
    d_full = [float(x) if x is not None else -1.0 for x in dense]
    b_full = [float(x) if x is not None else 0.0 for x in bm25]
    dense_best = int(np.argmax(d_full)) if hits else -1
    bm25_best = int(np.argmax(b_full)) if hits else -1
    return [
        len(hits) / 3.0,
        max(d) if d else 0.0,
        float(np.mean(d)) if d else 0.0,
        min(d) if d else 0.0,
        (max(d) - min(d)) if len(d) > 1 else 0.0,
        sum(x is None for x in dense) / n,
        max(b) if b else 0.0,
        float(np.mean(b)) if b else 0.0,
        (max(b) - min(b)) if len(b) > 1 else 0.0,
        math.log1p(max(b) * n_terms) if b else 0.0,
        sum(x is None for x in bm25) / n,
        *(fused[i] if i < len(fused) else 0.0 for i in range(3)),
        len(both) / n,
        float(bool(hits) and dense_best == 0),
        float(bool(hits) and bm25_best == 0),
        float(bool(hits) and dense_best == bm25_best),
        _rank_corr([d_full[i] for i in both], [b_full[i] for i in both]) if len(both) > 1 else 0.0,
    ]


def _overlap_features(question: str, terms: list[str], texts: list[str]) -> list[float]:
    """What of the question the hits' texts hold: its terms, bigrams, names, numbers, quotes and years,
    and how the texts look (digits, table rows, length)."""
    n = max(1, len(texts))
    q_terms = set(terms)
    chunk_seq = [bm25_tokens(t) for t in texts]  # stemmed once per hit: the costliest step here
    chunk_terms = [set(seq) for seq in chunk_seq]
    union = set().union(*chunk_terms) if chunk_terms else set()
    per_chunk = [len(q_terms & c) / len(q_terms) for c in chunk_terms] if q_terms else []
    bigrams = {(terms[i], terms[i + 1]) for i in range(len(terms) - 1)}
    chunk_bigrams = {(s[i], s[i + 1]) for s in chunk_seq for i in range(len(s) - 1)}
    joined_lower = " ".join(texts).lower()
    names = [c.lower() for c in capitalised_spans(question)]
    q_numbers = numbers_in(question)
    text_numbers = numbers_in(" ".join(texts))
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(question)]
    all_text = " ".join(texts)
    lines = [ln for t in texts for ln in t.splitlines() if ln.strip()]
    q_years = _YEAR.findall(question)
    return [
        len(q_terms & union) / len(q_terms) if q_terms else 0.0,
        max(per_chunk) if per_chunk else 0.0,
        float(np.mean(per_chunk)) if per_chunk else 0.0,
        len(bigrams & chunk_bigrams) / len(bigrams) if bigrams else 0.0,
        float(bool(names)),
        sum(nm in joined_lower for nm in names) / len(names) if names else 0.0,
        float(bool(q_numbers)),
        len(q_numbers & text_numbers) / len(q_numbers) if q_numbers else 0.0,
        sum(s.lower() in joined_lower for s in quoted) / len(quoted) if quoted else 0.0,
        sum(ch.isdigit() for ch in all_text) / max(1, len(all_text)),
        sum(ln.lstrip().startswith("|") for ln in lines) / max(1, len(lines)),
        sum(len(t.split()) for t in texts) / n / 150.0,
        *(per_chunk[i] if i < len(per_chunk) else 0.0 for i in range(3)),
        _row_match(q_terms - set(q_years), lines),
        float(bool(q_years)),
        len(set(q_years) & text_numbers) / len(set(q_years)) if q_years else 0.0,
        sum(any(nm in t.lower() for nm in names) for t in texts) / 3.0 if names else 0.0,
        float(any(all(nm in t.lower() for nm in names) for t in texts)) if names else 0.0,
    ]


def retrieval_features(question: str, hits: Sequence[Any]) -> np.ndarray:
    """Features of the primary retrieval; `hits` in ranked order with text, score, dense_score, bm25_score."""
    hits = list(hits)[:3]
    texts = [str(hit_field(h, "text") or "") for h in hits]
    terms = bm25_tokens(question)
    values = _score_features(hits, max(1, len(set(terms)))) + _overlap_features(question, terms, texts)
    return np.asarray(values, dtype=np.float32)


BLOCKS = ("lexical", "embedding", "retrieval", "ngrams")


def feature_blocks(
    question: str, hits: Sequence[Any], embedding: np.ndarray | None, blocks: Sequence[str] = BLOCKS
) -> dict[str, np.ndarray]:
    """The named blocks as float64 vectors (`embedding` must be given when "embedding" is asked for)."""
    out: dict[str, np.ndarray] = {}
    if "lexical" in blocks:
        out["lexical"] = lexical_features(question).astype(np.float64)
    if "retrieval" in blocks:
        out["retrieval"] = retrieval_features(question, hits).astype(np.float64)
    if "ngrams" in blocks:
        out["ngrams"] = ngram_features(question).astype(np.float64)
    if "embedding" in blocks:
        if embedding is None:
            raise ValueError("the embedding block needs the question's embedding")
        out["embedding"] = np.asarray(embedding, dtype=np.float64).ravel()
    return out
