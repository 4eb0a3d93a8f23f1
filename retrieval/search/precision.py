"""The precision stage: after retrieval, keep what answers the question and drop the rest, with no
model (no cross-encoder installs offline from PyPI: bench/README.md says what was checked).

Each operator is chosen by measurement (bench/evidence_budget.py, the `precision` rows):
- `boilerplate`: chunks that are mostly table-of-contents leaders, page numbers or symbols;
- `redundant`: a chunk whose words are almost all in a better-ranked chunk (repeated headers,
  duplicated paragraphs, a copy of a table);
- `gap`: the chunks whose fused score falls below a share of the best one's (a confident ranking
  shows fewer words);
- `sentences`: inside each passage, the sentences that share no content word with the question are
  left out (marked " … "), except the first (it names the passage's subject).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..bm25 import bm25_tokens
from ..documents import ScoredChunk

OPERATORS = ("boilerplate", "redundant", "gap", "sentences")
_LEADER = re.compile(r"(?:\.\s?){4,}|(?:_\s?){4,}|(?:-\s?){6,}")
_WORDLIKE = re.compile(r"[A-Za-z]{2,}")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")
ELLIPSIS = " … "


def is_boilerplate(text: str) -> bool:
    """A table of contents or an index (dot leaders), or a run of page numbers and symbols; a table
    of numbers is not (its rows are evidence)."""
    tokens = text.split()
    if not tokens:
        return True
    if len(_LEADER.findall(text)) >= max(3, len(tokens) // 12):
        return True
    if _TABLE_ROW.search(text):
        return False
    return sum(1 for t in tokens if _WORDLIKE.search(t)) / len(tokens) < 0.3


def without_boilerplate(ranked: Sequence[ScoredChunk]) -> list[ScoredChunk]:
    """The ranked chunks less tables of contents, indexes and page-number runs; all of them when nothing else is
    left."""
    kept = [r for r in ranked if not is_boilerplate(r.chunk.text)]
    return kept or list(ranked)


def without_redundant(ranked: Sequence[ScoredChunk], containment: float = 0.8) -> list[ScoredChunk]:
    """Drop a chunk when at least `containment` of its content words are in one better-ranked chunk."""
    kept: list[ScoredChunk] = []
    seen: list[set[str]] = []
    for r in ranked:
        words = set(bm25_tokens(r.chunk.text))
        if words and any(len(words & s) >= containment * len(words) for s in seen):
            continue
        kept.append(r)
        seen.append(words)
    return kept


def gap_cut(ranked: Sequence[ScoredChunk], ratio: float, keep: int = 2) -> list[ScoredChunk]:
    """The chunks scoring at least `ratio` x the best score (always the first `keep`)."""
    if not ranked or ratio <= 0:
        return list(ranked)
    best = max(r.score for r in ranked)
    return [r for i, r in enumerate(ranked) if i < keep or r.score >= ratio * best]


def pruned(text: str, question: str) -> str:
    """The passage with the sentences that share no content word with the question left out
    (the first sentence always kept); runs of left-out sentences become one ELLIPSIS."""
    terms = set(bm25_tokens(question))
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) <= 2 or not terms:
        return text
    out: list[str] = []
    for i, s in enumerate(sentences):
        if i == 0 or terms & set(bm25_tokens(s)):
            out.append(s.strip())
        elif not out or out[-1] != ELLIPSIS.strip():
            out.append(ELLIPSIS.strip())
    return " ".join(out)


def precise_ranking(ranked: Sequence[ScoredChunk], operators: Sequence[str], gap: float) -> list[ScoredChunk]:
    """The ranking operators named in `operators`, in this module's order (`sentences` works on
    passages, in the context processor)."""
    out = list(ranked)
    if "boilerplate" in operators:
        out = without_boilerplate(out)
    if "redundant" in operators:
        out = without_redundant(out)
    if "gap" in operators:
        out = gap_cut(out, gap)
    return out
