"""Load .txt, .md, .pdf, .html, .docx, .epub, .pptx, .xlsx, .xls, .csv, .tsv and .odt files (or inline text)
into a `Document` with paragraphs.

Tables stay whole: a markdown pipe table, a block of space/tab-aligned columns, a PDF table
extracted in layout mode and an HTML, DOCX, EPUB, PPTX, ODT, sheet or CSV table (rendered as a pipe
table) each become one paragraph marked `is_table`, so chunking can cut between rows and the context
processor can put a cut table back together. HTML and Markdown's raw HTML are in `html_text.py`, the
DOCX reader in `word.py`, EPUB (and the zip guard) in `formats.py`, PPTX and ODT in `office.py`, XLSX,
XLS and CSV in `sheets.py`, PDF page cleaning in `pdf_text.py`.
"""

from __future__ import annotations

import codecs
import errno
import logging
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from ..documents import Document, Paragraph, content_hash
from .html_text import html_to_text, strip_markdown_html
from .limits import DEFAULT_MAX_TEXT_CHARS, DocumentError, printable_name, read_text_limit, too_much_text
from .ocr import PAGE_BREAK, fill_scanned_pages, scans_refused
from .office.sheets import csv_to_text
from .pdf.pdf_columns import reading_order
from .pdf.pdf_text import clean_pdf_pages
from .pdf.pdf_words import repair_words

log = logging.getLogger(__name__)

SUPPORTED_SUFFIXES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".doc": "doc",  # Word 97-2003 (and its templates, .dot)
    ".dot": "doc",
    ".epub": "epub",
    ".pptx": "pptx",
    ".ppt": "ppt",  # PowerPoint 97-2003 (and its shows and templates)
    ".pps": "ppt",
    ".pot": "ppt",
    ".xlsx": "xlsx",
    ".xls": "xls",
    ".odt": "odt",
    ".csv": "csv",
    ".tsv": "tsv",
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp"), "image"),  # read by OCR (ocr.py)
}
TEXT_KINDS = {"text", "markdown", "csv", "tsv"}  # read by the streaming text reader
DEFAULT_MAX_WORDS = 3_000_000  # ~6 novels; 10M words would take ~30 min to embed on 2 cores
FALLBACK_ENCODING = "cp1252"  # tried first when a file is not UTF-8: the common case, and detectors confuse it
MIN_EVIDENCE_BYTES = 64  # non-ASCII bytes needed before a detected legacy encoding is believed
MAX_CHAOS = 0.2  # charset-normalizer's "mess" above which a decoding is refused as likely mojibake
# C0 controls but tab, newline, form feed and carriage return; DEL; C1 controls
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_READ_BLOCK = 1 << 20
_LIGATURE = re.compile("[\ufb00-\ufb06]")


def clean_text(text: str) -> str:
    """Text safe to index and to send: lone surrogates become U+FFFD, control characters go,
    typographic ligatures (U+FB00-FB06) become their letters and soft hyphens go, so words match."""
    text = _LIGATURE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text).replace("\u00ad", "")
    return _CONTROL.sub("", _LONE_SURROGATE.sub("\ufffd", text))


def load_document(
    path: str | Path, max_words: int = DEFAULT_MAX_WORDS, max_chars: int = DEFAULT_MAX_TEXT_CHARS
) -> Document:
    """Read a file into a Document, refusing (with `DocumentError`) what cannot be read honestly,
    or holds more than `max_words` words or `max_chars` characters of text."""
    limit = read_text_limit.set(max_chars)
    try:
        return _load_document(Path(path), max_words, max_chars)
    except DocumentError:
        raise
    except RuntimeError as e:  # pathlib: "Symlink loop from ..."
        reason = "symlink loop" if "loop" in str(e).lower() else str(e)
        raise DocumentError(printable_name(path), f"cannot be resolved ({reason})") from None
    except OSError as e:  # permission denied, a symlink loop, a file that vanished, an I/O error
        raise DocumentError(printable_name(path), f"cannot be read ({e.strerror or type(e).__name__})") from None
    finally:
        read_text_limit.reset(limit)


def _load_document(path: Path, max_words: int, max_chars: int) -> Document:
    try:
        path.stat()
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise DocumentError(printable_name(path), "cannot be resolved (symlink loop)") from None
        if e.errno == errno.ENOENT:
            reason = "broken symbolic link" if path.is_symlink() else "file not found"
            raise DocumentError(printable_name(path), reason) from None
        raise
    if not path.is_file():
        raise DocumentError(path, "not a regular file")
    kind = SUPPORTED_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise DocumentError(path, f"unsupported file type '{path.suffix or '(none)'}'; supported: {supported}")
    if path.stat().st_size == 0:
        raise DocumentError(path, "file is empty")
    notes: list[str] = []
    ocr_pages: list[int] = []  # the pages whose text OCR read
    if kind == "pdf":
        text, encoding = _read_pdf(path, max_words, notes, ocr_pages), "pdf"
    elif kind in _ARCHIVE_READERS:
        import importlib

        module, function = _ARCHIVE_READERS[kind]
        reader = getattr(importlib.import_module(module, __package__), function)
        text, encoding = reader(path, max_words, notes), kind
    else:
        text, encoding = _read_text_file(path, max_words, max_chars)
        if kind == "html":
            text = html_to_text(text)
        elif kind == "markdown":
            text = strip_markdown_html(text)
        elif kind in ("csv", "tsv"):
            text = csv_to_text(path, text, max_words, tab=kind == "tsv")
    document = document_from_text(text, printable_name(path), encoding, max_words, max_chars)
    document.warnings = notes
    document.ocr_pages = ocr_pages or ([*range(1, text.count("\f") + 2)] if kind == "image" else [])
    return document


# the formats read by a module of their own: kind -> (module, reader(path, max_words, notes) -> text)
_ARCHIVE_READERS = {
    "docx": (".office.word", "read_docx"),
    "epub": (".formats", "read_epub"),
    "pptx": (".office.office", "read_pptx"),
    "doc": (".office.ole_office", "read_doc"),
    "ppt": (".office.ole_office", "read_ppt"),
    "odt": (".office.office", "read_odt"),
    "xlsx": (".office.sheets", "read_xlsx"),
    "xls": (".office.sheets", "read_xls"),
    "image": (".ocr", "read_image"),
}


def document_from_text(
    text: str,
    source: str = "<inline>",
    encoding: str = "utf-8",
    max_words: int = DEFAULT_MAX_WORDS,
    max_chars: int = DEFAULT_MAX_TEXT_CHARS,
) -> Document:
    """Build a Document from text already in memory (used by loaders and for text passed inline)."""
    if len(text) > max_chars:
        raise DocumentError(source, too_much_text(max_chars, len(text)))
    text = clean_text(text.replace("\r\n", "\n").replace("\r", "\n"))
    if not text.strip():
        raise DocumentError(source, "no text content (empty or whitespace only)")
    n_words = len(text.split())
    if n_words > max_words:
        raise DocumentError(
            source, f"{n_words:,} words exceeds the limit of {max_words:,} words (raise LONGQA_MAX_WORDS to allow it)"
        )
    return Document(
        doc_id=content_hash(text), source=source, text=text, paragraphs=split_paragraphs(text), encoding=encoding
    )


def _read_text_file(path: Path, max_words: int, max_chars: int = DEFAULT_MAX_TEXT_CHARS) -> tuple[str, str]:
    """Stream the file in blocks, counting words as we go, so a huge file is refused before it
    is held in memory (and a NUL byte, a binary or sparse file, at the block it is in); then decode
    as UTF-8, else Windows-1252 (logged), else refuse. Linear in the file's size: each block is
    looked at once, however long its runs without spaces. Past `max_chars` characters (counted
    exactly while the bytes are ASCII, else as surely past when over four bytes a character) it stops."""
    blocks: list[bytes] = []
    words = size = 0
    ascii_only = True
    wide = False  # UTF-16/32 text has NUL bytes
    in_word = False  # the previous block ended inside a word: a word split across blocks counts once
    with path.open("rb") as f:
        while block := f.read(_READ_BLOCK):
            if not blocks:
                _refuse_binary(path, block)
                wide = block.startswith(tuple(bom for bom, enc in _BOMS if enc != "utf-8-sig"))
            if not wide and (nul := block.find(0)) >= 0:
                offset = sum(map(len, blocks)) + nul
                raise DocumentError(path, f"binary file (a NUL byte at offset {offset:,}); expected text")
            blocks.append(block)
            size += len(block)
            ascii_only = ascii_only and block.isascii()
            if size > max_chars * (1 if ascii_only else 4):
                raise DocumentError(path, too_much_text(max_chars))
            words += len(block.split()) - (in_word and not block[:1].isspace())
            in_word = not block[-1:].isspace()
            if words > max_words:
                raise DocumentError(
                    path,
                    f"more than {max_words:,} words (read {sum(map(len, blocks)):,} bytes "
                    "before stopping); raise LONGQA_MAX_WORDS to allow it",
                )
    raw = b"".join(blocks)
    for bom, enc in _BOMS:  # UTF-32 first: its little-endian BOM begins with UTF-16's
        if raw.startswith(bom):
            try:
                return raw.decode(enc), enc
            except UnicodeDecodeError as e:
                raise DocumentError(
                    path, f"undecodable bytes: starts with a {enc} mark but is not {enc} ({e.reason})"
                ) from None
    if b"\x00" in raw:
        raise DocumentError(path, f"binary file (a NUL byte at offset {raw.index(0):,}); expected text")
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as utf8_error:
        return _decode_legacy(path, raw, utf8_error)


_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _decode_legacy(path: Path, raw: bytes, utf8_error: UnicodeDecodeError) -> tuple[str, str]:
    """A file that is not UTF-8: Windows-1252 when it reads as clean text, else the encoding
    charset-normalizer finds with little mess (cp1251, KOI8-R, GBK, EUC-JP, ...), else refused
    naming the likely encoding: never mojibake indexed quietly."""
    from charset_normalizer import from_bytes

    western = from_bytes(raw, cp_isolation=[FALLBACK_ENCODING]).best()
    if western is not None and western.chaos <= MAX_CHAOS:
        match, problem = western, None
    else:
        match = from_bytes(raw).best()
        evidence = sum(b >= 0x80 for b in raw[: 1 << 20])
        if match is None:
            problem = ""
        elif match.chaos > MAX_CHAOS:
            problem = f"; it looks most like {match.encoding} but decodes to {match.chaos:.0%} mess"
        elif evidence < MIN_EVIDENCE_BYTES:  # a few odd bytes "decode" in many code pages: not a finding
            problem = f"; too few non-ASCII bytes ({evidence}) to tell its encoding (perhaps {match.encoding})"
        else:
            problem = None
    if problem is not None:
        raise DocumentError(
            path,
            f"undecodable bytes: not UTF-8 ({utf8_error.reason} at byte {utf8_error.start}) "
            f"nor clean {FALLBACK_ENCODING}{problem}; save it as UTF-8",
        )
    log.warning("%s: not valid UTF-8 (byte %d); decoded as %s", printable_name(path), utf8_error.start, match.encoding)
    return str(match), match.encoding


def _refuse_binary(path: Path, head: bytes) -> None:
    if head.startswith(tuple(bom for bom, _ in _BOMS)):
        return
    sample = head[:8192]
    if b"\x00" in sample:
        raise DocumentError(path, "binary file (contains NUL bytes); expected text")
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    if sample and control / len(sample) > 0.10:
        raise DocumentError(path, "binary file (mostly control bytes); expected text")


def _read_pdf(path: Path, max_words: int, notes: list[str], ocr_pages: list[int]) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(path, "PDF is encrypted with a password")
        pages: list[str] = []
        words = 0
        for page in reader.pages:
            # layout mode keeps table columns aligned with spaces, so tables survive as blocks; it won
            # the side-by-side measurement against plain mode, pdfplumber and pypdfium2 (bench/README.md)
            page_text = page.extract_text(extraction_mode="layout") or ""
            words += len(page_text.split())
            if words > max_words:
                raise DocumentError(path, f"more than {max_words:,} words; raise LONGQA_MAX_WORDS to allow it")
            pages.append(reading_order(page_text))
        ocr_pages += fill_scanned_pages(path, pages, notes)  # pages with no text layer (scans) read by OCR
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, MemoryError, RecursionError) as e:
        # PyPdfError covers PdfReadError and LimitReachedError (a decompression bomb); pypdf meets a corrupt object
        # graph (seen: a /Length that refers to itself) as an AttributeError on the object it got
        raise DocumentError(path, f"unreadable PDF ({type(e).__name__}: {str(e)[:200]})") from None
    blocks = [_pdf_layout_to_blocks(page) for page in clean_pdf_pages(repair_words(pages))]
    if not any(b.strip() for b in blocks):
        raise DocumentError(path, scans_refused())
    return f"\n\n{PAGE_BREAK}\n\n".join(blocks)  # a form feed between pages: a passage's page is known


def _pdf_layout_to_blocks(page_text: str) -> str:
    """Turn layout-mode lines into blank-line separated blocks: aligned-column lines stay as they
    are (a table), contents entries keep a line each, prose lines are de-indented and joined into
    paragraphs."""
    out: list[str] = []
    prose: list[str] = []
    table: list[str] = []

    def flush_prose() -> None:
        if prose:
            out.append(" ".join(prose))
            prose.clear()

    def flush_table() -> None:
        if table:
            out.append("\n".join(table))
            table.clear()

    for line in page_text.splitlines():
        stripped = line.strip()
        if not stripped:
            flush_prose()
            flush_table()
        elif _is_aligned_row(stripped):
            flush_prose()
            table.append(line.rstrip())
        elif _TOC_ENTRY.search(stripped):  # contents entries keep a line each, as a reader sees them
            flush_prose()
            table.append(stripped)
        else:
            flush_table()
            prose.append(stripped)
            if stripped.endswith((".", ":", "?", "!")) and len(stripped) < 60:
                flush_prose()
    flush_prose()
    flush_table()
    return "\n\n".join(out)


_ALIGNED_GAP = re.compile(r"\S(?: {2,}|\t+)(?=\S)")
# "Introduction … 7" once clean_pdf_pages collapsed its leader; the page may be roman or "A-3"
_TOC_ENTRY = re.compile(r"\S \u2026 (?:\d{1,4}|[ivxlcdmIVXLCDM]{1,7}|[A-Z]-\d{1,4})$")


def _is_aligned_row(line: str) -> bool:
    return len(_ALIGNED_GAP.findall(line.strip())) >= 2


def _is_pipe_row(line: str) -> bool:
    s = line.strip()
    return s.startswith("|") and s.count("|") >= 2


def split_paragraphs(text: str) -> list[Paragraph]:
    """Blank lines separate paragraphs; inside a block, runs of table rows (pipe rows, or ≥ 2
    consecutive lines with aligned columns) become their own table paragraph."""
    paragraphs: list[Paragraph] = []
    for start, end in _blocks(text):
        for s, e, is_table in _split_tables(text, start, end):
            paragraphs.append(Paragraph(id=len(paragraphs), start=s, end=e, is_table=is_table))
    return paragraphs


def _blocks(text: str) -> Iterable[tuple[int, int]]:
    pos = 0
    for m in re.finditer(r"\n[ \t]*\n", text):
        yield from _trimmed(text, pos, m.start())
        pos = m.end()
    yield from _trimmed(text, pos, len(text))


def _trimmed(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    segment = text[start:end]
    stripped = segment.strip()
    if stripped:
        s = start + (len(segment) - len(segment.lstrip()))
        yield s, s + len(stripped)


def _split_tables(text: str, start: int, end: int) -> Iterable[tuple[int, int, bool]]:
    lines: list[tuple[int, int, bool]] = []
    pos = start
    for line in text[start:end].split("\n"):
        lines.append((pos, pos + len(line), _is_pipe_row(line) or _is_aligned_row(line)))
        pos += len(line) + 1
    runs: list[list[tuple[int, int, bool]]] = []
    for line in lines:
        if runs and runs[-1][-1][2] == line[2]:
            runs[-1].append(line)
        else:
            runs.append([line])
    for run in runs:
        # a single aligned-looking line inside prose is not a table
        is_table = run[0][2] and (len(run) >= 2 or _is_pipe_row(text[run[0][0] : run[0][1]]))
        yield from ((s, e, is_table) for s, e in _trimmed(text, run[0][0], run[-1][1]))
