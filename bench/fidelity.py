"""How faithfully a converter read a document, against its known-good text: shared by the converter
benches (`bench/converters.py`, `bench/pdf_extractors.py`).

Three scores, each in [0, 1]:

  word recall        share of the true words (lower-cased, NFKC, `\\w+` tokens; a multiset, so a word
                     the truth has three times must come out three times) found in the output
  bigram recall      the same over consecutive word pairs: words in the right order (two columns
                     interleaved line by line, or cells shifted, lose bigrams but not words)
  table-row fidelity share of the true tables' data rows that come out intact with their header: a
                     line whose cells (split on `|`, a tab, or two or more spaces) equal the row's
                     cells position by position, in a block (lines with no blank line between) that
                     also holds the header row the same way. A row whose columns shifted (a merged cell
                     not expanded) or that lost its header does not count.

    from bench.fidelity import Truth, score
    score(Truth(text="...", tables=[[["Name", "Qty"], ["bolt", "4"]]]), converted_text)
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_WORD = re.compile(r"\w+")
_CELL_GAP = re.compile(r"\t| {2,}")


@dataclass(frozen=True)
class Truth:
    """A document's known-good content: all its text (tables included, in reading order) and its
    tables as rows of cell texts, the first row the header."""

    text: str
    tables: Sequence[Sequence[Sequence[str]]] = field(default_factory=tuple)


@dataclass(frozen=True)
class Scores:
    word_recall: float
    bigram_recall: float
    table_rows: float | None  # None: the truth has no table rows to keep
    n_words: int
    n_rows: int


def words(text: str) -> list[str]:
    """The word tokens scores compare: NFKC (ligatures, full-width forms), lower-cased."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def _recall(truth: Iterable, got: Iterable) -> tuple[float, int]:
    want, have = Counter(truth), Counter(got)
    total = sum(want.values())
    if not total:
        return 1.0, 0
    return sum(min(n, have[w]) for w, n in want.items()) / total, total


def word_recall(truth: str, got: str) -> float:
    return _recall(words(truth), words(got))[0]


def bigram_recall(truth: str, got: str) -> float:
    t, g = words(truth), words(got)
    return _recall(zip(t, t[1:], strict=False), zip(g, g[1:], strict=False))[0]


def _cell_key(cell: str) -> str:
    return " ".join(words(cell))


def _line_cells(line: str) -> tuple[str, ...]:
    s = line.strip()
    if s.startswith("|"):
        s = s.strip("|")
        parts = s.split("|")
    else:
        parts = _CELL_GAP.split(s)
    return tuple(_cell_key(p) for p in parts)


def _is_rule(cells: tuple[str, ...]) -> bool:
    return all(not c for c in cells)  # a `|---|---|` separator: no words in any cell


def _blocks(text: str) -> list[list[tuple[str, ...]]]:
    """The output's blocks of lines (no blank line between), each line as its cells; rule lines dropped."""
    blocks: list[list[tuple[str, ...]]] = [[]]
    for line in text.splitlines():
        if not line.strip():
            if blocks[-1]:
                blocks.append([])
            continue
        cells = _line_cells(line)
        if not _is_rule(cells):
            blocks[-1].append(_trim_empty(cells))
    return [b for b in blocks if b]


def _trim_empty(cells: tuple[str, ...]) -> tuple[str, ...]:
    """Trailing empty cells dropped: a reader that pads a short row and one that does not agree."""
    end = len(cells)
    while end and not cells[end - 1]:
        end -= 1
    return cells[:end]


def table_row_fidelity(tables: Sequence[Sequence[Sequence[str]]], got: str) -> tuple[float | None, int]:
    """(share of data rows intact with their header, number of data rows)."""
    blocks = _blocks(got)
    index: dict[tuple[str, ...], list[int]] = {}
    for i, block in enumerate(blocks):
        for cells in block:
            index.setdefault(cells, []).append(i)
    kept = total = 0
    for table in tables:
        if len(table) < 2:
            continue
        header = _trim_empty(tuple(_cell_key(c) for c in table[0]))
        header_blocks = set(index.get(header, ()))
        for row in table[1:]:
            key = _trim_empty(tuple(_cell_key(c) for c in row))
            if not any(key):
                continue
            total += 1
            kept += any(i in header_blocks for i in index.get(key, ()))
    return (kept / total if total else None), total


def score(truth: Truth, got: str) -> Scores:
    w, n_words = _recall(words(truth.text), words(got))
    t = words(truth.text)
    g = words(got)
    b, _ = _recall(zip(t, t[1:], strict=False), zip(g, g[1:], strict=False))
    rows, n_rows = table_row_fidelity(truth.tables, got)
    return Scores(word_recall=w, bigram_recall=b, table_rows=rows, n_words=n_words, n_rows=n_rows)


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None (None when there are none)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
