"""Put a multi-column PDF page in reading order: pypdf's layout mode prints a page as a grid of
characters, so a two-column paper comes out with each left-column line followed by the right-column
line beside it. This finds the gutters (character positions blank on every line of a band of lines
with prose on both sides) and prints each column of the band whole, left to right.

Hand-written because no permissively licensed library does it on pypdf's layout text, which longqa
keeps for its tables (bench/README.md, "PDF reading order"): pdfminer.six's layout analysis orders
columns but costs ~6x the time and loses table alignment.
"""

from __future__ import annotations

import re
import statistics

MIN_WIDTH = 30  # a grid narrower than this (characters) is not split further
MAX_WIDTH = 1000  # a grid wider than this is no page of columns (and would cost lines x width to scan)
MIN_COLUMN_LINES = 3  # lines with text on both sides of a gutter needed to call it one
MIN_WORDS = 3  # median words per line each side must reach: prose, not a table's cells
MIN_ALPHA = 0.7  # share of a side's words that are alphabetic: prose, not numbers
MAX_DEPTH = 3  # columns within columns: a three- or four-column page
_WORD = re.compile(r"\S+")
_CELL_GAP = re.compile(r"\S {3,}(?=\S)")  # cells of an aligned table row


def reading_order(page: str) -> str:
    """The page's lines with each multi-column band printed column by column (left column first,
    a blank line between columns); pages without columns come back unchanged."""
    lines = page.split("\n")
    return "\n".join(_split(lines, 0))


def _split(lines: list[str], depth: int) -> list[str]:
    width = max((len(line.rstrip()) for line in lines), default=0)
    if depth >= MAX_DEPTH or not MIN_WIDTH <= width <= MAX_WIDTH:
        return lines
    gutter = _gutter(lines, width)
    if gutter is None:
        return lines
    out: list[str] = []
    band: list[str] = []

    def flush() -> None:
        if _is_columns(band, gutter):
            left = _split([line[:gutter] for line in band], depth + 1)
            right = _split([line[gutter:] for line in band], depth + 1)
            out.extend([*_trim(left), "", *_trim(right)])
        else:
            out.extend(band)
        band.clear()

    for line in lines:
        if _crosses(line, gutter):  # a title or a full-width paragraph ends the band
            flush()
            out.append(line)
        else:
            band.append(line)
    flush()
    return out


def _gutter(lines: list[str], width: int) -> int | None:
    """The character position, in the middle fifth-to-four-fifths of the grid, that the most lines
    have text on both sides of and nothing at or beside; None if too few lines do."""
    counts = [0] * (width + 1)
    for line in lines:
        text = line.rstrip()
        spans = [(m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", text)]
        if len(spans) < 2:
            continue
        first, last = spans[0][0], spans[-1][1]
        blocked = bytearray(width + 2)
        for a, b in spans:
            blocked[max(0, a - 1) : b + 1] = b"\x01" * (min(width + 1, b + 1) - max(0, a - 1))
        for x in range(first + 1, min(last, width + 1)):
            if not blocked[x]:
                counts[x] += 1
    lo, hi = width // 5, width - width // 5
    best = max(counts[lo:hi], default=0)
    if best < MIN_COLUMN_LINES:
        return None
    # the middle of the longest run of best positions: the gutter's centre, not its edge
    runs: list[tuple[int, int]] = []
    x = lo
    while x < hi:
        if counts[x] == best:
            start = x
            while x < hi and counts[x] == best:
                x += 1
            runs.append((x - start, start))
        else:
            x += 1
    length, start = max(runs)
    return start + length // 2


def _crosses(line: str, x: int) -> bool:
    """Text at x or right beside it (a word or a single space between words runs across)."""
    return any(not c.isspace() for c in line[max(0, x - 1) : x + 2])


def _is_columns(band: list[str], gutter: int) -> bool:
    both = [line for line in band if line[:gutter].strip() and line[gutter:].strip()]
    if len(both) < MIN_COLUMN_LINES:
        return False
    return _prose([line[:gutter] for line in band]) and _prose([line[gutter:] for line in band])


def _prose(side: list[str]) -> bool:
    words = [_WORD.findall(line) for line in side if line.strip()]
    if not words:
        return False
    flat = [w for ws in words for w in ws]
    alpha = sum(1 for w in flat if any(c.isalpha() for c in w)) / len(flat)
    cells = sum(1 for line in side if len(_CELL_GAP.findall(line.strip())) >= 2)
    return statistics.median(len(ws) for ws in words) >= MIN_WORDS and alpha >= MIN_ALPHA and cells * 2 < len(words)


def _trim(lines: list[str]) -> list[str]:
    """A column's lines without the blank lines at its top and bottom."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]
