"""Announced lists, found in plain text: where a passage that holds part of a list its document announces ("We
compare our approach to the following set of baselines:" and then one line per baseline) can grow to the whole
list, from the sentence that announces it to its last item (context.py `recover_lists`, as `recover_tables` grows a
cut table). A question asking for the list ("What baselines were used?") otherwise reads its first item only:
150-token chunks cut it where Std-RAG's 512-token chunks keep it (evals/README tenth round, the papers set).

A list is a line ending in a colon (not a caption's label: "Table 3:", "Passage 84:") followed by two or more lines
of one form: bulleted or numbered ("- ", "•", "1.", "(a)") or labelled ("Tweet2vec: We use ..."); one short line
between them that is neither (a typesetting remnant such as "[leftmargin=4mm]") is allowed. Hand-written: document
loaders keep line breaks but mark no lists in plain text.
"""

from __future__ import annotations

import re

REACH = 4000  # characters before and after a passage where its list's lines are looked for (bounds the work)
MAX_ITEM_LINES = 60  # a list of more lines is not brought whole
MAX_REMNANT = 30  # characters of the one line between the announcement and the first item that may be neither
_ANNOUNCES = re.compile(r":\s*$")
_CAPTION = re.compile(r"^\s*\w+\s+\d+[a-z]?\s*:\s*$")  # "Table 3:", "Passage 84:": a label, not an announcement
_BULLET = re.compile(r"^\s*(?:[-•*▪◦–·]|\(?\d{1,2}[.)]|\([a-z]\)|[a-z]\)|\(?[ivx]{1,4}\))\s+\S")
_LABELLED = re.compile(r"^\s*[^:\n]{1,60}:\s+\S")
_SENTENCE_START = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"“])")


def _form(line: str) -> str | None:
    if _BULLET.match(line):
        return "bullet"
    if _LABELLED.match(line) and not _ANNOUNCES.search(line):
        return "labelled"
    return None


def lists_near(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The (start, end) of each announced list within REACH characters of text[start:end]: from the announcing sentence
    to the end of its last item."""
    lo, hi = max(0, start - REACH), min(len(text), end + REACH)
    lines, pos = [], lo
    for line in text[lo:hi].split("\n"):
        lines.append((pos, line))
        pos += len(line) + 1
    found, i = [], 0
    while i < len(lines):
        at, line = lines[i]
        if not (_ANNOUNCES.search(line) and line.strip(" :")) or _CAPTION.match(line):
            i += 1
            continue
        first = i + 1
        if first < len(lines) and len(lines[first][1].strip()) <= MAX_REMNANT and not _form(lines[first][1]):
            first += 1
        form = _form(lines[first][1]) if first < len(lines) else None
        last = first
        while form and last < len(lines) and last - first < MAX_ITEM_LINES and _form(lines[last][1]) == form:
            last += 1
        if form and last - first >= 2:
            sentences = [m.end() for m in _SENTENCE_START.finditer(line)]
            announced = at + (sentences[-1] if sentences else len(line) - len(line.lstrip()))
            found.append((announced, lines[last - 1][0] + len(lines[last - 1][1])))
            i = last
        else:
            i += 1
    return found
