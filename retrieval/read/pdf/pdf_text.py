"""Make a PDF's extracted page texts read like the document: glyph-name runs removed, dot leaders
collapsed, and the running headers and footers that repeat on most pages taken out.

Pure functions over a list of page texts (one string per page, in page order), so they can be
tested without a PDF and applied to any extractor's output.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from itertools import pairwise

# Fonts without a ToUnicode map make extractors print glyph names or ids instead of letters:
# "/g68/g83", "/G12", "glyph123", "/uni0041", pdfminer's "(cid:12)".
_GLYPH = r"(?:/(?:[gG]\d{1,5}|uni[0-9A-Fa-f]{4,6})|glyph\d{1,5}|\(cid:\d{1,6}\))"
_GLYPH_RUN = re.compile(rf"(?P<lead>[ \t]?)(?P<run>{_GLYPH}(?:[ \t]?{_GLYPH})*)")
_GLYPH_TOKEN = re.compile(_GLYPH)
# Leaders between a table-of-contents title and its page: ". . . .", "......", "·····", "……".
_LEADER = re.compile(r"[ \t]*(?:(?:\.[ \t]?){4,}|(?:[·•∙⋅][ \t]?){3,}|(?:…[ \t]?){2,})[ \t]*")
_ROMAN = re.compile(r"m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})")
_DIGITS = re.compile(r"\d+")
_ALIGNED_GAP = re.compile(r"\S(?: {2,}|\t+)(?=\S)")  # loaders' aligned-row test (loaders imports this module)

FURNITURE_SHARE = 0.6  # a line repeated at the top or bottom of this share of pages is a header/footer
MIN_PAGES = 3  # fewer pages than this cannot show what repeats
EDGE_LINES = 2  # how many non-blank lines at the top and at the bottom of a page can be furniture
# the word before a page number that labels it as one: "Page 3 of 10", "p. 12", "Seite 4"
_PAGE_LABELS = frozenset({"page", "pages", "p", "pp", "pg", "pag", "pagina", "página", "seite", "side", "sida", "sivu"})
_PUNCT = ".,:;|·•-–—()[]"
_ROMAN_DIGITS = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


def clean_pdf_pages(pages: list[str]) -> list[str]:
    """The pages with glyph-name runs removed, dot leaders collapsed to " … ", and header and
    footer lines that repeat (page numbers aside) on most pages dropped. One string per page."""
    pages = [_clean_lines(page) for page in pages]
    return _drop_furniture(pages)


def drop_glyph_runs(line: str) -> str:
    """Remove glyph names: a run of two or more anywhere, or a single one standing as a word."""

    def replace(m: re.Match[str]) -> str:
        run, lead = m.group("run"), m.group("lead")
        before = m.start("run")
        after = m.end()
        alone = (before == 0 or line[before - 1].isspace()) and (after == len(line) or line[after].isspace())
        if not (alone or run.startswith("(cid:") or len(_GLYPH_TOKEN.findall(run)) >= 2):
            return m.group()
        # keep one separating space when the run sat between two words
        return lead if lead and after < len(line) and not line[after].isspace() else ""

    return _GLYPH_RUN.sub(replace, line)


def collapse_leaders(line: str) -> str:
    """`Introduction ........ 7` -> `Introduction … 7` (also spaced dots and middle dots)."""
    return _LEADER.sub(lambda m: " … " if m.end() < len(line) else " …", line)


def _clean_lines(page: str) -> str:
    return "\n".join(collapse_leaders(drop_glyph_runs(line)) for line in page.split("\n"))


def furniture_key(line: str) -> str:
    """A line with its page number made generic, for comparing lines across pages:
    "Page 3 of 10", "- 7 -", "xii" and "IBM Redpaper 12" compare equal to their other pages'."""
    words = line.lower().split()
    return " ".join("#" if _ROMAN.fullmatch(w) else _DIGITS.sub("#", w) for w in words)


def _drop_furniture(pages: list[str]) -> list[str]:
    """The pages without their running headers and footers. A page whose every line would go (a
    page of one sentence, repeated with only its numbers changed) keeps its lines: removal never
    takes away a page's only text, so it never empties a document that had a text layer."""
    if len(pages) < MIN_PAGES:
        return pages
    edges = [_edge_lines(page) for page in pages]
    repeated = _repeated_keys(edges)
    running = {zone_key for zone_key in repeated if _varies_like_furniture(_occurrences(pages, edges, zone_key))}
    out = []
    for page, (top, bottom) in zip(pages, edges, strict=True):
        lines = page.split("\n")
        drop = _run_from_edge(top, "top", running) | _run_from_edge(bottom, "bottom", running)
        if all(i in drop for i, line in enumerate(lines) if line.strip()):
            drop = set()  # nothing but furniture left: keep the page as it is
        out.append("\n".join(line for i, line in enumerate(lines) if i not in drop))
    return out


def _occurrences(
    pages: list[str], edges: list[tuple[list[tuple[int, str | None]], ...]], zone_key: tuple[str, str]
) -> list[tuple[int, str]]:
    """(page index, line) of each edge line, in page order, that has this zone and key."""
    zone, key = zone_key
    side = 0 if zone == "top" else 1
    found = []
    for p, (page, edge) in enumerate(zip(pages, edges, strict=True)):
        lines = page.split("\n")
        found += [(p, lines[i]) for i, k in sorted(edge[side]) if k == key]
    return found


def _varies_like_furniture(occurrences: list[tuple[int, str]]) -> bool:
    """Whether lines that read alike once their numbers are made generic are one running header or
    footer: its numbers are all the same on every page, or all but one, and that one counts the pages
    (a page number, standing at the line's start or end or after a word such as "Page"). A line whose
    numbers change otherwise (a date and an amount, an entry number beside the page number, a chapter
    number) differs from page to page: it is content."""
    numbers = [_line_numbers(line) for _, line in occurrences]
    if len({len(n) for n in numbers}) > 1:
        return False
    changing = [j for j in range(len(numbers[0])) if len({n[j][1] for n in numbers}) > 1]
    if not changing:
        return True
    if len(changing) > 1:
        return False
    j = changing[0]
    placed = all(n[j][0] for n in numbers)
    return placed and _counts_pages([p for p, _ in occurrences], [n[j][1] for n in numbers])


def _line_numbers(line: str) -> list[tuple[bool, int]]:
    """Each number of a line, in the order `furniture_key` marks them with "#": (whether it stands
    where a page number stands, its value). Roman numerals that are a word of their own count."""
    words = [w for w in line.lower().split() if any(c.isalnum() for c in w)]  # "-", "|", "·" aside
    numbers: list[tuple[bool, int]] = []
    for at, word in enumerate(words):
        placed = at in (0, len(words) - 1) or (at > 0 and words[at - 1].strip(_PUNCT) in _PAGE_LABELS)
        if _ROMAN.fullmatch(word):
            numbers.append((placed, _roman_value(word)))
        else:
            numbers += [(placed, int(digits)) for digits in _DIGITS.findall(word)]
    return numbers


def _roman_value(numeral: str) -> int:
    values = [_ROMAN_DIGITS[c] for c in numeral]
    return sum(-v if v < after else v for v, after in zip(values, [*values[1:], 0], strict=True))


def _counts_pages(page_indexes: list[int], values: list[int]) -> bool:
    """Whether a number follows the page order: from one of its pages to the next it grows by as
    many as the pages between them, at least half the time (a restart from roman front matter to
    arabic numbers, or a page left out of the file, may break the rest)."""
    steps = list(zip(page_indexes, values, strict=True))
    pairs = list(pairwise(steps))
    counted = sum(1 for (p, v), (q, w) in pairs if w - v == q - p)
    return 2 * counted >= len(pairs)


def _run_from_edge(edge: list[tuple[int, str | None]], zone: str, repeated: set[tuple[str, str]]) -> set[int]:
    """Furniture grows inward from the page's edge: a repeated line counts only below (above) a
    header (footer) line that repeats too."""
    drop = set()
    for i, key in edge:
        if key is None or (zone, key) not in repeated:
            break
        drop.add(i)
    return drop


def _edge_lines(page: str) -> tuple[list[tuple[int, str | None]], list[tuple[int, str | None]]]:
    """(line index, key) of the first and of the last few non-blank lines of a page, each list from
    the edge inward. A line that belongs to a table (an aligned row next to another aligned row)
    gets no key: a table's header row repeated on each page it continues on is content."""
    lines = page.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]

    def keyed(indexes: list[int]) -> list[tuple[int, str | None]]:
        return [(i, None if _in_table(lines, i) else furniture_key(lines[i])) for i in indexes]

    return keyed(filled[:EDGE_LINES]), keyed(filled[::-1][:EDGE_LINES])


def _in_table(lines: list[str], i: int) -> bool:
    if not _is_aligned(lines[i]):
        return False
    return any(0 <= j < len(lines) and _is_aligned(lines[j]) for j in (i - 1, i + 1))


def _is_aligned(line: str) -> bool:
    return len(_ALIGNED_GAP.findall(line.strip())) >= 2


def _repeated_keys(edges: list[tuple[list[tuple[int, str | None]], ...]]) -> set[tuple[str, str]]:
    """(zone, key) pairs found on enough pages: of all pages, or of the odd or the even pages alone
    (books alternate their running heads), each group needing at least MIN_PAGES pages."""
    repeated: set[tuple[str, str]] = set()
    groups = [list(range(len(edges))), list(range(0, len(edges), 2)), list(range(1, len(edges), 2))]
    for group in groups:
        if len(group) < MIN_PAGES:
            continue
        counts: Counter[tuple[str, str]] = Counter()
        for p in group:
            top, bottom = edges[p]
            counts.update({("top", k) for _, k in top if k} | {("bottom", k) for _, k in bottom if k})
        needed = math.ceil(FURNITURE_SHARE * len(group))
        repeated |= {zone_key for zone_key, n in counts.items() if n >= needed}
    return repeated
