"""Read old binary Word (.doc, Word 97-2003) and PowerPoint (.ppt, 97-2003) files: their text, in
paragraphs, with Word tables as pipe tables.

Both are OLE compound files, opened with olefile (BSD; the maintained reader of the container). The
text inside is read here, by hand (no well-kept, Apache-compatible Python library reads it:
antiword's wrappers are GPL, textract and Tika run outside programs): a .doc's piece table (MS-DOC
2.8.35, the text's pieces in the `WordDocument` stream, cp1252 or UTF-16) split into the main text,
text boxes, headers and footers, footnotes, endnotes and comments, fields shown by their result; a
.ppt's text atoms (MS-PPT 2.9, UTF-16 or Latin-1) in stream order, the masters' prompts left out.
Headings come from the paragraph styles (`doc_styles.py`); other formatting, list numbering and
Word 6/95 files are not read.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from pathlib import Path

from ..formats import _pipe_table, _too_long
from ..limits import DocumentError
from .doc_styles import HEADING_MARK, Piece, mark_headings

CHARS_PER_WORD, BASE_CHARS = 12, 1 << 20  # a .doc's characters allowed per allowed word, and beyond them
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_PARAGRAPH = re.compile("([^\r\x07\ufdd1-\ufdd9]*)([\r\x07\ufdd1-\ufdd9]|$)")
_FIELD_BEGIN, _FIELD_SEPARATOR, _FIELD_END, _CELL = "\x13", "\x14", "\x15", "\x07"
_DROP = dict.fromkeys(map(ord, "\x01\x02\x03\x04\x05\x08\x1f"), None) | {
    0x0B: "\n",
    0x0C: "\n",
    0x0E: "\n",
    0x1E: "-",
    0xA0: " ",
}
# the parts of a .doc's text, in the order their character counts follow ccpText in FibRgLw97
_DOC_PARTS = ("main", "footnotes", "headers", "macro", "comments", "endnotes", "text boxes", "header text boxes")


def _open(path: Path, kind: str, label: str, stream: str):
    import olefile

    with path.open("rb") as f:
        head = f.read(8)
    if head.startswith(b"PK"):
        raise DocumentError(path, f"a newer {label} saved under the old name: rename it to .{kind.lower()}x")
    if head.startswith(b"{\\rtf"):
        raise DocumentError(
            path, f"not read: an RTF document under the .{kind.lower()} name; save it as .{kind.lower()}x to index it"
        )
    if head != _OLE_MAGIC:
        raise DocumentError(path, f"not a {label} 97-2003 file (no OLE compound file header)")
    try:
        ole = olefile.OleFileIO(str(path))
    except (OSError, ValueError, IndexError, struct.error, EOFError) as e:
        raise DocumentError(path, f"corrupt {kind} ({type(e).__name__}: {str(e)[:200]})") from None
    if not ole.exists(stream):
        names = {"/".join(entry) for entry in ole.listdir()}
        ole.close()
        if "EncryptedPackage" in names or "EncryptionInfo" in names:
            raise DocumentError(path, f"{kind} is password-protected (encrypted)")
        raise DocumentError(path, f"not a {label} 97-2003 file (no '{stream}' stream)")
    return ole


def _read_stream(path: Path, kind: str, ole, name: str) -> bytes:
    try:
        return ole.openstream(name).read()
    except (OSError, ValueError, IndexError, struct.error, EOFError) as e:
        raise DocumentError(path, f"corrupt {kind}: stream '{name}' ({type(e).__name__}: {str(e)[:200]})") from None


# -- DOC --------------------------------------------------------------------------------------------------


def read_doc(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """The main text's paragraphs and tables, then text boxes, headers and footers (each distinct
    line once), footnotes, endnotes and comments."""
    ole = _open(path, "DOC", "Word", "WordDocument")
    try:
        word = _read_stream(path, "DOC", ole, "WordDocument")
        if word[:2] == b"\xdc\xa5":  # Word 6.0/95's magic number
            raise DocumentError(path, "not read: Word 6.0/95 format (older than Word 97); save it as .docx to index it")
        if len(word) < 0x200 or word[:2] != b"\xec\xa5":
            raise DocumentError(path, "corrupt DOC (no Word file information block)")
        n_fib, flags = struct.unpack_from("<HH", word, 2)[0], struct.unpack_from("<H", word, 0x0A)[0]
        if flags & 0x0100:
            raise DocumentError(path, "DOC is password-protected (encrypted)")
        if n_fib < 0x00C1:
            raise DocumentError(path, "not read: Word 6.0/95 format (older than Word 97); save it as .docx to index it")
        table_name = "1Table" if flags & 0x0200 else "0Table"
        if not ole.exists(table_name):
            raise DocumentError(path, f"corrupt DOC (no '{table_name}' stream)")
        table = _read_stream(path, "DOC", ole, table_name)
    finally:
        ole.close()
    counts, clx, blob = _fib(path, word)
    units, pieces = _piece_text(path, word, table[clx[0] : clx[0] + clx[1]], max_words)
    units = mark_headings(units, counts[0], word, table, blob, pieces)
    parts, start = {}, 0
    for name, count in zip(_DOC_PARTS, counts, strict=False):
        parts[name] = units[2 * start : 2 * (start + count)].decode("utf-16-le", "replace")
        start += count
    blocks = list(_doc_blocks(parts))
    if sum(len(b.split()) for b in blocks) > max_words:
        raise _too_long(path, max_words)
    if not blocks:
        raise DocumentError(path, "DOC has no text")
    return "\n\n".join(blocks)


def _fib(path: Path, word: bytes) -> tuple[list[int], tuple[int, int], int]:
    """The character counts of the text's parts, where the piece table (Clx) lies in the table
    stream, and where the FIB's (offset, size) pairs begin."""
    try:
        csw = struct.unpack_from("<H", word, 0x20)[0]
        at = 0x22 + 2 * csw
        cslw = struct.unpack_from("<H", word, at)[0]
        lw = at + 2
        counts = list(struct.unpack_from("<8I", word, lw + 12))  # ccpText, ccpFtn, ... ccpHdrTxbx
        blob = lw + 4 * cslw + 2
        fc_clx, lcb_clx = struct.unpack_from("<II", word, blob + 33 * 8)
    except struct.error:
        raise DocumentError(path, "corrupt DOC (its file information block is cut short)") from None
    return counts, (fc_clx, lcb_clx), blob


def _piece_text(path: Path, word: bytes, clx: bytes, max_words: int) -> tuple[bytes, list[Piece]]:
    """The document's characters as UTF-16LE code units, piece by piece (MS-DOC 2.9.38 Clx:
    property runs, then the PlcPcd): character positions count code units, not code points."""
    at = 0
    while at < len(clx) and clx[at] == 0x01:  # a Prc: property modifiers, skipped
        at += 3 + struct.unpack_from("<H", clx, at + 1)[0] if at + 3 <= len(clx) else len(clx)
    if at + 5 > len(clx) or clx[at] != 0x02:
        raise DocumentError(path, "corrupt DOC (no piece table)")
    size = struct.unpack_from("<I", clx, at + 1)[0]
    plc = clx[at + 5 : at + 5 + size]
    n = (len(plc) - 4) // 12
    if n <= 0:
        raise DocumentError(path, "corrupt DOC (an empty piece table)")
    cps = struct.unpack_from(f"<{n + 1}I", plc, 0)
    out: list[bytes] = []
    pieces: list[Piece] = []
    total, limit = 0, CHARS_PER_WORD * max_words + BASE_CHARS  # pieces may point at one region many times
    for i in range(n):
        fc = struct.unpack_from("<I", plc, 4 * (n + 1) + 8 * i + 2)[0]
        length = max(0, cps[i + 1] - cps[i])
        total += length
        if total > limit:
            raise _too_long(path, max_words)
        if fc & 0x40000000:  # compressed: one byte a character, cp1252
            start = (fc & 0x3FFFFFFF) // 2
            out.append(word[start : start + length].decode("cp1252", "replace").encode("utf-16-le"))
            pieces.append((cps[i], cps[i] + length, start, 1))
        else:
            out.append(word[fc : fc + 2 * length])
            pieces.append((cps[i], cps[i] + length, fc, 2))
    return b"".join(out), pieces


def _fields(text: str) -> str:
    """Each field shown by its result: `{ HYPERLINK "..." }text` -> `text` (fields nest)."""
    if _FIELD_BEGIN not in text:
        return text
    out: list[str] = []
    stack: list[bool] = []  # per open field: whether its result has begun
    for ch in text:
        if ch == _FIELD_BEGIN:
            stack.append(False)
        elif ch == _FIELD_SEPARATOR and stack:
            stack[-1] = True
        elif ch == _FIELD_END and stack:
            stack.pop()
        elif all(stack):
            out.append(ch)
    return "".join(out)


def _doc_blocks(parts: dict[str, str]) -> Iterator[str]:
    yield from _paragraphs(parts.get("main", ""))
    yield from _paragraphs(parts.get("text boxes", ""))
    seen: set[str] = set()
    for name in ("headers", "header text boxes"):
        for block in _paragraphs(parts.get(name, "")):
            if block not in seen and re.search(r"[^\W\d_]", block):
                seen.add(block)
                yield block
    for name in ("footnotes", "endnotes", "comments"):
        yield from _paragraphs(parts.get(name, ""))


def _paragraphs(text: str) -> Iterator[str]:
    """Paragraphs (`\\r`, or a heading's marker) and table rows: a cell ends with `\\x07`, a row with
    a second `\\x07` (the row's own mark), so rows become a pipe table."""
    text = _fields(text).translate(_DROP)
    rows: list[list[str]] = []
    row: list[str] = []
    pending: list[str] = []  # paragraphs of the cell being read
    previous = "\r"
    for piece, mark in _PARAGRAPH.findall(text):
        line = " ".join(piece.split())
        level = ord(mark) - HEADING_MARK if mark and mark not in "\r\x07" else 0
        if level and line and not row:  # a heading's paragraph (doc_styles.py marked it)
            line = f"{'#' * min(level, 6)} {line}"
            mark = "\r"
        elif level:
            mark = "\r"
        if mark == _CELL:
            if not line and not pending and previous == _CELL:  # the row's end mark
                if any(row):
                    rows.append(row)
                row = []
            else:
                row.append(" ".join([*pending, line]).strip().replace("|", "/"))
                pending = []
        elif row:  # a paragraph inside a cell
            pending.append(line)
        else:
            if rows:
                yield _pipe_table(rows)
                rows = []
            if line:
                yield line
        previous = mark
    if row:
        rows.append(row)
    if rows:
        yield _pipe_table(rows)


# -- PPT --------------------------------------------------------------------------------------------------

_TEXT_CHARS, _TEXT_BYTES, _CSTRING = 0x0FA0, 0x0FA8, 0x0FBA
_MAIN_MASTER, _HANDOUT, _SLIDE, _SLIDE_PERSIST, _SLIDE_LIST = 0x03F8, 0x0FC9, 0x03EE, 0x03F3, 0x0FF0
_SHAPE, _PLACEHOLDER = 0xF004, 0x0BC3  # a drawing's shape container, and the atom that makes it a placeholder
_TEXT_HEADER, _HEADERS_FOOTERS = 0x0F9F, 0x0FD9
_PROMPTS = re.compile(  # the masters' placeholder prompts, when a master is kept outside a MainMaster record
    r"Click to (?:edit|add) (?:Master )?(?:title|text|subtitle|notes)(?: styles?)?"
    r"|(?:Second|Third|Fourth|Fifth) level|\*"
)


def read_ppt(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Slides' text in the order the file keeps it, each slide under a `## Slide N: title` heading
    (text a master adds comes before the slides, notes after them)."""
    ole = _open(path, "PPT", "PowerPoint", "PowerPoint Document")
    try:
        if ole.exists("EncryptedSummary"):
            raise DocumentError(path, "PPT is password-protected (encrypted)")
        stream = _read_stream(path, "PPT", ole, "PowerPoint Document")
    finally:
        ole.close()
    blocks: list[str] = []
    words = 0
    for block in _ppt_blocks(stream):
        words += len(block.split())
        if words > max_words:
            raise _too_long(path, max_words)
        blocks.append(block)
    if not blocks:
        raise DocumentError(path, "PPT has no text on its slides")
    return "\n\n".join(blocks)


def _ppt_blocks(stream: bytes) -> Iterator[str]:
    """Walk the records (containers have version 0xF) without recursion; handouts are skipped, and
    a master's placeholders (their prompts: "Click to edit Master title style"), not its own text.
    A slide opens at its persist atom in the slide list when the list holds the slides' text
    (PowerPoint 97-2003), else at its own container; its heading comes before its first text."""
    ends: list[tuple[int, int, int]] = []  # (end offset, record type, instance) of the containers we are in
    at, slide, listed, number, heading_due, is_title, due_in_list = 0, 0, 0, 0, False, False, False
    furniture: set[str] = set()
    list_has_text = placeholder = False
    while at + 8 <= len(stream):
        while ends and at >= ends[-1][0]:
            ends.pop()
        version_instance, kind, size = struct.unpack_from("<HHI", stream, at)
        body_end = min(at + 8 + size, len(stream))
        if version_instance & 0x000F == 0x000F:  # a container: step inside (or over a master)
            if kind == _HANDOUT:
                at = body_end
                continue
            ends.append((body_end, kind, version_instance >> 4))
            at += 8
            placeholder = False if kind == _SHAPE else placeholder
            if kind == _SLIDE and not list_has_text:  # the slide's text is in its own drawing
                slide, heading_due, is_title, due_in_list = slide + 1, True, False, False
                number = slide
            continue
        in_slide_list = bool(ends) and ends[-1][1:] == (_SLIDE_LIST, 0)
        if kind == _PLACEHOLDER:
            placeholder = True
        if kind == _SLIDE_PERSIST and in_slide_list:  # the slide's text follows here (PowerPoint 97-2003)
            listed, heading_due, is_title, due_in_list = listed + 1, True, False, True
            number = listed
        elif kind == _TEXT_HEADER:
            is_title = at + 12 <= len(stream) and struct.unpack_from("<I", stream, at + 8)[0] in (0, 6)
        elif kind in (_TEXT_CHARS, _TEXT_BYTES) or (kind == _CSTRING and _in(ends, _HEADERS_FOOTERS)):
            lines = _ppt_lines(stream[at + 8 : body_end], kind)
            if placeholder and _in(ends, _MAIN_MASTER):
                lines = []
            list_has_text = list_has_text or (in_slide_list and bool(lines))
            if kind == _CSTRING:  # a header or footer: the same on every slide, given once
                lines = [line for line in lines if line not in furniture]
                furniture.update(lines)
            if heading_due and lines and (in_slide_list or not due_in_list):
                heading_due = False
                if is_title:
                    yield f"## Slide {number}: {' '.join(lines)}"
                    lines = []
                else:
                    yield f"## Slide {number}"
            if lines:
                yield "\n".join(lines)
        at = body_end


def _ppt_lines(raw: bytes, kind: int) -> list[str]:
    """A text atom's lines (`\r` ends a paragraph, `\x0b` breaks a line), the masters' prompts left out."""
    text = raw.decode("latin-1") if kind == _TEXT_BYTES else raw.decode("utf-16-le", "surrogatepass")
    lines = (" ".join(line.split()) for line in re.split(r"[\r\x0b\n]", text))
    return [line for line in lines if line and not _PROMPTS.fullmatch(line)]


def _in(ends: list[tuple[int, int, int]], kind: int) -> bool:
    return any(k == kind for _, k, _ in ends)
