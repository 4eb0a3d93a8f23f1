"""Hostile files built at test time (and by bench/): each small on disk, each built to stop or
starve a reader that does not bound its work."""

from __future__ import annotations

import itertools
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="word/document.xml"/></Relationships>'
)
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_bomb(path: Path, inflated_mb: int = 300, element: bytes = b"<w:p/>") -> Path:
    """A .docx whose document.xml inflates to `inflated_mb` MB of empty paragraphs (a few hundred
    KB on disk, under the zip byte limit)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        z.writestr("_rels/.rels", _RELS)
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            f.write(f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body>'.encode())
            f.write(b"<w:p><w:r><w:t>A real first paragraph.</w:t></w:r></w:p>")
            block = element * ((1 << 20) // len(element))
            for _ in range(inflated_mb):
                f.write(block)
            f.write(b"</w:body></w:document>")
    return path


def epub_spine_bomb(path: Path, spine_items: int = 1_000_000) -> Path:
    """An EPUB of one small chapter named `spine_items` times in its spine (tens of KB on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        with z.open("OEBPS/content.opf", "w", force_zip64=True) as f:
            f.write(
                b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
                b'<manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine>'
            )
            f.write(b'<itemref idref="c"/>' * spine_items)
            f.write(b"</spine></package>")
        z.writestr("OEBPS/c.xhtml", "<html><body><p>One chapter, named many times.</p></body></html>")
    return path


def quadratic_html(path: Path, size_mb: float = 3.8) -> Path:
    """Repeated unclosed `<div><p>x</p>`: every paragraph nested one level deeper than the last."""
    unit = b"<div><p>x</p>"
    path.write_bytes(unit * int(size_mb * (1 << 20) / len(unit)))
    return path


def sparse_text(path: Path, size_mb: int = 500) -> Path:
    """A .txt with a line of text, then a hole of `size_mb` MB (no disk blocks: truncate)."""
    path.write_bytes(b"A text head, then nothing but a hole.\n")
    os.truncate(path, size_mb << 20)
    return path


def long_run_text(path: Path, size_mb: float = 16) -> Path:
    """Text that is one word of `size_mb` MB: no spaces, no newlines (written a MB at a time)."""
    whole, part = divmod(int(size_mb * (1 << 20)), 1 << 20)
    with path.open("wb") as f:
        for _ in range(whole):
            f.write(b"a" * (1 << 20))
        f.write(b"a" * part)
    return path


def markdown_image_brackets(path: Path, size_kb: int = 200) -> Path:
    """A Markdown line of `![` repeated: an image pattern that rescans the rest of the line from each
    `![` takes minutes on 200 KB (issue 45)."""
    path.write_bytes(b"# Brackets\n\n" + b"![" * (size_kb * 512) + b"\n")
    return path


def xlsx_huge_string(path: Path, size_mb: int = 200) -> Path:
    """An .xlsx whose one cell holds a string of `size_mb` MB without a space (streamed into the zip a
    MB at a time: a few hundred KB on disk, never held whole here)."""
    head = b'<row r="1"><c r="A1" t="inlineStr"><is><t>'
    return xlsx_sheet(path, [head, *(b"a" * (1 << 20) for _ in range(size_mb)), b"</t></is></c></row>"])


_OOXML_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def xlsx_sheet(path: Path, rows: bytes | Iterable[bytes], repeat: int = 1) -> Path:
    """An .xlsx of one sheet whose sheetData is `rows` written `repeat` times, or the pieces `rows`
    yields one after the other (streamed: small on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _OOXML_TYPES)
        z.writestr(
            "_rels/.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            f'relationships"><Relationship Id="rId1" Type="{_R}/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>",
        )
        z.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_S}" xmlns:r="{_R}"><sheets>'
            '<sheet name="Big" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        z.writestr(
            "xl/_rels/workbook.xml.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            f'relationships"><Relationship Id="rId1" Type="{_R}/worksheet" Target="worksheets/sheet1.xml"/>'
            "</Relationships>",
        )
        with z.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as f:
            f.write(f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{_S}"><sheetData>'.encode())
            for piece in itertools.repeat(rows, repeat) if isinstance(rows, bytes) else rows:
                f.write(piece)
            f.write(b"</sheetData></worksheet>")
    return path


def xlsx_padded_rows(path: Path, n_rows: int = 200) -> Path:
    """Rows holding one cell in the last column (XFD): a dense reader makes 16,384 cells of each."""
    rows = b"".join(
        f'<row r="{i}"><c r="XFD{i}" t="inlineStr"><is><t>x</t></is></c></row>'.encode() for i in range(1, n_rows + 1)
    )
    return xlsx_sheet(path, rows)


def xlsx_cell_bomb(path: Path, inflated_mb: int = 200) -> Path:
    """A sheet of millions of numeric cells (a few hundred KB on disk)."""
    row = b"<row>" + b"<c><v>1</v></c>" * 1000 + b"</row>"
    return xlsx_sheet(path, row, repeat=inflated_mb * (1 << 20) // len(row))


def pptx_bomb(path: Path, inflated_mb: int = 300) -> Path:
    """A .pptx whose one slide inflates to `inflated_mb` MB of empty paragraphs."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _CONTENT_TYPES)
        with z.open("ppt/slides/slide1.xml", "w", force_zip64=True) as f:
            f.write(
                b'<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
                b'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree>'
            )
            block = b"<a:p/>" * ((1 << 20) // 6)
            for _ in range(inflated_mb):
                f.write(block)
            f.write(b"</p:spTree></p:cSld></p:sld>")
    return path


def odt_repeated_table(path: Path) -> Path:
    """An .odt whose one table row and cell claim to repeat a million times each (LibreOffice writes
    such rows for a sheet's empty tail; with text in them, a reader that expands them builds 10^12 cells)."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"><office:body><office:text>'
        "<text:p>Before the table.</text:p><table:table>"
        '<table:table-row table:number-rows-repeated="1000000">'
        '<table:table-cell table:number-columns-repeated="1000000"><text:p>x</text:p></table:table-cell>'
        "</table:table-row></table:table></office:text></office:body></office:document-content>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
    return path


def million_row_csv(path: Path, rows: int = 1_000_000) -> Path:
    """A CSV of `rows` short rows (~20 MB)."""
    with path.open("wb") as f:
        f.write(b"name,quantity,berth\n")
        f.write(b"crane,42,north\n" * rows)
    return path


def html_span_bomb(path: Path, cells: int = 200) -> Path:
    """A small HTML table whose cells claim to span a billion rows and columns each."""
    row = '<td rowspan="1000000000" colspan="1000000000">x</td>' * cells
    path.write_text(f"<html><body><p>Before.</p><table><tr>{row}</tr><tr>{row}</tr></table></body></html>", "utf-8")
    return path


def letter_spaced_pdf(path: Path, pages: int = 20, lines: int = 50, letters: int = 400) -> Path:
    """A wide PDF whose every page is `lines` x `letters` single letters set apart by kerning (the
    layout-text grid, the column search and the word repair all see the most tokens a page can
    hold); all pages share one compressed content stream, so the file stays small."""
    import zlib

    row = b"[" + b" -600 ".join(b"(%c)" % (97 + i % 26) for i in range(letters)) + b"] TJ T*\n"
    stream = zlib.compress(b"BT /F1 8 Tf 12 TL 20 780 Td\n" + row * lines + b"ET\n")
    first_page = 5
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (first_page + i) for i in range(pages)), pages),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    resources = b"/Resources << /Font << /F1 4 0 R >> >>"
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 4000 800] /Contents 3 0 R %s >>" % resources
    objects += [page] * pages
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path
