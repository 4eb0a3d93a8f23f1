"""A reader skips the part it cannot read and keeps the rest (issue 47, part 2): a valid .pptx with
a 3-D bar chart (bar3DChart, which python-pptx's plot API refuses) is read with its slides, its text
and the chart's categories, series and values (from the chart's XML); a chart whose part is missing
costs that chart only, with a warning naming the file, the slide and the shape."""

from __future__ import annotations

import logging
import re
import zipfile
from pathlib import Path

import pytest

from longqa.retrieval.read.bounded import BoundedReader, ReadLimits
from longqa.retrieval.read.loaders import load_document


def _chart_deck(path: Path) -> Path:
    """Three slides: a title and text, a clustered column chart, and a second chart."""
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Harbour report"
    first.placeholders[1].text = "The north quay handled more grain than ever before."
    for title, series in (
        ("Harbour tonnage", {"Grain": (120.5, 133), "Timber": (40, 47)}),
        ("Berths", {"Used": (7, 9)}),
    ):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
        data = CategoryChartData()
        data.categories = ["2021", "2022"]
        for name, values in series.items():
            data.add_series(name, values)
        slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4), data)
    deck.save(path)
    return path


def _rewrite(path: Path, edits: dict[str, tuple[bytes, bytes]]) -> Path:
    """The same zip with `old` replaced by `new` in the named members."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            old, new = edits.get(info.filename, (b"", b""))
            if old:
                assert old in data, info.filename
                data = data.replace(old, new)
            target.writestr(info, data)
    return path


def bar3d_deck(path: Path) -> Path:
    """A valid deck whose first chart is a 3-D bar chart: python-pptx opens it, but its plot API
    raises "unsupported plot type" for bar3DChart (PowerPoint writes this for a 3-D column chart)."""
    _chart_deck(path)
    return _rewrite(
        path,
        {"ppt/charts/chart1.xml": (b"c:barChart>", b"c:bar3DChart>")},
    )


def test_a_3d_bar_chart_is_read_with_its_numbers_and_the_rest_of_the_deck(tmp_path):
    import pptx

    path = bar3d_deck(tmp_path / "bar3d.pptx")
    chart = next(s for s in pptx.Presentation(str(path)).slides[1].shapes if s.has_chart).chart
    with pytest.raises(ValueError, match="unsupported plot type"):
        list(chart.plots)  # what dropped the whole file before
    document = load_document(path)
    text = document.text
    assert "## Slide 1: Harbour report" in text and "more grain than ever before" in text
    assert "## Slide 2: Harbour tonnage" in text and "## Slide 3: Berths" in text
    assert "|  | Grain | Timber |" in text
    assert "| 2021 | 120.5 | 40 |" in text and "| 2022 | 133 | 47 |" in text
    assert "| 2022 | 9 |" in text  # the ordinary chart of slide 3, through python-pptx
    assert document.warnings == []  # nothing of it was left out


def test_a_chart_whose_part_is_missing_costs_that_chart_with_a_warning_naming_slide_and_shape(tmp_path, caplog):
    path = _chart_deck(tmp_path / "broken.pptx")
    slide = "ppt/slides/slide3.xml"
    with zipfile.ZipFile(path) as z:
        chart_id = re.search(rb'<c:chart [^>]*r:id="(rId\d+)"', z.read(slide)).group(1)
    _rewrite(path, {slide: (b'r:id="' + chart_id + b'"', b'r:id="rId999"')})
    reader = BoundedReader(ReadLimits())
    try:
        with caplog.at_level(logging.WARNING):
            document = reader.load(path, 100_000)
    finally:
        reader.close()
    assert "| 2021 | 120.5 | 40 |" in document.text and "## Slide 3: Berths" in document.text
    assert "Used" not in document.text
    assert len(document.warnings) == 1 and document.warnings[0].startswith("slide 3: shape 'Chart"), document.warnings
    assert "not read (KeyError" in document.warnings[0]
    assert any("broken.pptx" in r.getMessage() and "slide 3: shape" in r.getMessage() for r in caplog.records)


def test_a_docx_chart_is_read_with_its_numbers_and_a_header_that_is_not_xml_costs_the_header(tmp_path):
    from docx import Document as WordDocument

    deck = bar3d_deck(tmp_path / "deck.pptx")
    with zipfile.ZipFile(deck) as z:
        chart = z.read("ppt/charts/chart1.xml")
    word = WordDocument()
    word.sections[0].header.paragraphs[0].text = "Harbour Authority"
    word.add_paragraph("The north quay handled more grain than ever before.")
    word.save(tmp_path / "plain.docx")
    ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    with zipfile.ZipFile(tmp_path / "plain.docx") as z:
        files = {name: z.read(name) for name in z.namelist()}
    files["word/charts/chart1.xml"] = chart
    files["word/_rels/document.xml.rels"] = files["word/_rels/document.xml.rels"].replace(
        b"</Relationships>",
        f'<Relationship Id="rIdC9" Type="{ns}/chart" Target="charts/chart1.xml"/></Relationships>'.encode(),
    )
    files["[Content_Types].xml"] = files["[Content_Types].xml"].replace(
        b"</Types>",
        b'<Override PartName="/word/charts/chart1.xml" '
        b'ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/></Types>',
    )
    header = next(name for name in files if re.fullmatch(r"word/header\d*\.xml", name))
    files[header] = files[header].replace(b"</w:hdr>", b"<w:p>")  # not well-formed any more
    path = tmp_path / "report.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    document = load_document(path)
    assert "more grain than ever before" in document.text and "| 2022 | 133 | 47 |" in document.text
    assert "Harbour Authority" not in document.text
    assert document.warnings == [f"part '{Path(header).stem}' not read (not well-formed XML)"]


def test_an_xlsx_sheet_that_cannot_be_parsed_costs_that_sheet(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Tonnage"
    book.active.append(["grain", 120])
    book.create_sheet("Berths").append(["timber", 7])
    book.save(tmp_path / "book.xlsx")
    bad = b'<sheetData><row r="1"><c r="A1" t="n"><v>not a number</v></c></row>'
    _rewrite(tmp_path / "book.xlsx", {"xl/worksheets/sheet2.xml": (b"<sheetData>", bad)})
    document = load_document(tmp_path / "book.xlsx")
    assert "## Sheet: Tonnage" in document.text and "| grain | 120 |" in document.text
    assert "Berths" not in document.text and "timber" not in document.text
    assert document.warnings == ["sheet 'Berths' not read (CalamineError: Parse float error: invalid float literal)"]


def test_a_slide_that_is_not_xml_costs_that_slide(tmp_path):
    path = _rewrite(_chart_deck(tmp_path / "deck.pptx"), {"ppt/slides/slide2.xml": (b"</p:sld>", b"<p:sld>")})
    document = load_document(path)
    assert "## Slide 1: Harbour report" in document.text and "| 2022 | 9 |" in document.text
    assert "Harbour tonnage" not in document.text and "120.5" not in document.text
    assert document.warnings[0] == "part 'slide 2' not read (not well-formed XML)", document.warnings
    assert all(w.startswith(("part 'slide 2'", "slide 2 ")) for w in document.warnings), document.warnings


def test_an_odt_object_and_styles_that_are_not_xml_cost_those_parts(tmp_path):
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink"'
    )
    content = (
        f"<office:document-content {ns}><office:body><office:text><text:p>Before the chart.</text:p>"
        '<text:p><draw:frame><draw:object xlink:href="./Object 1"/></draw:frame></text:p>'
        "<text:p>After the chart.</text:p></office:text></office:body></office:document-content>"
    )
    path = tmp_path / "report.odt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
        z.writestr("styles.xml", "<office:document-styles")  # cut short
        z.writestr("Object 1/content.xml", "<office:document-content><unclosed>")
    document = load_document(path)
    assert "Before the chart." in document.text and "After the chart." in document.text
    styles, chart = document.warnings  # the styles are read first (the headers), then the body
    assert styles.startswith("page headers and footers not read ('styles.xml' is not well-formed XML"), styles
    assert chart.startswith("embedded object 'Object 1' not read ('Object 1/content.xml' is not well-formed"), chart
