"""Images' alternative text read into the document as `[image: ...]` lines (retrieval/read/alt_text.py):
HTML `<img alt>`, EPUB images, Markdown `![alt](src)`, Word `wp:docPr` and PowerPoint `p:cNvPr`
descriptions; empty alt text and file names left out. Every fixture is written here."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from longqa.retrieval.read.alt_text import image_line
from longqa.retrieval.read.loaders import load_document

from .test_formats import chapter, make_epub


def blocks(document) -> list[str]:
    return [document.paragraph_text(p) for p in document.paragraphs]


def tiny_png(path: Path) -> Path:
    """A valid 1x1 PNG, written by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))
    return path


def test_image_line_keeps_what_says_something():
    assert image_line("A map of the harbour") == "[image: A map of the harbour]"
    assert image_line("Cranes", "Cranes at dusk") == "[image: Cranes at dusk]"
    assert image_line("Dues by year", "Chart 2024") == "[image: Dues by year - Chart 2024]"
    for nothing in (
        "",
        "   ",
        None,
        "photo.JPG",
        "IMG_2041.jpeg",
        "IMG_2041",
        "DSC01234",
        "image",
        "Picture 3",
        "https://x.org/a.png",
    ):
        assert image_line(nothing) == "", nothing
    assert len(image_line("word " * 400)) < 520


def test_html_img_alt_is_read_in_place_and_empty_alt_is_skipped(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<p>The harbour:</p><img src='map.png' alt='A map of the harbour'><img src='s.gif' alt=''>"
        "<img src='x.png' alt='x.png'><table><tr><th>Crest</th></tr><tr><td><img alt='The port crest'></td></tr>"
        "</table><p>End.</p>",
        "utf-8",
    )
    assert blocks(load_document(page)) == [
        "The harbour:",
        "[image: A map of the harbour]",
        "| Crest |\n|---|\n| [image: The port crest] |",
        "End.",
    ]


def test_epub_img_alt_is_read(tmp_path):
    body = "<p>The pilot boarded at dawn.</p><img src='../img/boat.jpg' alt='The pilot boat alongside'/>"
    book = make_epub(tmp_path / "pilot.epub", {"OEBPS/text/one.xhtml": chapter("Chapter One", body)})
    assert blocks(load_document(book))[:3] == [
        "# Chapter One",
        "The pilot boarded at dawn.",
        "[image: The pilot boat alongside]",
    ]


def test_markdown_images_become_alt_lines_outside_code(tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text(
        '# Dock\n\n![Map of the harbour](img/map.png "Harbour map")\n\n![](blank.png) ![shot.png](shot.png)\n\n'
        '<img src="c.png" alt="Cranes &amp; gantries">\n\n`![code](kept.png)`\n',
        "utf-8",
    )
    assert blocks(load_document(notes)) == [
        "# Dock",
        "[image: Map of the harbour - Harbour map]",
        "[image: Cranes & gantries]",
        "`![code](kept.png)`",
    ]


def test_word_picture_descriptions_are_read_after_their_text(tmp_path):
    import docx

    document = docx.Document()
    paragraph = document.add_paragraph("The berth plan:")
    paragraph.add_run().add_picture(str(tiny_png(tmp_path / "plan.png")))
    document.add_paragraph().add_run().add_picture(str(tiny_png(tmp_path / "blank.png")))
    properties = document.element.body.xpath(".//wp:docPr")
    properties[0].set("descr", "Plan of berths one to four")
    properties[0].set("title", "Berth plan")
    properties[1].set("descr", "blank.png")
    path = tmp_path / "plan.docx"
    document.save(path)
    assert blocks(load_document(path)) == ["The berth plan:\n[image: Plan of berths one to four - Berth plan]"]


def test_powerpoint_picture_descriptions_are_read_in_reading_order(tmp_path):
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "The harbour"
    picture = slide.shapes.add_picture(str(tiny_png(tmp_path / "map.png")), Inches(1), Inches(2))
    picture._element.nvPicPr.cNvPr.set("descr", "Aerial view of the harbour")
    unnamed = slide.shapes.add_picture(str(tiny_png(tmp_path / "logo.png")), Inches(1), Inches(4))
    unnamed._element.nvPicPr.cNvPr.set("descr", "")
    box = slide.shapes.add_textbox(Inches(1), Inches(5), Inches(4), Inches(1))
    box.text_frame.text = "Dues rose."
    path = tmp_path / "harbour.pptx"
    presentation.save(path)
    assert blocks(load_document(path)) == [
        "## Slide 1: The harbour",
        "[image: Aerial view of the harbour]",
        "Dues rose.",
    ]


def test_odt_picture_descriptions_are_read_as_image_lines(tmp_path):
    import zipfile

    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
        'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink"'
    )
    picture = (
        '<draw:frame><draw:image xlink:href="Pictures/{0}"/>'
        "<svg:title>{1}</svg:title><svg:desc>{2}</svg:desc></draw:frame>"
    )
    content = (
        f"<office:document-content {ns}><office:body><office:text>"
        f"<text:p>The berths:{picture.format('map.png', 'Berth map', 'Plan of berths one to four')}</text:p>"
        f"<text:p>{picture.format('logo.png', 'logo.png', '')}After.</text:p>"
        "</office:text></office:body></office:document-content>"
    )
    path = tmp_path / "berths.odt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
    assert blocks(load_document(path)) == ["The berths:", "[image: Plan of berths one to four - Berth map]", "After."]
