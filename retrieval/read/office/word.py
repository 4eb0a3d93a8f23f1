"""Read .docx files: headings (as `#` lines), paragraphs and tables (as pipe tables) in document
order, text boxes after the paragraph that anchors them, page headers and footers that carry words,
footnotes, endnotes and comments at the end. Opened through the zip guard of `formats.py`; read
with python-docx (it won the side-by-side measurement, bench/README.md), walked here because its
`Paragraph.text` leaves out text boxes and its document leaves out notes.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from ..alt_text import image_line
from ..formats import _local, _pipe_table, _too_long, guard_archive
from ..limits import DocumentError
from .charts import chart_xml_blocks
from .mend import mended_copy, part_label

_T = TypeVar("_T")

# -- DOCX -------------------------------------------------------------------------------------------


def read_docx(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Paragraphs, headings (as `#` lines) and tables (as pipe tables) of the main document, in
    document order; text boxes (DrawingML and VML) after the paragraph that anchors them; page
    headers and footers that carry words (once each, headers first, footers last); footnotes,
    endnotes and comments at the end. What is not read (charts, SmartArt, embedded objects) is added to `notes`."""
    guard_archive(path, "DOCX", "a Word document", max_words, "[Content_Types].xml")
    skipped: list[str] = []  # the parts that could not be read (a header, a notes part, a chart): the rest is kept
    document = _open_docx(path, _transitional_copy(path) if _is_strict(path) else None, skipped)
    blocks: list[str] = []
    words = 0
    try:
        headers, footers = _part(skipped, "page headers and footers", lambda: _docx_furniture(document), ([], []))
        body = _docx_blocks(document.element.body, document._body)
        ends = _part(skipped, "footnotes, endnotes and comments", lambda: list(_docx_notes(document)), [])
        charts = _part(skipped, "charts", lambda: list(_docx_charts(document, skipped)), [])
        for block in itertools.chain(headers, body, charts, footers, ends):
            words += len(block.split())
            if words > max_words:
                raise _too_long(path, max_words)
            blocks.append(block)
        if notes is not None:
            notes.extend(_docx_unread(document) + skipped)
    except DocumentError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError) as e:  # malformed XML python-docx trips on
        raise DocumentError(path, f"corrupt DOCX ({type(e).__name__}: {str(e)[:200]})") from None
    return "\n\n".join(blocks)


def _part(skipped: list[str], what: str, read: Callable[[], _T], empty: _T) -> _T:
    """One part of the document read, or `empty` with the reason in `skipped`: a header, the notes
    or a chart that python-docx trips on costs that part, not the document."""
    try:
        return read()
    except DocumentError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError, SyntaxError) as e:  # lxml's XMLSyntaxError
        skipped.append(f"{what} not read ({type(e).__name__}: {str(e)[:200]})")
        return empty


def _docx_charts(document, skipped: list[str]) -> Iterator[str]:
    """Each chart's title and data (categories, series, values) from its part's XML, in part order
    (python-docx exposes no charts; retrieval/read/office/charts.py reads the DrawingML chart schema). A chart
    with no data to read is named in `skipped`."""
    from docx.oxml import parse_xml

    parts = [p for p in document.part.package.iter_parts() if str(p.partname).startswith("/word/charts/chart")]
    empty = 0
    for part in sorted(parts, key=lambda p: _natural(str(p.partname))):
        blocks = list(chart_xml_blocks(parse_xml(part.blob)))
        empty += not blocks
        yield from blocks
    if empty:
        skipped.append("charts not read (their text, if any, is not indexed)")


def _natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _docx_furniture(document) -> tuple[list[str], list[str]]:
    """The text of page headers and footers, each distinct one once. A header of a page number
    alone is furniture; one with words (a title, a notice, a contact line) is content."""
    seen: set[str] = set()
    parts: tuple[list[str], list[str]] = ([], [])
    for section in document.sections:
        for side, kinds in (
            (0, ("header", "first_page_header", "even_page_header")),
            (1, ("footer", "first_page_footer", "even_page_footer")),
        ):
            for kind in kinds:
                part = getattr(section, kind)
                if part.is_linked_to_previous:
                    continue
                for block in _docx_blocks(part._element, part):
                    if block not in seen and re.search(r"[^\W\d_]", block):
                        seen.add(block)
                        parts[side].append(block)
    return parts


_NOTE_PARTS = (
    ("footnote", "/word/footnotes.xml"),
    ("endnote", "/word/endnotes.xml"),
    ("comment", "/word/comments.xml"),
)


def _docx_notes(document) -> Iterator[str]:
    """Footnotes and endnotes as `[^N]` paragraphs, comments as `[comment]` ones (python-docx reads
    neither)."""
    from docx.oxml import parse_xml  # python-docx's parser: no entities, no network

    by_name = {str(part.partname): part for part in document.part.package.iter_parts()}
    for tag, name in _NOTE_PARTS:
        part = by_name.get(name)
        if part is None:
            continue
        root = parse_xml(part.blob)
        for note in root.iterchildren():
            if _local(note.tag) != tag or note.get(_W + "type") in (
                "separator",
                "continuationSeparator",
                "continuationNotice",
            ):
                continue
            text = " ".join(re.sub(r"^#{1,6} ", "", b) for b in _docx_blocks(note, document._body))
            if text:
                yield f"[comment] {text}" if tag == "comment" else f"[^{note.get(_W + 'id', '')}] {text}"


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_UNREAD_PARTS = {
    "/word/diagrams/": "SmartArt diagrams",
    "/word/embeddings/": "embedded objects",
}


def _docx_unread(document) -> list[str]:
    found = sorted(
        {
            what
            for part in document.part.package.iter_parts()
            for prefix, what in _UNREAD_PARTS.items()
            if str(part.partname).startswith(prefix)
        }
    )
    return [f"{what} not read (their text, if any, is not indexed)" for what in found]


def _open_docx(path: Path, copy: io.BytesIO | None = None, skipped: list[str] | None = None):
    """The python-docx document; a side part that is not well-formed XML (a header, the styles) is
    emptied and named in `skipped`, so it costs that part (python-docx parses every part on opening)."""
    try:
        return _docx_package(path, copy)
    except DocumentError as e:
        mended = mended_copy(path, "word/document.xml") if copy is None and "XMLSyntaxError" in e.reason else None
        if mended is None or skipped is None:
            raise
    skipped += [f"part '{part_label(name)}' not read (not well-formed XML)" for name in mended[1]]
    return _docx_package(path, mended[0])


def _docx_package(path: Path, copy: io.BytesIO | None):
    import docx
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    try:
        return docx.Document(copy if copy is not None else str(path))
    except KeyError as e:  # a part named by a relationship is not in the zip
        raise DocumentError(path, f"corrupt DOCX: missing part {e}") from None
    except ValueError as e:  # e.g. "file '...' is not a Word file, content type is ..."
        raise DocumentError(path, f"not a Word document ({str(e)[:200]})") from None
    except (OpcError, LxmlError, zipfile.BadZipFile, EOFError, OSError, AttributeError, TypeError, IndexError) as e:
        # python-docx trusts the package's structure: on a malformed part it fails wherever it looks
        raise DocumentError(path, f"corrupt DOCX ({type(e).__name__}: {str(e)[:200]})") from None


def _is_strict(path: Path) -> bool:
    """Whether the package's relationships use ISO 29500 Strict's namespaces."""
    with contextlib.suppress(KeyError, zipfile.BadZipFile, OSError), zipfile.ZipFile(path) as archive:
        return b"purl.oclc.org/ooxml" in archive.read("_rels/.rels")[:65536]
    return False


# Strict Open XML (ISO 29500 Strict) differs from the Transitional form python-docx reads mostly in
# its namespaces: renamed in a copy of the package (its size already held to the zip limit)
_STRICT_NAMESPACES = {
    b"http://purl.oclc.org/ooxml/wordprocessingml/main": b"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    b"http://purl.oclc.org/ooxml/officeDocument/relationships": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/sharedTypes": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/sharedTypes"
    ),
    b"http://purl.oclc.org/ooxml/drawingml/main": b"http://schemas.openxmlformats.org/drawingml/2006/main",
    b"http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing": (
        b"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
    ),
    b"http://purl.oclc.org/ooxml/drawingml/picture": b"http://schemas.openxmlformats.org/drawingml/2006/picture",
}


def _transitional_copy(path: Path) -> io.BytesIO:
    copy = io.BytesIO()
    with zipfile.ZipFile(path) as archive, zipfile.ZipFile(copy, "w", zipfile.ZIP_STORED) as out:
        for name in archive.namelist():
            data = archive.read(name)
            if name.lower().endswith((".xml", ".rels")):
                for strict, transitional in _STRICT_NAMESPACES.items():
                    data = data.replace(strict, transitional)
            out.writestr(name, data)
    copy.seek(0)
    return copy


def _docx_blocks(element, parent, levels: dict[str | None, int] | None = None) -> Iterator[str]:
    """Text blocks of a body (or of a content control inside it), in document order. `levels`
    caches each style's heading level: python-docx looks a style up in milliseconds (it scans
    every style), which made a 30,000-paragraph document take minutes."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    levels = {} if levels is None else levels
    for child in element.iterchildren():
        name = _local(child.tag)
        if name == "p":
            raw, boxes = _paragraph_text(child)
            text = _docx_paragraph(raw, Paragraph(child, parent), levels)
            if text:
                yield text
            for box in boxes:  # text boxes anchored in the paragraph, after it
                yield from _docx_blocks(box, parent, levels)
        elif name == "tbl":
            table = _docx_table(Table(child, parent))
            if table:
                yield table
        elif name in ("sdt", "sdtContent", "customXml"):  # content controls wrap ordinary blocks
            yield from _docx_blocks(child, parent, levels)


_RUN_TEXT = {"t": None, "tab": "\t", "br": "\n", "cr": "\n", "noBreakHyphen": "-"}
# property subtrees (tab stops are `w:tab` too), the VML copy of a DrawingML text box
# (mc:Fallback repeats mc:Choice), and text boxes, which are read as blocks of their own
_NOT_RUN_TEXT = {"pPr", "rPr", "Fallback", "txbxContent"}


def _paragraph_text(p) -> tuple[str, list]:
    """A paragraph's text, from every run (inside hyperlinks, fields, smart tags and tracked
    insertions too, which python-docx's `Paragraph.text` skips in part), its pictures' alternative
    text (`wp:docPr` descr and title) as `[image: ...]` lines, and its text boxes."""
    out: list[str] = []
    boxes: list = []
    stack = [iter(p)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        name = _local(child.tag)
        if name == "txbxContent":
            boxes.append(child)
        elif name == "docPr" or (name == "shape" and child.get("alt")):  # a drawing's or VML shape's alt text
            line = image_line(child.get("descr") or child.get("alt"), child.get("title"))
            if line:
                out.append(f"\n{line}\n")
        elif name in _NOT_RUN_TEXT:
            continue
        elif name in _RUN_TEXT:
            out.append((child.text or "") if name == "t" else _RUN_TEXT[name])
        else:
            stack.append(iter(child))
    return "".join(out), boxes


def _docx_paragraph(raw: str, paragraph, levels: dict[str | None, int]) -> str:
    text = "\n".join(" ".join(line.split()) for line in raw.split("\n")).strip()
    if not text:
        return ""
    style_id = paragraph._p.style  # the pStyle id, None for the default style
    if style_id not in levels:
        levels[style_id] = _heading_level(paragraph)
    level = levels[style_id]
    return f"{'#' * level} {' '.join(text.split())}" if level else text


def _heading_level(paragraph) -> int:
    """1-6 for Title / Heading N styles (Word stores built-in names in English whatever the UI
    language), else 0."""
    try:
        name = (paragraph.style.name or "").lower() if paragraph.style is not None else ""
    except (KeyError, ValueError, AttributeError):
        return 0
    if name == "title":
        return 1
    m = re.fullmatch(r"heading (\d)", name)
    return min(int(m.group(1)), 6) if m else 0


def _docx_table(table) -> str:
    rows = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            # a cell spanning columns is written once, then left empty, so the columns stay aligned
            spanned = previous is not None and cell._tc is previous._tc
            cells.append("" if spanned else _docx_cell_text(cell).replace("|", "/"))
            previous = cell
        if any(cells):
            rows.append(cells)
    return _pipe_table(rows) if rows else ""


def _docx_cell_text(cell) -> str:
    """A cell's paragraphs and nested tables as one line."""
    from docx.table import Table

    parts = []
    for item in cell.iter_inner_content():
        if isinstance(item, Table):
            parts.extend(_docx_cell_text(c) for r in item.rows for c in r.cells)
        else:
            raw, boxes = _paragraph_text(item._p)
            parts.append(raw)
            parts.extend(re.sub(r"^#{1,6} ", "", b) for box in boxes for b in _docx_blocks(box, cell))
    return " ".join(" ".join(parts).split())
