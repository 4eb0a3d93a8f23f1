"""Read .docx and .epub files into paragraph text: headings as their own paragraphs, tables as
markdown pipe tables (one `is_table` paragraph each), in document order.

Both formats are zip archives, so both are opened through one guard: not a zip, a corrupt zip,
an encrypted one, missing parts and zip bombs each raise `DocumentError` with the reason.
"""

from __future__ import annotations

import contextlib
import itertools
import posixpath
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from .html_text import html_to_text
from .loaders import DocumentError

ZIP_BASE_BYTES = 32 << 20  # room for images, fonts and styles, whatever the word limit
ZIP_BYTES_PER_WORD = 100  # generous: Word's XML with formatting on every run spends tens of bytes a word
MAX_ZIP_MEMBERS = 20_000
DOCX_BASE_PARAGRAPHS = 50_000
DOCX_BASE_ELEMENTS = 1_000_000
DOCX_ELEMENTS_PER_WORD = 10
MAX_PACKAGE_BYTES = 8 << 20  # an EPUB's package document (its manifest and spine) is parsed whole
MAX_SPINE_ITEMS = 10_000  # a book of 10,000 chapters is already odd; a million (49 KB zipped) is a bomb
_READ_BLOCK = 1 << 20
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
_HTML_TYPES = {"application/xhtml+xml", "text/html"}
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def zip_byte_limit(max_words: int) -> int:
    """The most bytes an archive may decompress to: tied to the word limit, so raising
    LONGQA_MAX_WORDS for a long book raises it too."""
    return ZIP_BASE_BYTES + ZIP_BYTES_PER_WORD * max_words


# -- the zip guard --------------------------------------------------------------------------------


def open_zip(path: Path, kind: str) -> zipfile.ZipFile:
    """The archive, or a `DocumentError` saying why it is not a readable one."""
    with path.open("rb") as f:
        head = f.read(8)
    if head.startswith(_OLE_MAGIC):
        raise DocumentError(
            path,
            f"not a {kind} zip but an OLE compound file: a password-protected (encrypted) Office file "
            "or an old binary format renamed; save it without a password in the modern format",
        )
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        raise DocumentError(path, f"not a valid {kind} (not a zip archive: {e})") from None
    members = archive.infolist()
    if len(members) > MAX_ZIP_MEMBERS:
        archive.close()
        raise DocumentError(path, f"{kind} has {len(members):,} zip members, more than {MAX_ZIP_MEMBERS:,} (refused)")
    if any(info.flag_bits & 0x1 for info in members):
        archive.close()
        raise DocumentError(path, f"{kind} is encrypted (password-protected zip entries)")
    return archive


def refuse_declared_bomb(path: Path, archive: zipfile.ZipFile, kind: str, limit: int) -> None:
    """Refuse an archive whose members claim more bytes than the limit. zipfile stops each member
    at its declared size (a member that lies fails its CRC), so this bounds what a library that
    reads the whole package (python-docx) decompresses."""
    declared = sum(info.file_size for info in archive.infolist())
    if declared > limit:
        raise DocumentError(path, _bomb_reason(kind, f"declares {declared:,} bytes uncompressed", limit))


def _bomb_reason(kind: str, what: str, limit: int) -> str:
    return (
        f"{kind} {what}, over the limit of {limit:,} bytes (a zip bomb?); "
        "raise LONGQA_MAX_WORDS to allow a longer document"
    )


class _Budget:
    """Decompressed bytes left to read from one archive."""

    def __init__(self, path: Path, kind: str, limit: int):
        self.path, self.kind, self.limit, self.left = path, kind, limit, limit

    def read(
        self, archive: zipfile.ZipFile, name: str, keep: bool = True, feed: Callable[[bytes], None] | None = None
    ) -> bytes:
        """One member, read in blocks so a bomb is stopped at the limit, not after it is inflated
        (keep=False: only check that it reads, and count it; `feed` is given each block)."""
        try:
            info = archive.getinfo(name)
        except KeyError:
            raise DocumentError(self.path, f"corrupt {self.kind}: missing part '{name}'") from None
        blocks: list[bytes] = []
        try:
            with archive.open(info) as member:
                while block := member.read(_READ_BLOCK):
                    self.left -= len(block)
                    if self.left < 0:
                        raise DocumentError(
                            self.path, _bomb_reason(self.kind, "decompresses past its limit", self.limit)
                        )
                    if keep:
                        blocks.append(block)
                    if feed is not None:
                        feed(block)
        except DocumentError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:  # bad CRC, truncated, bad data
            raise DocumentError(self.path, f"corrupt {self.kind}: part '{name}' cannot be read ({e})") from None
        except NotImplementedError as e:  # a compression method zipfile lacks
            raise DocumentError(self.path, f"corrupt {self.kind}: part '{name}' ({e})") from None
        return b"".join(blocks)


def _parse_xml(path: Path, kind: str, name: str, data: bytes) -> ElementTree.Element:
    # entity declarations have no place in these small parts, and expand into billion-laughs bombs
    if b"<!ENTITY" in data:
        raise DocumentError(path, f"corrupt {kind}: '{name}' declares XML entities (refused)")
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as e:
        raise DocumentError(path, f"corrupt {kind}: '{name}' is not well-formed XML ({e})") from None


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _too_long(path: Path, max_words: int) -> DocumentError:
    return DocumentError(path, f"more than {max_words:,} words; raise LONGQA_MAX_WORDS to allow it")


def _pipe_table(rows: list[list[str]]) -> str:
    """Rows of cell texts as a markdown pipe table (header rule after the first row), as
    `html_to_text` writes an HTML table."""
    width = max(len(r) for r in rows)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    if len(lines) > 1:
        lines.insert(1, "|" + "---|" * width)
    return "\n".join(lines)


# -- DOCX -------------------------------------------------------------------------------------------


def read_docx(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Paragraphs, headings (as `#` lines) and tables (as pipe tables) of the main document, in
    document order; text boxes (DrawingML and VML) after the paragraph that anchors them; page
    headers and footers that carry words (once each, headers first, footers last); footnotes and
    endnotes at the end. What is not read (charts, SmartArt, embedded objects) is added to `notes`."""
    limit = zip_byte_limit(max_words)
    with open_zip(path, "DOCX") as archive:
        if "[Content_Types].xml" not in archive.namelist():
            raise DocumentError(path, "not a Word document (no [Content_Types].xml in the zip)")
        refuse_declared_bomb(path, archive, "DOCX", limit)
        # python-docx inflates every part; reading each once first turns a bad CRC or bad deflate
        # data into a reason naming the part, and holds the bytes read to the limit
        budget = _Budget(path, "DOCX", limit)
        counter = ElementCounter(path, max_words, "DOCX")
        for name in archive.namelist():
            is_xml = name.lower().endswith((".xml", ".rels"))
            budget.read(archive, name, keep=False, feed=counter.part(name) if is_xml else None)
    document = _open_docx(path)
    blocks: list[str] = []
    words = 0
    try:
        headers, footers = _docx_furniture(document)
        body = _docx_blocks(document.element.body, document._body)
        for block in itertools.chain(headers, body, footers, _docx_notes(document)):
            words += len(block.split())
            if words > max_words:
                raise _too_long(path, max_words)
            blocks.append(block)
        if notes is not None:
            notes.extend(_docx_unread(document))
    except DocumentError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError) as e:  # malformed XML python-docx trips on
        raise DocumentError(path, f"corrupt DOCX ({type(e).__name__}: {str(e)[:200]})") from None
    return "\n\n".join(blocks)


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


_NOTE_PARTS = (("footnote", "/word/footnotes.xml"), ("endnote", "/word/endnotes.xml"))


def _docx_notes(document) -> Iterator[str]:
    """Footnotes and endnotes, as `[^N]` paragraphs (python-docx does not read them)."""
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
                yield f"[^{note.get(_W + 'id', '')}] {text}"


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_UNREAD_PARTS = {
    "/word/charts/": "charts",
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


def docx_element_limits(max_words: int) -> tuple[int, int]:
    """The most paragraphs and XML elements a .docx may hold: tied to the word limit, generous
    for Word's markup (a real document has a paragraph every few dozen words, and a handful of
    elements a word), far below a bomb's millions of empty paragraphs."""
    return DOCX_BASE_PARAGRAPHS + max_words // 4, DOCX_BASE_ELEMENTS + DOCX_ELEMENTS_PER_WORD * max_words


class ElementCounter:
    """Counts the elements and paragraphs of an Office file's XML parts as they inflate, with expat
    (which builds no tree), so a part of millions of empty paragraphs is refused before
    python-docx builds its whole tree. A part expat cannot parse is left to python-docx to name."""

    def __init__(self, path: Path, max_words: int, kind: str):
        self.path, self.kind = path, kind
        self.max_paragraphs, self.max_elements = docx_element_limits(max_words)
        self.paragraphs = self.elements = 0

    def part(self, name: str) -> Callable[[bytes], None]:
        from xml.parsers import expat

        parser = expat.ParserCreate(namespace_separator=" ")
        parser.StartElementHandler = self._start
        parser.EntityDeclHandler = self._entity
        broken = False

        def feed(block: bytes) -> None:
            nonlocal broken
            if not broken:
                try:
                    parser.Parse(block, False)
                except expat.ExpatError:
                    broken = True

        return feed

    def _start(self, tag: str, _attributes: object) -> None:
        self.elements += 1
        if tag.endswith(" p") or tag == "p":
            self.paragraphs += 1
            if self.paragraphs > self.max_paragraphs:
                raise self._refused("paragraphs", self.max_paragraphs)
        if self.elements > self.max_elements:
            raise self._refused("XML elements", self.max_elements)

    def _entity(self, *_args: object) -> None:
        raise DocumentError(self.path, f"corrupt {self.kind}: a part declares XML entities (refused)")

    def _refused(self, what: str, limit: int) -> DocumentError:
        return DocumentError(
            self.path,
            f"too many {what} in the {self.kind} (more than {limit:,}: a bomb?); "
            "raise LONGQA_MAX_WORDS to allow a longer document",
        )


def _open_docx(path: Path):
    import docx
    from docx.opc.exceptions import OpcError
    from lxml.etree import LxmlError

    try:
        return docx.Document(str(path))
    except KeyError as e:  # a part named by a relationship is not in the zip
        raise DocumentError(path, f"corrupt DOCX: missing part {e}") from None
    except ValueError as e:  # e.g. "file '...' is not a Word file, content type is ..."
        raise DocumentError(path, f"not a Word document ({str(e)[:200]})") from None
    except (OpcError, LxmlError, zipfile.BadZipFile, EOFError, OSError, AttributeError, TypeError, IndexError) as e:
        # python-docx trusts the package's structure: on a malformed part it fails wherever it looks
        raise DocumentError(path, f"corrupt DOCX ({type(e).__name__}: {str(e)[:200]})") from None


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
    insertions too, which python-docx's `Paragraph.text` skips in part), and its text boxes."""
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


# -- EPUB -------------------------------------------------------------------------------------------
# Read with the standard library: ebooklib, the usual reader, is AGPL-3.0, which an Apache-2.0
# project cannot depend on, and no permissive, maintained EPUB reader was found on PyPI.


def read_epub(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """The chapters in spine (reading) order, each XHTML file rendered by `html_to_text`."""
    with open_zip(path, "EPUB") as archive:
        budget = _Budget(path, "EPUB", zip_byte_limit(max_words))
        _check_mimetype(path, archive, budget)
        opf_name = _rootfile(path, archive, budget)
        _refuse_large_package(path, archive, opf_name)
        chapters = _spine(path, opf_name, _parse_xml(path, "EPUB", opf_name, budget.read(archive, opf_name)))
        _refuse_drm(path, archive, budget, {name for name, _ in chapters})
        texts: list[str] = []
        words = 0
        for name, _media_type in chapters:
            text = html_to_text(_decode_chapter(path, name, budget.read(archive, name)))
            words += len(text.split())
            if words > max_words:
                raise _too_long(path, max_words)
            if text.strip():
                texts.append(text)
    if not texts:
        raise DocumentError(path, "EPUB has no text in its chapters")
    return "\n\n".join(texts)


def _check_mimetype(path: Path, archive: zipfile.ZipFile, budget: _Budget) -> None:
    if "mimetype" not in archive.namelist():
        return  # required by the spec, but readers open books without it; container.xml decides
    mimetype = budget.read(archive, "mimetype")[:100].strip()
    if mimetype != b"application/epub+zip":
        raise DocumentError(path, f"not an EPUB (its mimetype is {mimetype.decode('ascii', 'replace')!r})")


def _rootfile(path: Path, archive: zipfile.ZipFile, budget: _Budget) -> str:
    """The package document's path, from META-INF/container.xml."""
    name = "META-INF/container.xml"
    if name not in archive.namelist():
        raise DocumentError(path, f"not an EPUB (no {name} in the zip)")
    root = _parse_xml(path, "EPUB", name, budget.read(archive, name))
    for el in root.iter():
        if _local(el.tag) == "rootfile" and el.get("full-path", "").strip("/"):
            return el.get("full-path", "").strip("/")  # some writers make it absolute
    raise DocumentError(path, f"corrupt EPUB: {name} names no package document (rootfile)")


def _refuse_large_package(path: Path, archive: zipfile.ZipFile, opf_name: str) -> None:
    """zipfile stops a member at its declared size (a member that lies fails its CRC), so the
    declared size bounds what parsing the package document costs."""
    with contextlib.suppress(KeyError):  # a missing part: the budget's read names it
        size = archive.getinfo(opf_name).file_size
        if size > MAX_PACKAGE_BYTES:
            raise DocumentError(
                path,
                f"too large an EPUB package document ('{opf_name}': {size:,} bytes > {MAX_PACKAGE_BYTES:,})",
            )


def _spine(path: Path, opf_name: str, opf: ElementTree.Element) -> list[tuple[str, str]]:
    """(zip member, media type) of each spine item that is a text document, in reading order."""
    base = posixpath.dirname(opf_name)
    manifest: dict[str, tuple[str, str]] = {}
    for el in opf.iter():
        if _local(el.tag) == "item" and el.get("id") and el.get("href"):
            href = unquote(el.get("href", "").split("#", 1)[0])
            name = posixpath.normpath(posixpath.join(base, href)).lstrip("/")
            manifest[el.get("id", "")] = (name, el.get("media-type", ""))
    idrefs = [el.get("idref", "") for el in opf.iter() if _local(el.tag) == "itemref"]
    if len(idrefs) > MAX_SPINE_ITEMS:
        raise DocumentError(path, f"too many spine items in the EPUB ({len(idrefs):,} > {MAX_SPINE_ITEMS:,})")
    if not idrefs:
        raise DocumentError(path, f"corrupt EPUB: the package document '{opf_name}' has no spine")
    chapters = []
    for idref in idrefs:
        if idref not in manifest:
            raise DocumentError(path, f"corrupt EPUB: spine item '{idref}' is not in the manifest")
        name, media_type = manifest[idref]
        if media_type in _HTML_TYPES or name.lower().endswith((".xhtml", ".html", ".htm")):
            chapters.append((name, media_type))
    chapters = list(dict.fromkeys(chapters))  # a chapter the spine names again is read once
    if not chapters:
        raise DocumentError(path, "EPUB's spine holds no XHTML chapters")
    return chapters


def _refuse_drm(path: Path, archive: zipfile.ZipFile, budget: _Budget, chapters: set[str]) -> None:
    """META-INF/encryption.xml lists encrypted resources; fonts may be obfuscated in a free book,
    but an encrypted chapter means DRM, which cannot be read."""
    name = "META-INF/encryption.xml"
    if name not in archive.namelist():
        return
    root = _parse_xml(path, "EPUB", name, budget.read(archive, name))
    for data in (el for el in root.iter() if _local(el.tag) == "EncryptedData"):
        algorithms = {el.get("Algorithm", "") for el in data.iter() if _local(el.tag) == "EncryptionMethod"}
        uris = {unquote(el.get("URI", "")) for el in data.iter() if _local(el.tag) == "CipherReference"}
        if algorithms - _FONT_OBFUSCATION and uris & chapters:
            raise DocumentError(path, "EPUB is DRM-protected (its chapters are encrypted); it cannot be read")


def _decode_chapter(path: Path, name: str, data: bytes) -> str:
    from bs4 import UnicodeDammit

    if not data.strip():
        return ""
    if b"\x00" in data[:8192] and not data.startswith(_UTF16_BOMS):  # ciphertext, not markup
        raise DocumentError(path, f"EPUB chapter '{name}' is not text (encrypted or binary)")
    markup = UnicodeDammit(data, is_html=True).unicode_markup
    if markup is None:
        raise DocumentError(path, f"EPUB chapter '{name}' has undecodable bytes")
    return markup
