"""Read PowerPoint (.pptx) and OpenDocument text (.odt) files into paragraphs and pipe tables.

Both are zip archives opened through the zip guard of `formats.py` (not a zip, corrupt, encrypted,
declared or actual bombs, entity declarations, millions of elements: each a `DocumentError`).
.pptx is read with python-pptx; .odt by walking its content.xml here (hand-written: odfpy, the
maintained reader, builds an object per element and renders no tables; bench/README.md compares them).
"""

from __future__ import annotations

import itertools
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from .formats import (
    ElementCounter,
    _Budget,
    _local,
    _parse_xml,
    _pipe_table,
    _too_long,
    open_zip,
    refuse_declared_bomb,
    zip_byte_limit,
)
from .loaders import DocumentError

MAX_REPEAT = 1_000  # an ODF row or cell "repeated" more often is padding (a sheet's million empty rows), not text


def _guard(path: Path, kind: str, max_words: int, required: str, keep: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Open the archive through the zip guard, read every part once under the byte budget (XML
    parts counted by a streaming parser) and return the parts named in `keep`."""
    limit = zip_byte_limit(max_words)
    kept: dict[str, bytes] = {}
    with open_zip(path, kind) as archive:
        if required not in archive.namelist():
            raise DocumentError(path, f"not a {kind} file (no {required} in the zip)")
        refuse_declared_bomb(path, archive, kind, limit)
        budget = _Budget(path, kind, limit)
        counter = ElementCounter(path, max_words, kind)
        for name in archive.namelist():
            is_xml = name.lower().endswith((".xml", ".rels"))
            data = budget.read(archive, name, keep=name in keep, feed=counter.part(name) if is_xml else None)
            if name in keep:
                kept[name] = data
    return kept


def _collect(path: Path, max_words: int, blocks: Iterator[str]) -> str:
    out: list[str] = []
    words = 0
    for block in blocks:
        words += len(block.split())
        if words > max_words:
            raise _too_long(path, max_words)
        out.append(block)
    return "\n\n".join(out)


def _line(text: str) -> str:
    return " ".join(text.split())


# -- PPTX -----------------------------------------------------------------------------------------------


def read_pptx(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Slides in order, each a `## Slide N: title` heading and its shapes top to bottom, left to
    right (text, tables as pipe tables, charts as tables of their series), then the speaker notes."""
    _guard(path, "PPTX", max_words, "[Content_Types].xml")
    presentation = _open_pptx(path)
    unread: set[str] = set()
    try:
        text = _collect(path, max_words, _pptx_blocks(presentation, unread))
    except DocumentError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError) as e:
        raise DocumentError(path, f"corrupt PPTX ({type(e).__name__}: {str(e)[:200]})") from None
    if notes is not None:
        notes.extend(f"{what} not read (their text, if any, is not indexed)" for what in sorted(unread))
    if not text.strip():
        raise DocumentError(path, "PPTX has no text on its slides")
    return text


def _open_pptx(path: Path):
    import pptx
    from lxml.etree import LxmlError
    from pptx.exc import PythonPptxError

    try:
        return pptx.Presentation(str(path))
    except KeyError as e:
        raise DocumentError(path, f"corrupt PPTX: missing part {e}") from None
    except ValueError as e:
        raise DocumentError(path, f"not a PowerPoint file ({str(e)[:200]})") from None
    except (PythonPptxError, LxmlError, zipfile.BadZipFile, OSError, AttributeError, TypeError, IndexError) as e:
        raise DocumentError(path, f"corrupt PPTX ({type(e).__name__}: {str(e)[:200]})") from None


def _pptx_blocks(presentation, unread: set[str]) -> Iterator[str]:
    for number, slide in enumerate(presentation.slides, 1):
        title_shape = slide.shapes.title
        title = _line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
        yield f"## Slide {number}: {title}" if title else f"## Slide {number}"
        skip = title_shape.shape_id if title else None
        yield from _shape_blocks(slide.shapes, skip, unread)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            text = _frame_text(slide.notes_slide.notes_text_frame)
            if text:
                yield f"Notes: {text}"


def _reading_order(shape) -> tuple[int, int]:
    return (shape.top or 0, shape.left or 0)


def _shape_blocks(shapes, skip: int | None, unread: set[str]) -> Iterator[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in sorted(shapes, key=_reading_order):
        if skip is not None and shape.shape_id == skip:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shape_blocks(shape.shapes, None, unread)
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = [
                ["" if cell.is_spanned else _line(cell.text).replace("|", "/") for cell in row.cells]
                for row in shape.table.rows
            ]
            rows = [r for r in rows if any(r)]
            if rows:
                yield _pipe_table(rows)
        elif getattr(shape, "has_chart", False) and shape.has_chart:
            yield from _chart_blocks(shape.chart)
        elif shape.has_text_frame:
            text = _frame_text(shape.text_frame)
            if text:
                yield text
        elif "dgm" in shape._element.xml[:2000]:  # a SmartArt diagram: its text lives in another part
            unread.add("SmartArt diagrams")


def _frame_text(frame) -> str:
    """A text frame's paragraphs, one line each (a line break inside one is a space)."""
    lines = (_line(p.text.replace("\v", " ")) for p in frame.paragraphs)
    return "\n".join(line for line in lines if line)


def _chart_blocks(chart) -> Iterator[str]:
    if chart.has_title and chart.chart_title.has_text_frame:
        title = _frame_text(chart.chart_title.text_frame)
        if title:
            yield title
    for plot in chart.plots:
        categories = [_line(str(c)) for c in plot.categories]
        series = list(plot.series)
        if not series:
            continue
        header = [""] + [_line(s.name or "") for s in series]
        values = [list(s.values) for s in series]
        rows = [header] + [
            [categories[i] if i < len(categories) else ""] + [_number(v[i]) if i < len(v) else "" for v in values]
            for i in range(max(len(v) for v in values))
        ]
        yield _pipe_table(rows)


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


# -- ODT ------------------------------------------------------------------------------------------------

_ODT_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODT_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"


def read_odt(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Headings (`#` lines), paragraphs, lists, sections and tables (pipe tables, covered cells
    empty) of the body in document order; text frames after the paragraph that anchors them; page
    headers and footers with words, once each; footnotes and endnotes at the end."""
    parts = _guard(path, "ODT", max_words, "content.xml", keep=("content.xml", "styles.xml", "mimetype"))
    mimetype = parts.get("mimetype", b"")[:100].strip()
    if mimetype and not mimetype.startswith(b"application/vnd.oasis.opendocument.text"):
        raise DocumentError(path, f"not an OpenDocument text (its mimetype is {mimetype.decode('ascii', 'replace')!r})")
    content = _parse_xml(path, "ODT", "content.xml", parts["content.xml"])
    styles = _parse_xml(path, "ODT", "styles.xml", parts["styles.xml"]) if "styles.xml" in parts else None
    reader = _OdtReader()
    body = [
        el
        for el in content.iter()
        if _local(el.tag) == "text" and el.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:office")
    ]
    headers, footers = reader.furniture(styles) if styles is not None else ([], [])
    main = itertools.chain.from_iterable(reader.blocks(el) for el in body[:1])
    text = _collect(path, max_words, itertools.chain(headers, main, footers, reader.notes()))
    if not text.strip():
        raise DocumentError(path, "ODT has no text")
    return text


class _OdtReader:
    """Walks ODF text elements; footnotes met on the way are kept for the end."""

    def __init__(self):
        self.footnotes: list[str] = []

    def notes(self) -> Iterator[str]:
        yield from self.footnotes

    def furniture(self, styles: ElementTree.Element) -> tuple[list[str], list[str]]:
        seen: set[str] = set()
        found: tuple[list[str], list[str]] = ([], [])
        for el in styles.iter():
            name = _local(el.tag)
            side = 0 if name.startswith("header") else 1 if name.startswith("footer") else None
            if side is None or not el.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:style"):
                continue
            for block in self.blocks(el):
                if block not in seen and re.search(r"[^\W\d_]", block):
                    seen.add(block)
                    found[side].append(block)
        return found

    def blocks(self, element: ElementTree.Element) -> Iterator[str]:
        for child in element:
            name = _local(child.tag)
            if name in ("p", "h"):
                parts: list[str] = []
                frames: list[ElementTree.Element] = []
                self._inline(child, parts, frames)
                text = "\n".join(_line(line) for line in "".join(parts).split("\n")).strip()
                if text and name == "h":
                    level = min(max(int(child.get(f"{{{_ODT_TEXT}}}outline-level", "1") or 1), 1), 6)
                    text = f"{'#' * level} {_line(text)}"
                if text:
                    yield text
                for frame in frames:
                    yield from self.blocks(frame)
            elif name == "table":
                table = self._table(child)
                if table:
                    yield table
            elif name in ("tracked-changes", "annotation", "annotation-end", "sequence-decls", "forms"):
                continue  # deleted text, comments, declarations
            else:  # lists, list items, sections, indexes, frames and text boxes: their blocks in order
                yield from self.blocks(child)

    def _inline(self, element: ElementTree.Element, out: list[str], frames: list[ElementTree.Element]) -> None:
        if element.text:
            out.append(element.text)
        for child in element:
            name = _local(child.tag)
            if name == "s":
                out.append(" " * min(int(child.get(f"{{{_ODT_TEXT}}}c", "1") or 1), 100))
            elif name == "tab":
                out.append("\t")
            elif name == "line-break":
                out.append("\n")
            elif name == "note":
                self._note(child, out)
            elif name in ("frame", "text-box"):
                frames.append(child)
            elif name not in ("annotation", "tracked-changes", "bookmark", "reference-mark", "soft-page-break"):
                self._inline(child, out, frames)
            if child.tail:
                out.append(child.tail)

    def _note(self, note: ElementTree.Element, out: list[str]) -> None:
        citation = next((el for el in note if _local(el.tag) == "note-citation"), None)
        mark = _line("".join(citation.itertext())) if citation is not None else str(len(self.footnotes) + 1)
        out.append(f"[^{mark}]")
        body = next((el for el in note if _local(el.tag) == "note-body"), None)
        if body is not None:
            text = " ".join(map(_unheaded, self.blocks(body)))
            if text:
                self.footnotes.append(f"[^{mark}] {text}")

    def _table(self, table: ElementTree.Element) -> str:
        rows: list[list[str]] = []
        for row in self._rows(table):
            cells: list[str] = []
            for cell in row:
                name = _local(cell.tag)
                if name not in ("table-cell", "covered-table-cell"):
                    continue
                text = "" if name == "covered-table-cell" else _line(" ".join(map(_unheaded, self.blocks(cell))))
                repeat = _repeat(cell, "number-columns-repeated")
                cells.extend([text.replace("|", "/")] * (repeat if text else min(repeat, 1)))
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                rows.extend([cells] * _repeat(row, "number-rows-repeated"))
        return _pipe_table(rows) if rows else ""

    def _rows(self, element: ElementTree.Element) -> Iterator[ElementTree.Element]:
        for child in element:
            name = _local(child.tag)
            if name == "table-row":
                yield child
            elif name in ("table-header-rows", "table-rows", "table-row-group"):
                yield from self._rows(child)


def _unheaded(block: str) -> str:
    return _HEADING.sub("", block)


_HEADING = re.compile(r"^#{1,6} ")


def _repeat(element: ElementTree.Element, attribute: str) -> int:
    try:
        n = int(element.get(f"{{{_ODT_TABLE}}}{attribute}", "1"))
    except ValueError:
        return 1
    return min(max(n, 1), MAX_REPEAT)
