"""The formats people keep: .docx (tables kept as tables), .epub (chapters in spine order), and PDF text
a reader would accept (no glyph-name runs, no dot leaders, no running headers and footers). Every
fixture is written here; every bad input gets a DocumentError with its own reason."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from longqa.retrieval.documents import Document
from longqa.retrieval.read.formats import ZIP_BASE_BYTES
from longqa.retrieval.read.loaders import SUPPORTED_SUFFIXES, DocumentError, load_document
from longqa.retrieval.read.pdf.pdf_text import clean_pdf_pages, collapse_leaders, drop_glyph_runs, furniture_key

TABLE_ROWS = [("Terminal", "Tons", "Ships"), ("North", "1,200", "14"), ("South | West", "900", "11")]
PIPE_TABLE = ["| Terminal | Tons | Ships |", "|---|---|---|", "| North | 1,200 | 14 |", "| South / West | 900 | 11 |"]


def blocks(document: Document) -> list[tuple[str, bool]]:
    return [(document.paragraph_text(p), p.is_table) for p in document.paragraphs]


def refused(path: Path, *reason: str, max_words: int | None = None) -> DocumentError:
    """The DocumentError for `path`, checked to name the file and each part of the reason."""
    with pytest.raises(DocumentError) as e:
        load_document(path) if max_words is None else load_document(path, max_words=max_words)
    assert e.value.source == str(path)
    for part in reason:
        assert part in e.value.reason, e.value.reason
    return e.value


def rezip(source: Path, target: Path, drop: set[str] = frozenset(), add: dict[str, bytes] | None = None) -> Path:
    """A copy of a zip without some members and with others added or replaced."""
    add = add or {}
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if info.filename not in drop and info.filename not in add:
                out.writestr(info, src.read(info))
        for name, data in add.items():
            out.writestr(name, data)
    return target


def corrupt_member(source: Path, target: Path, name: str) -> Path:
    """A copy whose member `name` has its compressed bytes scrambled (the directory stays valid)."""
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as z:
        info = z.getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for i in range(start, start + min(info.compress_size, 64)):
        data[i] ^= 0x5A
    target.write_bytes(bytes(data))
    return target


def bomb_bytes() -> bytes:
    return b"\0" * (ZIP_BASE_BYTES + (8 << 20))  # a few MiB past the limit at max_words=1,000


def test_new_suffixes_are_supported():
    assert SUPPORTED_SUFFIXES[".docx"] == "docx"
    assert SUPPORTED_SUFFIXES[".epub"] == "epub"


# -- DOCX -------------------------------------------------------------------------------------------


def make_docx(path: Path, extra_paragraphs: int = 0) -> Path:
    import docx

    d = docx.Document()
    d.add_heading("Harbor report", level=1)
    d.add_paragraph("The harbor grew fast this year.")
    table = d.add_table(rows=len(TABLE_ROWS), cols=3)
    for r, row in enumerate(TABLE_ROWS):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading("Outlook", level=2)
    d.add_paragraph("Dredging of the inner basin starts in May.")
    for i in range(extra_paragraphs):
        d.add_paragraph(f"Filler paragraph number {i} with a few more words in it.")
    d.save(str(path))
    return path


def test_docx_headings_paragraphs_and_table_in_document_order(tmp_path):
    document = load_document(make_docx(tmp_path / "report.docx"))
    assert document.encoding == "docx"
    assert blocks(document) == [
        ("# Harbor report", False),
        ("The harbor grew fast this year.", False),
        ("\n".join(PIPE_TABLE), True),
        ("## Outlook", False),
        ("Dredging of the inner basin starts in May.", False),
    ]


def test_docx_merged_cell_keeps_the_columns_aligned(tmp_path):
    import docx

    d = docx.Document()
    table = d.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Cargo 2023"
    table.cell(0, 2).text = "Ships"
    for c, value in enumerate(("Coal", "1,200", "14")):
        table.cell(1, c).text = value
    d.save(str(tmp_path / "merged.docx"))
    document = load_document(tmp_path / "merged.docx")
    assert blocks(document) == [("| Cargo 2023 |  | Ships |\n|---|---|---|\n| Coal | 1,200 | 14 |", True)]


def test_docx_that_is_not_a_zip(tmp_path):
    path = tmp_path / "notes.docx"
    path.write_text("just some text saved with the wrong name\n")
    refused(path, "not a valid DOCX (not a zip archive")


def test_docx_truncated_zip(tmp_path):
    source = make_docx(tmp_path / "whole.docx").read_bytes()
    path = tmp_path / "cut.docx"
    path.write_bytes(source[: len(source) // 2])
    refused(path, "not a valid DOCX (not a zip archive")


def test_docx_with_a_damaged_part(tmp_path):
    path = corrupt_member(make_docx(tmp_path / "whole.docx"), tmp_path / "damaged.docx", "word/document.xml")
    refused(path, "corrupt DOCX: part 'word/document.xml' cannot be read")


def test_docx_missing_its_document_part(tmp_path):
    path = rezip(make_docx(tmp_path / "whole.docx"), tmp_path / "hollow.docx", drop={"word/document.xml"})
    refused(path, "corrupt DOCX: missing part", "word/document.xml")


def test_zip_that_is_not_a_word_document(tmp_path):
    path = tmp_path / "archive.docx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "hello")
    refused(path, "not a Word document (no [Content_Types].xml in the zip)")


def test_password_protected_docx(tmp_path):
    # Office encrypts a .docx by wrapping it in an OLE compound file
    path = tmp_path / "secret.docx"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504)
    refused(path, "password-protected (encrypted) Office file")


def test_docx_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    path = rezip(make_docx(tmp_path / "whole.docx"), tmp_path / "bomb.docx", add={"word/media/big.bin": bomb_bytes()})
    assert path.stat().st_size < 1 << 20
    refused(path, "DOCX declares", "bytes uncompressed, over the limit of", "zip bomb", max_words=1_000)


def test_docx_over_the_word_limit(tmp_path):
    refused(make_docx(tmp_path / "long.docx", extra_paragraphs=20), "more than 60 words", max_words=60)


# -- EPUB -------------------------------------------------------------------------------------------

CONTAINER = b"""<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

# the manifest lists the chapters in another order than the spine, and one file name needs %-decoding
OPF = b"""<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>The Pilot</dc:title></metadata>
  <manifest>
    <item id="c3" href="text/chapter%20three.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c2"/><itemref idref="c3"/></spine>
</package>"""


def chapter(title: str, body: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>{title} (head title)</title></head><body><h1>{title}</h1>{body}</body></html>"
    ).encode()


TABLE_HTML = "".join(
    "<tr>" + "".join(f"<{'th' if r == 0 else 'td'}>{c}</{'th' if r == 0 else 'td'}>" for c in row) + "</tr>"
    for r, row in enumerate(TABLE_ROWS)
)
CHAPTERS = {
    "OEBPS/text/one.xhtml": chapter("Chapter One", "<p>The pilot boarded at dawn.</p>"),
    "OEBPS/text/two.xhtml": chapter("Chapter Two", f"<p>The tally of the day:</p><table>{TABLE_HTML}</table>"),
    "OEBPS/text/chapter three.xhtml": chapter("Chapter Three", "<p>The tide turned at noon.</p>"),
}


def make_epub(path: Path, parts: dict[str, bytes] | None = None, drop: set[str] = frozenset()) -> Path:
    """An EPUB: `mimetype` stored first, then container, package, chapters (or `parts` instead)."""
    members = {
        "mimetype": b"application/epub+zip",
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": OPF,
        "OEBPS/nav.xhtml": chapter("Contents", "<p>not in the spine</p>"),
        "OEBPS/style.css": b"p { margin: 0 }",
        **CHAPTERS,
        **(parts or {}),
    }
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            if name not in drop:
                z.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
    return path


def test_epub_chapters_in_spine_order_with_the_table_kept(tmp_path):
    document = load_document(make_epub(tmp_path / "pilot.epub"))
    assert document.encoding == "epub"
    assert blocks(document) == [
        ("# Chapter One", False),
        ("The pilot boarded at dawn.", False),
        ("# Chapter Two", False),
        ("The tally of the day:", False),
        ("\n".join(PIPE_TABLE), True),
        ("# Chapter Three", False),
        ("The tide turned at noon.", False),
    ]
    assert "head title" not in document.text and "not in the spine" not in document.text


def test_epub_with_obfuscated_fonts_only_is_read(tmp_path):
    encryption = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
      xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
      <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>
      <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/serif.otf"/></enc:CipherData></enc:EncryptedData>
    </encryption>"""
    document = load_document(make_epub(tmp_path / "fonts.epub", {"META-INF/encryption.xml": encryption}))
    assert "The tide turned at noon." in document.text


def test_epub_with_drm(tmp_path):
    encryption = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
      xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
      <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
      <enc:CipherData><enc:CipherReference URI="OEBPS/text/two.xhtml"/></enc:CipherData></enc:EncryptedData>
    </encryption>"""
    path = make_epub(tmp_path / "drm.epub", {"META-INF/encryption.xml": encryption})
    refused(path, "EPUB is DRM-protected (its chapters are encrypted)")


def test_epub_chapter_that_is_ciphertext(tmp_path):
    # DRM that does not declare itself: the chapter's bytes are not markup. It costs that chapter (issue 47:
    # degrade by part), named in a warning; a book whose every chapter is so is refused with the reason
    cipher = bytes(range(256)) * 8
    document = load_document(make_epub(tmp_path / "cipher.epub", {"OEBPS/text/two.xhtml": cipher}))
    assert "The pilot boarded at dawn." in document.text and "The tide turned at noon." in document.text
    assert document.warnings == ["chapter 'OEBPS/text/two.xhtml' is not text (encrypted or binary): not read"]
    every = {name: cipher for name in CHAPTERS}
    refused(make_epub(tmp_path / "all.epub", every), "EPUB has no text in its chapters", "is not text (encrypted")


def test_epub_that_is_not_a_zip(tmp_path):
    path = tmp_path / "book.epub"
    path.write_text("<html><body>a web page saved as .epub</body></html>")
    refused(path, "not a valid EPUB (not a zip archive")


def test_epub_with_a_damaged_chapter(tmp_path):
    path = corrupt_member(make_epub(tmp_path / "whole.epub"), tmp_path / "damaged.epub", "OEBPS/text/two.xhtml")
    refused(path, "corrupt EPUB: part 'OEBPS/text/two.xhtml' cannot be read")


def test_epub_without_a_container(tmp_path):
    refused(make_epub(tmp_path / "bare.epub", drop={"META-INF/container.xml"}), "no META-INF/container.xml")


def test_epub_missing_a_spine_chapter(tmp_path):
    path = make_epub(tmp_path / "gap.epub", drop={"OEBPS/text/two.xhtml"})
    refused(path, "corrupt EPUB: missing part 'OEBPS/text/two.xhtml'")


def test_epub_with_a_broken_package_document(tmp_path):
    path = make_epub(tmp_path / "opf.epub", {"OEBPS/content.opf": b"<package><manifest>"})
    refused(path, "corrupt EPUB: 'OEBPS/content.opf' is not well-formed XML")


def test_epub_package_declaring_entities_is_refused(tmp_path):
    laughs = b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;">]><package/>'
    refused(make_epub(tmp_path / "laughs.epub", {"OEBPS/content.opf": laughs}), "declares a document type or XML")
    # seen: a UTF-16 package passed a byte search for "<!ENTITY" and its entity was expanded
    utf16 = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE p [<!ENTITY a "LEAK">]><package>&a;</package>'
    wide = make_epub(tmp_path / "utf16.epub", {"OEBPS/content.opf": utf16.encode("utf-16")})
    refused(wide, "declares a document type or XML entities (refused)")


def test_zip_with_another_mimetype(tmp_path):
    path = make_epub(tmp_path / "odt.epub", {"mimetype": b"application/vnd.oasis.opendocument.text"})
    refused(path, "not an EPUB (its mimetype is 'application/vnd.oasis.opendocument.text')")


def test_epub_zip_bomb_stops_at_the_limit(tmp_path):
    path = make_epub(tmp_path / "bomb.epub", {"OEBPS/text/two.xhtml": bomb_bytes()})
    assert path.stat().st_size < 1 << 20
    refused(path, "EPUB decompresses past its limit", "zip bomb", max_words=1_000)


def test_epub_over_the_word_limit(tmp_path):
    refused(make_epub(tmp_path / "pilot.epub"), "more than 10 words", max_words=10)


# -- PDF text a reader would accept -----------------------------------------------------------------


@pytest.mark.parametrize(
    "line,clean",
    [
        ("/g68/g83/g83/g79/g76/g70/g68/g87/g76/g82/g81", ""),
        ("Results /G12/G13 /G14 were good", "Results were good"),
        ("glyph123glyph124 glyph125", ""),
        ("Total (cid:12)(cid:34) tonnes", "Total tonnes"),
        ("Revenue /g3 rose", "Revenue rose"),
        ("the path a/g1 stays", "the path a/g1 stays"),  # one glyph-like token glued to a word
    ],
)
def test_glyph_name_runs_are_removed(line, clean):
    assert drop_glyph_runs(line) == clean


@pytest.mark.parametrize(
    "line,clean",
    [
        ("Introduction ........ 7", "Introduction … 7"),
        ("2 Methods . . . . . . . . 12", "2 Methods … 12"),
        ("Appendix ····· iv", "Appendix … iv"),
        ("Summary………… 3", "Summary … 3"),
        ("He paused... and went on.", "He paused... and went on."),
    ],
)
def test_dot_leaders_are_collapsed(line, clean):
    assert collapse_leaders(line) == clean


def test_page_numbers_compare_equal():
    assert furniture_key("Page 3 of 10") == furniture_key("Page 10 of 10") == "page # of #"
    assert furniture_key("IBM Redpaper   12") == furniture_key("IBM Redpaper 7")
    assert furniture_key("xii") == furniture_key("3") == "#"


TOPICS = ["dredging", "pilotage", "cargo", "ferries", "moorings", "customs", "lighthouses", "tugs"]


def page(header: str, body: str, footer: str) -> str:
    return f"{header}\n\n{body}\n\n{footer}"


def test_running_headers_and_footers_are_dropped():
    bodies = [f"What the harbor did about {topic} this year." for topic in TOPICS[:5]]
    pages = [
        page(f"IBM Redpaper {n}", body, f"Page {n} of 5  ·  © 2024 Harbor") for n, body in enumerate(bodies, start=1)
    ]
    assert [p.strip() for p in clean_pdf_pages(pages)] == bodies


def test_headers_on_most_pages_and_alternating_heads_are_dropped():
    bodies = [f"A chapter on {topic}." for topic in TOPICS]
    pages = []
    for n, body in enumerate(bodies, start=1):
        head = "The Pilot's Handbook" if n % 2 == 0 else "Safety at the Quay"
        pages.append(page(head if n > 1 else "", body, str(n)))  # the first page has no running head
    assert [p.strip() for p in clean_pdf_pages(pages)] == bodies


def test_a_repeated_line_inside_the_page_is_kept():
    # the same closing sentence on every page, but under a footer line that changes: not furniture
    people = ["Ada", "Bram", "Cora", "Dirk"]
    pages = [f"{t.title()} page.\nSee the annex.\nSigned by {p}" for t, p in zip(TOPICS[:4], people, strict=True)]
    assert clean_pdf_pages(pages) == pages


def test_content_that_does_not_repeat_enough_is_kept():
    pages = [page("Chapter notes", "First body.", "1"), page("Other top", "Second body.", "2")]
    pages += [page(f"Top line {w}", f"Body {w}.", "x") for w in ("three", "four", "five")]
    cleaned = clean_pdf_pages(pages)
    assert "Chapter notes" in cleaned[0]  # on 1 of 5 pages
    assert all(f"Body {w}." in p for w, p in zip(("three", "four", "five"), cleaned[2:], strict=True))


def test_two_pages_are_too_few_to_tell():
    pages = [page("Header", "Body one.", "1"), page("Header", "Body two.", "2")]
    assert clean_pdf_pages(pages) == pages


def test_a_table_header_row_repeated_on_each_page_is_kept():
    row = "Terminal      Tonnes      Vessels"
    pages = [f"{row}\nNorth {n}       1,200       14\nSouth {n}       900       11" for n in range(4)]
    assert clean_pdf_pages(pages) == pages


def make_report_pdf(path: Path, pages: int = 4) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    width, height = A4
    for n in range(1, pages + 1):
        c.setFont("Helvetica", 9)
        c.drawString(72, height - 40, "Harbor Authority Annual Report 2023")
        c.drawCentredString(width / 2, 30, f"Page {n} of {pages}")
        c.setFont("Helvetica", 11)
        if n == 1:
            c.drawString(72, 760, "Contents")
            for i, (title, at) in enumerate((("Introduction", 2), ("Cargo volumes", 3), ("Outlook", 4))):
                c.drawString(72, 730 - 18 * i, title)
                c.drawString(180, 730 - 18 * i, "." * 60)
                c.drawRightString(520, 730 - 18 * i, str(at))
        else:
            topic = TOPICS[n]
            c.drawString(72, 760, f"This page is about {topic}.")
            # what an extractor prints for a font without a ToUnicode map
            c.drawString(72, 740, f"Work on {topic} /g68/g83/g83/g79/g76 went well.")
        c.showPage()
    c.save()
    return path


def test_pdf_reads_without_headers_footers_leaders_or_glyph_names(tmp_path):
    document = load_document(make_report_pdf(tmp_path / "report.pdf"))
    text = document.text
    assert "Harbor Authority Annual Report" not in text
    assert not re.search(r"Page \d+ of", text)
    assert not re.search(r"/g\d+", text)
    assert "...." not in text
    assert "Contents\n\nIntroduction … 2\nCargo volumes … 3\nOutlook … 4\n\n" in text  # an entry a line
    for topic in TOPICS[2:5]:
        assert f"This page is about {topic}." in text
        assert f"Work on {topic} went well." in text
