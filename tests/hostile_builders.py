"""Hostile files built at test time (and by bench/): each small on disk, each built to stop or
starve a reader that does not bound its work."""

from __future__ import annotations

import os
import zipfile
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
    """Text that is one word of `size_mb` MB: no spaces, no newlines."""
    path.write_bytes(b"a" * int(size_mb * (1 << 20)))
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
