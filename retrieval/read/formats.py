"""The zip guard every zip-based format is opened through (.docx, .pptx, .xlsx, .odt, .epub), the
streaming count of an Office file's XML elements, paragraphs and cells, and the .epub reader.

Not a zip, a corrupt zip, an encrypted one, missing parts, zip bombs and XML bombs each raise
`DocumentError` with the reason. The readers: `word.py` (.docx), `office.py` (.pptx, .odt),
`sheets.py` (.xlsx, .xls, .csv), `read_epub` here (chapters in spine order through `html_to_text`).
"""

from __future__ import annotations

import contextlib
import posixpath
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote
from xml.etree import ElementTree

from defusedxml import ElementTree as defused
from defusedxml.common import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden

from .html_text import html_to_text
from .limits import DocumentError, read_text_limit, too_much_text

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


def guard_archive(
    path: Path,
    kind: str,
    label: str,
    max_words: int,
    required: str,
    keep: tuple[str, ...] = (),
    max_cells: int | None = None,
) -> dict[str, bytes]:
    """Open an Office archive through the zip guard and read every part once under the byte budget,
    XML parts counted by a streaming parser (elements, paragraphs, and a sheet's cells when
    `max_cells` is given), before a library inflates the package itself: a bad CRC or bad deflate
    data becomes a reason naming the part, and the bytes read are held to the limit. Returns the
    parts named in `keep` (and every `*/content.xml` when `content.xml` is kept: ODF's embedded objects)."""
    limit = zip_byte_limit(max_words)
    kept: dict[str, bytes] = {}
    with open_zip(path, kind) as archive:
        if required not in archive.namelist():
            raise DocumentError(path, f"not {label} (no {required} in the zip)")
        refuse_declared_bomb(path, archive, kind, limit)
        budget = _Budget(path, kind, limit)
        counter = ElementCounter(path, max_words, kind, max_cells=max_cells)
        for name in archive.namelist():
            is_xml = name.lower().endswith((".xml", ".rels"))
            wanted = name in keep or (name.endswith("/content.xml") and "content.xml" in keep)
            data = budget.read(archive, name, keep=wanted, feed=counter.part(name) if is_xml else None)
            if wanted:
                kept[name] = data
    return kept


def _parse_xml(path: Path, kind: str, name: str, data: bytes) -> ElementTree.Element:
    """A package part parsed with no document type at all (defusedxml, `forbid_dtd`): entity declarations have no
    place in these small parts and expand into billion-laughs bombs; read by the parser, not by a byte search
    (seen: a UTF-16 part's `<!ENTITY` passed the search and was expanded)."""
    try:
        return defused.fromstring(data, forbid_dtd=True)
    except (DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden):
        why = f"corrupt {kind}: '{name}' declares a document type or XML entities (refused)"
        raise DocumentError(path, why) from None
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


# -- counting an Office file's XML as it inflates ------------------------------------------------


def docx_element_limits(max_words: int) -> tuple[int, int]:
    """The most paragraphs and XML elements a .docx may hold: tied to the word limit, generous
    for Word's markup (a real document has a paragraph every few dozen words, and a handful of
    elements a word), far below a bomb's millions of empty paragraphs."""
    return DOCX_BASE_PARAGRAPHS + max_words // 4, DOCX_BASE_ELEMENTS + DOCX_ELEMENTS_PER_WORD * max_words


class ElementCounter:
    """Counts the elements and paragraphs of an Office file's XML parts as they inflate, with expat
    (which builds no tree), so a part of millions of empty paragraphs is refused before
    python-docx builds its whole tree. A part expat cannot parse is left to python-docx to name."""

    def __init__(self, path: Path, max_words: int, kind: str, max_cells: int | None = None):
        self.path, self.kind, self.max_cells = path, kind, max_cells
        self.max_paragraphs, self.max_elements = docx_element_limits(max_words)
        self.paragraphs = self.elements = self.cells = 0
        self.row = self.column = self.max_row = self.max_column = 0
        self.chars, self.max_chars = 0, read_text_limit.get()  # one 200 MB cell is refused before calamine holds it

    def part(self, name: str) -> Callable[[bytes], None]:
        """A feed for one XML part's inflated bytes: it counts as it parses (and stops parsing a part expat refuses)."""
        from xml.parsers import expat

        self.row = self.column = self.max_row = self.max_column = 0  # a sheet's extent is its own

        parser = expat.ParserCreate(namespace_separator=" ")
        parser.StartElementHandler = self._start
        parser.EntityDeclHandler = self._entity
        parser.CharacterDataHandler = self._text
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
        elif self.max_cells is not None and (tag.endswith(" c") or tag == "c"):  # a spreadsheet cell
            self.cells += 1
            if self.cells > self.max_cells:
                raise self._refused("cells", self.max_cells)
            self._extent(_attributes)
        elif self.max_cells is not None and (tag.endswith(" row") or tag == "row"):
            self.column = 0
            self.row = _cell_row(_attributes, self.row + 1)
        if self.elements > self.max_elements:
            raise self._refused("XML elements", self.max_elements)

    def _extent(self, attributes: object) -> None:
        """A sheet is read into a dense grid from A1 to its last row and column: two cells, at A1
        and XFD1048576, make seventeen billion. The grid's area is held to the cell limit."""
        ref = attributes.get("r", "") if isinstance(attributes, dict) else ""
        letters = ref.rstrip("0123456789")
        column = 0
        for ch in letters.upper():
            column = column * 26 + (ord(ch) - 64)
        self.column = column if 0 < column <= 16_384 else self.column + 1
        self.row = _cell_row({"r": ref[len(letters) :]}, self.row) if ref[len(letters) :] else self.row
        self.max_row, self.max_column = max(self.max_row, self.row), max(self.max_column, self.column)
        area = self.max_row * self.max_column
        if self.max_cells is not None and area > self.max_cells:
            raise DocumentError(
                self.path,
                f"{self.kind} sheet spans {self.max_row:,} rows x {self.max_column:,} columns, more than "
                f"{self.max_cells:,} cells (a huge or padded sheet?); raise LONGQA_MAX_WORDS to allow a larger one",
            )

    def _text(self, data: str) -> None:
        self.chars += len(data)
        if self.chars > self.max_chars:
            raise DocumentError(self.path, f"{self.kind}: {too_much_text(self.max_chars)}")

    def _entity(self, *_args: object) -> None:
        raise DocumentError(self.path, f"corrupt {self.kind}: a part declares XML entities (refused)")

    def _refused(self, what: str, limit: int) -> DocumentError:
        return DocumentError(
            self.path,
            f"too many {what} in the {self.kind} (more than {limit:,}: a bomb?); "
            "raise LONGQA_MAX_WORDS to allow a longer document",
        )


def _cell_row(attributes: object, default: int) -> int:
    value = attributes.get("r", "") if isinstance(attributes, dict) else ""
    return int(value) if value.isdigit() and 0 < int(value) <= 1_048_576 else default


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
        chapters, others = _spine(path, opf_name, _parse_xml(path, "EPUB", opf_name, budget.read(archive, opf_name)))
        if notes is not None and others:
            notes.append(f"{others} spine item(s) that are not XHTML (images, SVG) not read")
        _refuse_drm(path, archive, budget, {name for name, _ in chapters})
        texts: list[str] = []
        words = 0
        failed: list[str] = []
        for name, _media_type in chapters:
            data = budget.read(archive, name)  # a bomb or a broken zip stops the whole book
            try:
                text = html_to_text(_decode_chapter(path, name, data))
            except DocumentError as e:  # a chapter that is not text costs that chapter
                failed.append(f"{e.reason.removeprefix('EPUB ')}: not read")
                continue
            words += len(text.split())
            if words > max_words:
                raise _too_long(path, max_words)
            if text.strip():
                texts.append(text)
    if notes is not None:
        notes.extend(failed)
    if not texts:
        raise DocumentError(path, f"EPUB has no text in its chapters{f' ({failed[0]})' if failed else ''}")
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


def _spine(path: Path, opf_name: str, opf: ElementTree.Element) -> tuple[list[tuple[str, str]], int]:
    """(zip member, media type) of each spine item that is a text document, in reading order, and
    how many spine items are not."""
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
    others = 0
    for idref in idrefs:
        if idref not in manifest:
            raise DocumentError(path, f"corrupt EPUB: spine item '{idref}' is not in the manifest")
        name, media_type = manifest[idref]
        if media_type in _HTML_TYPES or name.lower().endswith((".xhtml", ".html", ".htm")):
            chapters.append((name, media_type))
        else:
            others += 1
    chapters = list(dict.fromkeys(chapters))  # a chapter the spine names again is read once
    if not chapters:
        raise DocumentError(path, "EPUB's spine holds no XHTML chapters")
    return chapters, others


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
