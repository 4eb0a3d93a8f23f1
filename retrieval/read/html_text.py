"""HTML to paragraphs and pipe tables, and raw HTML taken out of Markdown.

`html_to_text` walks the parsed page once (an explicit stack, no recursion), so every text node is
read exactly once: text in a `<div>` or `<span>` beside block elements is kept, a nested table is
read inside its cell and not again, and `rowspan`/`colspan` are expanded so every row has all its
columns.
"""

from __future__ import annotations

import html
import re

from .alt_text import image_line

BLOCK_TAGS = frozenset(
    "address article aside blockquote body caption center dd details dialog dir div dl dt fieldset "
    "figcaption figure footer form header hgroup hr html li main menu nav ol p section summary ul "
    "legend option tr td th tbody thead tfoot".split()
)
_SKIPPED = frozenset("script style noscript template head svg math select iframe object".split())
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
MAX_SPAN = 1_000  # a colspan or rowspan beyond this is treated as this
MAX_TABLE_CELLS = 1_000_000  # cells that spans of one table may add: past it, spans are read as 1


def html_to_text(markup: str) -> str:
    """Headings as `#` lines, block elements as paragraphs, `<br>` as a line break, `<pre>` as it
    is, tables as pipe tables, an image's alt text as an `[image: ...]` line; all text read, in
    document order."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    return "\n\n".join(b for b in _Walker().blocks(soup) if b.strip())


class _Walker:
    def __init__(self):
        self.out: list[str] = []
        self.inline: list[str] = []

    def flush(self) -> None:
        if self.inline:
            text = "\n".join(" ".join(line.split()) for line in "".join(self.inline).split("\n")).strip()
            if text:
                self.out.append(text)
            self.inline = []

    def blocks(self, root) -> list[str]:
        from bs4 import Tag

        # (node, closing): a block's end flushes what its inline text gathered
        stack: list[tuple[object, bool]] = [(child, False) for child in reversed(list(root.children))]
        while stack:
            node, closing = stack.pop()
            if closing:
                self.flush()
                continue
            if not isinstance(node, Tag):
                if _is_text(node):
                    self.inline.append(str(node))
                continue
            name = node.name
            if name in _SKIPPED:
                continue
            if name == "br":
                self.inline.append("\n")
            elif name == "img":
                line = image_line(node.get("alt"), node.get("title"))
                if line:
                    self.inline.append(f"\n{line}\n")
            elif name in _HEADINGS:
                self.flush()
                text = _cell_text(node)
                if text:
                    self.out.append(f"{'#' * _HEADINGS[name]} {text}")
            elif name == "table":
                self.flush()
                table = table_to_markdown(node)
                if table:
                    self.out.append(table)
            elif name == "pre":
                self.flush()
                self.out.append(node.get_text().strip("\n"))
            elif name in BLOCK_TAGS:
                self.flush()
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(node.contents))
            else:
                stack.extend((child, False) for child in reversed(node.contents))
        self.flush()
        return self.out


def _is_text(node: object) -> bool:
    from bs4 import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction

    return isinstance(node, NavigableString) and not isinstance(
        node, Comment | Declaration | Doctype | ProcessingInstruction
    )


def _cell_text(node) -> str:
    """An element's text on one line (nested tables included once), scripts and styles left out."""
    from bs4 import Tag

    parts: list[str] = []
    stack: list = [node]
    while stack:
        el = stack.pop()
        if isinstance(el, Tag):
            if el.name in _SKIPPED:
                continue
            if el.name == "img":
                parts.append(f" {image_line(el.get('alt'), el.get('title'))} ")
                continue
            block = el.name in BLOCK_TAGS or el.name in _HEADINGS or el.name in ("table", "br")
            if block:
                parts.append(" ")
                stack.append(_SPACE)
            stack.extend(reversed(el.contents))
        elif _is_text(el):
            parts.append(str(el))
        elif el is _SPACE:
            parts.append(" ")
    return " ".join("".join(parts).split())


_SPACE = object()  # pushed after a block's children: a space where the block ends


def _span(cell, attribute: str) -> int:
    try:
        return min(max(int(str(cell.get(attribute, "1")).strip() or 1), 1), MAX_SPAN)
    except ValueError:
        return 1


def _own_rows(table) -> list:
    """The table's rows, not those of tables nested in its cells."""
    rows = []
    for child in table.find_all(recursive=False):
        if child.name == "tr":
            rows.append(child)
        elif child.name in ("thead", "tbody", "tfoot"):
            rows.extend(tr for tr in child.find_all("tr", recursive=False))
    return rows


def _fill_carried(row: list[str], carried: dict[int, tuple[int, str]]) -> None:
    """Append the cells that rowspans from rows above cover at the row's next positions."""
    while len(row) in carried:
        left, text = carried.pop(len(row))
        if left > 1:
            carried[len(row)] = (left - 1, text)
        row.append(text)


def table_to_markdown(table) -> str:
    """A pipe table with spans expanded: a cell spanning rows or columns is written in each
    position it covers, so every row has every column and the header rule matches the width."""
    grid: list[list[str]] = []
    carried: dict[int, tuple[int, str]] = {}  # column -> (rows still covered, text) from a rowspan above
    budget = MAX_TABLE_CELLS
    for tr in _own_rows(table):
        row: list[str] = []
        for cell in tr.find_all(["td", "th"], recursive=False):
            _fill_carried(row, carried)
            text = _cell_text(cell).replace("|", "/")
            colspan, rowspan = _span(cell, "colspan"), _span(cell, "rowspan")
            if colspan * rowspan > budget:  # spans past the budget are not expanded: the text stays
                colspan = rowspan = 1
            budget -= colspan * rowspan
            for _ in range(colspan):
                if rowspan > 1:
                    carried[len(row)] = (rowspan - 1, text)
                row.append(text)
        _fill_carried(row, carried)
        if any(row):
            grid.append(row)
    if not grid:
        return ""
    width = max(len(r) for r in grid)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in grid]
    if len(lines) > 1:
        lines.insert(1, "|" + "---|" * width)
    return "\n".join(lines)


# -- raw HTML in Markdown -------------------------------------------------------------------------------

_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")  # [^<>]* stops at the next bracket: linear
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
# linear: an alt text holds no bracket and every quantifier is possessive, so each `![` is scanned only
# as far as the next bracket or parenthesis (a line of `![` repeated used to rescan the rest of the line)
_MD_IMAGE = re.compile(
    r'!\[([^\[\]\n]*+)\](?:\(\s*+<?[^()\s<>]*+>?(?:\s++["\'(]([^"\'()\n]*+)["\')])?+\s*+\)|\[[^\[\]\n]*+\])'
)
_IMG_TAG = re.compile(r"<img\b[^<>]*>", re.I)
_ATTRIBUTE = re.compile(r"""\b(alt|title)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
_BLOCK_TAG_LINE = re.compile(r"^\s*</?(?:p|div|br|hr|table|tr|td|th|li|ul|ol|h[1-6]|section|details|summary)\b", re.I)


def strip_markdown_html(text: str) -> str:
    """Markdown with its raw HTML taken out: comments removed, tags removed (their text kept),
    entities decoded, images (`![alt](src)`, `<img alt>`) as `[image: alt]` or nothing; fenced
    code blocks and code spans left as they are (HTML there is the content)."""
    text = _strip_comments(text)
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if "<" in line or "&" in line or "![" in line:
            block = bool(_BLOCK_TAG_LINE.match(line))
            # inline code spans (odd pieces) keep their text: `List<String>` is code, not markup
            pieces = _CODE_SPAN.split(line)
            for i in range(0, len(pieces), 2):
                piece = _MD_IMAGE.sub(lambda m: image_line(m.group(1), m.group(2)), pieces[i])
                piece = _IMG_TAG.sub(_img_tag_line, piece)
                pieces[i] = html.unescape(_TAG.sub(" " if block else "", piece))
            line = "".join(pieces)
            if block and not line.strip():
                line = ""
        out.append(line)
    return "\n".join(out)


def _img_tag_line(match: re.Match) -> str:
    """An `<img>` tag in Markdown as its `[image: alt]` line, or nothing."""
    found = {
        m.group(1).lower(): html.unescape(m.group(2) or m.group(3) or m.group(4) or "")
        for m in _ATTRIBUTE.finditer(match.group())
    }
    return image_line(found.get("alt"), found.get("title"))


def _strip_comments(text: str) -> str:
    """`<!-- ... -->` removed, in one pass (a regex would rescan from each unclosed `<!--`)."""
    parts: list[str] = []
    pos = 0
    while (start := text.find("<!--", pos)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        parts.append(text[pos:start])
        pos = end + 3
    parts.append(text[pos:])
    return "".join(parts)
