"""Read PowerPoint (.pptx) and OpenDocument text (.odt) files into paragraphs and pipe tables.

Both are zip archives opened through the zip guard of `formats.py` (not a zip, corrupt, encrypted,
declared or actual bombs, entity declarations, millions of elements: each a `DocumentError`).
.pptx is read with python-pptx; .odt by walking its content.xml here (hand-written: odfpy, the
maintained reader, builds an object per element and renders no tables; bench/README.md compares them).
"""

from __future__ import annotations

import io
import itertools
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from ..alt_text import image_line
from ..formats import (
    _local,
    _parse_xml,
    _pipe_table,
    _too_long,
    guard_archive,
)
from ..limits import DocumentError
from .charts import chart_blocks
from .charts import line as _line
from .mend import mended_copy, part_label

_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
MAX_REPEAT = 100  # an ODF row or cell "repeated" more often is padding (a sheet's million empty rows), not text


def _collect(path: Path, max_words: int, blocks: Iterator[str]) -> str:
    out: list[str] = []
    words = 0
    for block in blocks:
        words += len(block.split())
        if words > max_words:
            raise _too_long(path, max_words)
        out.append(block)
    return "\n\n".join(out)


# -- PPTX -----------------------------------------------------------------------------------------------


def read_pptx(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Slides in order, each a `## Slide N: title` heading and its shapes top to bottom, left to
    right (text, tables as pipe tables, charts as tables of their series, pictures' alternative
    text as `[image: ...]` lines), then the speaker notes."""
    guard_archive(path, "PPTX", "a PowerPoint file", max_words, "[Content_Types].xml")
    skipped: list[str] = []  # the parts (a slide, a shape) that could not be read: the rest is kept
    try:
        presentation = _open_pptx(path)
    except DocumentError as e:  # python-pptx parses every part on opening: a broken side part is emptied
        mended = mended_copy(path, "ppt/presentation.xml") if "XMLSyntaxError" in e.reason else None
        if mended is None:
            raise
        skipped += [f"part '{part_label(name)}' not read (not well-formed XML)" for name in mended[1]]
        presentation = _open_pptx(path, mended[0])
    unread: set[str] = set()
    try:
        text = _collect(path, max_words, _pptx_blocks(presentation, unread, skipped))
    except DocumentError:
        raise
    except _PART_ERRORS as e:  # the presentation's list of slides itself
        raise DocumentError(path, f"corrupt PPTX ({type(e).__name__}: {str(e)[:200]})") from None
    if notes is not None:
        notes.extend(f"{what} not read (their text, if any, is not indexed)" for what in sorted(unread))
        notes.extend(skipped)
    if not text.strip():
        raise DocumentError(path, "PPTX has no text on its slides")
    return text


def _open_pptx(path: Path, copy: io.BytesIO | None = None):
    import pptx
    from lxml.etree import LxmlError
    from pptx.exc import PythonPptxError

    try:
        return pptx.Presentation(copy if copy is not None else str(path))
    except KeyError as e:
        raise DocumentError(path, f"corrupt PPTX: missing part {e}") from None
    except ValueError as e:
        raise DocumentError(path, f"not a PowerPoint file ({str(e)[:200]})") from None
    except (PythonPptxError, LxmlError, zipfile.BadZipFile, OSError, AttributeError, TypeError, IndexError) as e:
        raise DocumentError(path, f"corrupt PPTX ({type(e).__name__}: {str(e)[:200]})") from None


# what python-pptx raises on a part it cannot read (an unsupported chart type, a broken relationship)
# (and python-pptx's own PythonPptxError, such as InvalidXmlError for a slide without its shape tree)
_PART_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    KeyError,
    IndexError,
    AttributeError,
    TypeError,
    NotImplementedError,
)


def _pptx_part_errors() -> tuple[type[Exception], ...]:
    from pptx.exc import PythonPptxError

    return (*_PART_ERRORS, PythonPptxError)


def _pptx_blocks(presentation, unread: set[str], skipped: list[str]) -> Iterator[str]:
    furniture: set[str] = set()  # header and footer texts already given: they repeat on every slide
    for number, slide in enumerate(presentation.slides, 1):
        try:
            blocks = list(_slide_blocks(number, slide, unread, skipped, furniture))
        except DocumentError:
            raise
        except _pptx_part_errors() as e:  # one slide that cannot be read costs that slide, not the file
            skipped.append(f"slide {number} not read ({type(e).__name__}: {str(e)[:200]})")
            continue
        yield from blocks


def _slide_blocks(number: int, slide, unread: set[str], skipped: list[str], furniture: set[str]) -> Iterator[str]:
    title_shape = slide.shapes.title
    title = _line(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
    yield f"## Slide {number}: {title}" if title else f"## Slide {number}"
    skip = title_shape.shape_id if title else None
    yield from _shape_blocks(slide.shapes, skip, unread, furniture, (number, skipped))
    if slide.has_notes_slide:
        notes = slide.notes_slide
        body = notes.notes_text_frame
        text = _frame_text(body) if body is not None else ""
        if text:
            yield f"Notes: {text}"
        yield from _furniture(notes.shapes, furniture)


_FURNITURE = {"hdr": True, "ftr": True, "dt": False, "sldNum": False}  # placeholder type -> worth reading once


def _placeholder_type(shape) -> str | None:
    ph = shape._element.find(f".//{{{_P}}}ph")
    return None if ph is None else ph.get("type", "body")


def _furniture(shapes, seen: set[str]) -> Iterator[str]:
    """Header and footer placeholders' text, each distinct one once (dates and numbers left out)."""
    for shape in shapes:
        if _FURNITURE.get(_placeholder_type(shape) or "") and shape.has_text_frame:
            text = _frame_text(shape.text_frame)
            if text and text not in seen and re.search(r"[^\W\d_]", text):
                seen.add(text)
                yield text


def _reading_order(shape) -> tuple[int, int]:
    return (shape.top or 0, shape.left or 0)


def _shape_blocks(
    shapes, skip: int | None, unread: set[str], furniture: set[str], slide: tuple[int, list[str]]
) -> Iterator[str]:
    for shape in sorted(shapes, key=_reading_order):
        if skip is not None and shape.shape_id == skip:
            continue
        try:
            blocks = list(_one_shape(shape, unread, furniture, slide))
        except DocumentError:
            raise
        except _pptx_part_errors() as e:  # one shape that cannot be read costs that shape, not the slide
            name = getattr(shape, "name", "") or "?"
            slide[1].append(f"slide {slide[0]}: shape '{name}' not read ({type(e).__name__}: {str(e)[:200]})")
            continue
        yield from blocks


def _one_shape(shape, unread: set[str], furniture: set[str], slide: tuple[int, list[str]]) -> Iterator[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    kind = _placeholder_type(shape)
    if kind in _FURNITURE:
        yield from _furniture([shape], furniture)
    elif shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        yield from _shape_blocks(shape.shapes, None, unread, furniture, slide)
    elif getattr(shape, "has_table", False) and shape.has_table:
        rows = [
            ["" if cell.is_spanned else _line(cell.text).replace("|", "/") for cell in row.cells]
            for row in shape.table.rows
        ]
        rows = [r for r in rows if any(r)]
        if rows:
            yield _pipe_table(rows)
    elif getattr(shape, "has_chart", False) and shape.has_chart:
        yield from chart_blocks(shape.chart)
    elif _local(shape._element.tag) == "pic":  # a picture: its alternative text, if it says something
        properties = shape._element.find(f".//{{{_P}}}cNvPr")
        line = "" if properties is None else image_line(properties.get("descr"), properties.get("title"))
        if line:
            yield line
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


# -- ODT ------------------------------------------------------------------------------------------------

_ODT_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODT_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_ODT_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"


def read_odt(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Headings (`#` lines), paragraphs, lists, sections and tables (pipe tables, covered cells
    empty) of the body in document order; text frames after the paragraph that anchors them; page
    headers and footers with words, once each; footnotes and endnotes at the end."""
    parts = guard_archive(
        path, "ODT", "an OpenDocument text", max_words, "content.xml", keep=("content.xml", "styles.xml", "mimetype")
    )
    mimetype = parts.get("mimetype", b"")[:100].strip()
    if mimetype and not mimetype.startswith(b"application/vnd.oasis.opendocument.text"):
        raise DocumentError(path, f"not an OpenDocument text (its mimetype is {mimetype.decode('ascii', 'replace')!r})")
    content = _parse_xml(path, "ODT", "content.xml", parts["content.xml"])
    reader = _OdtReader(path, parts)
    try:
        styles = _parse_xml(path, "ODT", "styles.xml", parts["styles.xml"]) if "styles.xml" in parts else None
    except DocumentError as e:  # the styles hold only the page headers and footers: the body is read
        reader.failed.append(f"page headers and footers not read ({e.reason.split(': ', 1)[-1]})")
        styles = None
    body = [
        el
        for el in content.iter()
        if _local(el.tag) == "text" and el.tag.startswith("{urn:oasis:names:tc:opendocument:xmlns:office")
    ]
    headers, footers = reader.furniture(styles) if styles is not None else ([], [])
    main = itertools.chain.from_iterable(reader.blocks(el) for el in body[:1])
    text = _collect(path, max_words, itertools.chain(headers, main, footers, reader.notes()))
    if notes is not None and reader.objects:
        notes.append(f"{reader.objects} embedded object(s) (images, OLE objects) not read")
    if notes is not None:
        notes.extend(reader.failed)
    if not text.strip():
        raise DocumentError(path, "ODT has no text")
    return text


class _OdtReader:
    """Walks ODF text elements; footnotes met on the way are kept for the end."""

    def __init__(self, path: Path | None = None, parts: dict[str, bytes] | None = None):
        self.path, self.parts = path, parts or {}
        self.opened: set[str] = set()  # embedded objects already read (one may be drawn twice)
        self.footnotes: list[str] = []
        self.comments: list[str] = []
        self.objects = 0
        self.failed: list[str] = []  # the parts that could not be read, with why: the rest is kept

    def notes(self) -> Iterator[str]:
        yield from self.footnotes
        yield from self.comments

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
                    yield from self._image(frame) if _is_picture(frame) else self.blocks(frame)
            elif name == "table":
                table = self._table(child)
                if table:
                    yield table
            elif child.tag == f"{_ODT_DRAW}object":
                yield from self._embedded(child)
            elif _is_picture(child):
                yield from self._image(child)
            elif name in ("title", "desc") and child.tag.startswith(_SVG):  # a shape's alt text
                text = _line("".join(child.itertext()))
                if text:
                    yield text
            elif name in ("tracked-changes", "annotation", "annotation-end", "sequence-decls", "forms"):
                continue  # deleted text, comments, declarations
            else:  # lists, list items, sections, indexes, frames and text boxes: their blocks in order
                yield from self.blocks(child)

    def _image(self, frame: ElementTree.Element) -> Iterator[str]:
        """A picture's frame: its description and title as one `[image: ...]` line (or nothing),
        then whatever else the frame holds."""
        alt = {_local(el.tag): _line("".join(el.itertext())) for el in frame if el.tag.startswith(_SVG)}
        line = image_line(alt.get("desc"), alt.get("title"))
        if line:
            yield line
        rest = ElementTree.Element(frame.tag)
        rest.extend(child for child in frame if not child.tag.startswith(_SVG))
        yield from self.blocks(rest)

    def _embedded(self, obj: ElementTree.Element) -> Iterator[str]:
        """An embedded ODF object's text (a spreadsheet's tables, a chart's titles and labels): its
        content.xml, read as the document's is; a formula's source. Images and OLE objects are counted."""
        href = obj.get("{http://www.w3.org/1999/xlink}href", "").removeprefix("./").strip("/")
        name = f"{href}/content.xml"
        if name not in self.parts or name in self.opened or self.path is None:
            self.objects += 1
            return
        self.opened.add(name)
        try:
            root = _parse_xml(self.path, "ODT", name, self.parts[name])
        except DocumentError as e:  # one embedded object that is not XML costs that object
            self.failed.append(f"embedded object '{href}' not read ({e.reason.split(': ', 1)[-1]})")
            return
        bodies = [el for el in root if _local(el.tag) == "body"]
        if _local(root.tag) == "math":  # a formula: its source as typed (StarMath), else its symbols
            source = [el for el in root.iter() if _local(el.tag) == "annotation"]
            text = _line("".join((source[0] if source else root).itertext()))
            if text:
                yield text
            return
        if not bodies:  # another kind of object
            self.objects += 1
            return
        for body in bodies:
            yield from self.blocks(body)

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
            elif child.tag.startswith(_ODT_DRAW):  # frames, text boxes, shapes: their paragraphs as blocks
                frames.append(child)
            elif name == "annotation":  # a comment: kept for the end, as footnotes are
                text = " ".join(map(_unheaded, self.blocks(child)))
                if text:
                    self.comments.append(f"[comment] {text}")
            elif name not in ("tracked-changes", "bookmark", "reference-mark", "soft-page-break"):
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


def _is_picture(element: ElementTree.Element) -> bool:
    """A frame holding an image (not an embedded object's replacement picture)."""
    return (
        element.tag == f"{_ODT_DRAW}frame"
        and element.find(f"{_ODT_DRAW}image") is not None
        and element.find(f"{_ODT_DRAW}object") is None
    )


def _unheaded(block: str) -> str:
    return _HEADING.sub("", block)


_HEADING = re.compile(r"^#{1,6} ")


def _repeat(element: ElementTree.Element, attribute: str) -> int:
    try:
        n = int(element.get(f"{{{_ODT_TABLE}}}{attribute}", "1"))
    except ValueError:
        return 1
    return min(max(n, 1), MAX_REPEAT)
