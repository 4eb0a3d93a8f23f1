"""Issue 30's formats and the text the older readers lost: .pptx, .xlsx, .csv/.tsv and .odt read into
paragraphs and pipe tables; Word text boxes, headers/footers, footnotes and comments; warnings for
what a reader cannot read. Every fixture is written here, by the libraries or by hand."""

from __future__ import annotations

import datetime as dt
import logging
import zipfile
from pathlib import Path

import pytest

from longqa.retrieval.read.bounded import BoundedReader, ReadLimits
from longqa.retrieval.read.loaders import DocumentError, load_document

from . import hostile_builders as build

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def tables(document) -> list[str]:
    return [document.paragraph_text(p) for p in document.paragraphs if p.is_table]


def blocks(document) -> list[str]:
    return [document.paragraph_text(p) for p in document.paragraphs]


# -- PPTX -------------------------------------------------------------------------------------------------


def _pptx(path: Path) -> Path:
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Harbor dues"
    first.placeholders[1].text_frame.text = "Dues rose by two percent."
    first.placeholders[1].text_frame.add_paragraph().text = "Pilots pay half."
    low = first.shapes.add_textbox(Inches(1), Inches(6.5), Inches(5), Inches(0.5))
    low.text_frame.text = "Footnote box at the bottom."
    first.notes_slide.notes_text_frame.text = "Mention the pilots' union."
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "Tonnage"
    shape = second.shapes.add_table(3, 2, Inches(0.5), Inches(1.5), Inches(6), Inches(1.5))
    for r, row in enumerate([["Berth", "Tonnes"], ["North", "1200"], ["South", "800"]]):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(5), Inches(5), Inches(0.5)).text_frame.text = "Grouped caption."
    presentation.save(path)
    return path


def test_pptx_slides_in_order_with_titles_bodies_tables_groups_and_notes(tmp_path):
    document = load_document(_pptx(tmp_path / "deck.pptx"))
    assert blocks(document) == [
        "## Slide 1: Harbor dues",
        "Dues rose by two percent.\nPilots pay half.",
        "Footnote box at the bottom.",
        "Notes: Mention the pilots' union.",
        "## Slide 2: Tonnage",
        "| Berth | Tonnes |\n|---|---|\n| North | 1200 |\n| South | 800 |",
        "Grouped caption.",
    ]
    assert tables(document) == [blocks(document)[5]]
    assert document.encoding == "pptx" and document.warnings == []


def test_pptx_that_is_not_a_zip_or_is_a_bomb_is_refused(tmp_path):
    fake = tmp_path / "fake.pptx"
    fake.write_bytes(b"not a zip at all")
    with pytest.raises(DocumentError, match="not a valid PPTX"):
        load_document(fake)
    with pytest.raises(DocumentError, match="too many paragraphs in the PPTX"):
        load_document(build.pptx_bomb(tmp_path / "bomb.pptx", 30), max_words=10_000)


# -- XLSX -------------------------------------------------------------------------------------------------


def test_xlsx_each_sheet_is_a_named_table_of_saved_values(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Dues 2024"
    sheet.append(["Berth", "Tonnes", "Opened"])
    sheet.append(["North | East", 1200, dt.date(2024, 3, 1)])
    sheet.append([None, None, None])  # an empty row is left out
    sheet.append(["South", 2.5, True])
    other = workbook.create_sheet("Staff")
    other.append(["Role", "Count"])
    other.append(["Pilot", 12])
    workbook.create_sheet("Empty")
    path = tmp_path / "book.xlsx"
    workbook.save(path)
    document = load_document(path)
    assert blocks(document) == [
        "## Sheet: Dues 2024",
        "| Berth | Tonnes | Opened |\n|---|---|---|\n| North / East | 1200 | 2024-03-01 |\n| South | 2.5 | TRUE |",
        "## Sheet: Staff",
        "| Role | Count |\n|---|---|\n| Pilot | 12 |",
    ]
    assert len(tables(document)) == 2


def test_xlsx_chart_sheet_is_named_in_the_warnings(tmp_path):
    import openpyxl
    from openpyxl.chart import BarChart, Reference

    workbook = openpyxl.Workbook()
    workbook.active.append(["Year", "Tonnes"])
    workbook.active.append([2024, 5])
    chart = BarChart()
    chart.add_data(Reference(workbook.active, min_col=2, min_row=1, max_row=2), titles_from_data=True)
    workbook.create_chartsheet("Chart").add_chart(chart)
    path = tmp_path / "chart.xlsx"
    workbook.save(path)
    assert load_document(path).warnings == ["1 chart sheet(s) not read"]


def test_xlsx_padded_rows_and_cell_bombs_are_refused_with_the_cell_count(tmp_path):
    with pytest.raises(DocumentError, match=r"XLSX sheet spans 13 rows x 16,384 columns, more than 205,000 cells"):
        load_document(build.xlsx_padded_rows(tmp_path / "pad.xlsx"), max_words=10_000)
    two_corners = build.xlsx_sheet(
        tmp_path / "corners.xlsx",
        b'<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row>',
    )
    with pytest.raises(DocumentError, match="spans 1,048,576 rows x 16,384 columns"):  # 2 cells, a 17-billion grid
        load_document(two_corners)
    with pytest.raises(DocumentError, match=r"too many cells in the XLSX \(more than 205,000"):
        load_document(build.xlsx_cell_bomb(tmp_path / "bomb.xlsx", 20), max_words=10_000)


def test_xlsx_that_is_an_old_binary_workbook_is_refused_clearly(tmp_path):
    path = tmp_path / "old.xlsx"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(DocumentError, match="OLE compound file"):
        load_document(path)


# -- CSV / TSV ------------------------------------------------------------------------------------------


def test_csv_delimiter_is_sniffed_and_quoted_fields_kept(tmp_path):
    path = tmp_path / "dues.csv"
    path.write_text('Berth;Tonnes;Note\nNorth;1200;"dredged; deepened"\nSouth;800;\n', "utf-8")
    document = load_document(path)
    assert blocks(document) == [
        "| Berth | Tonnes | Note |\n|---|---|---|\n| North | 1200 | dredged; deepened |\n| South | 800 |  |"
    ]
    assert document.paragraphs[0].is_table


def test_tsv_is_split_on_tabs_and_pipes_in_cells_do_not_break_columns(tmp_path):
    path = tmp_path / "staff.tsv"
    path.write_text("Role\tCount\nPilot | senior\t12\n", "utf-8")
    assert load_document(path).text == "| Role | Count |\n|---|---|\n| Pilot / senior | 12 |"


def test_csv_with_a_field_over_csvs_default_size_limit_is_read(tmp_path):
    """csv's own limit (131,072 characters a field) refused a whole legitimate file; the text reader's bound holds."""
    path = tmp_path / "field.csv"
    path.write_text('a,b\n"' + "x " * 100_000 + 'end of note",1\n', "utf-8")
    text = load_document(path).text
    assert text.startswith("| a | b |") and "end of note | 1 |" in text


def test_a_single_column_csv_reads_as_one_column(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("Name\nNorth quay\nSouth quay\n", "utf-8")
    assert load_document(path).text == "| Name |\n|---|\n| North quay |\n| South quay |"


# -- ODT -------------------------------------------------------------------------------------------------


def _odt(path: Path) -> Path:
    from odf import draw, office, table, text
    from odf.opendocument import OpenDocumentText

    document = OpenDocumentText()
    document.text.addElement(text.H(outlinelevel=2, text="Harbor report"))
    p = text.P(text="Dues rose")
    note = text.Note(noteclass="footnote", id="ftn1")
    note.addElement(text.NoteCitation(text="1"))
    body = text.NoteBody()
    body.addElement(text.P(text="Since March."))
    note.addElement(body)
    p.addElement(note)
    p.addText(" this year.")
    comment = office.Annotation()
    comment.addElement(text.P(text="Check the figure."))
    p.addElement(comment)
    document.text.addElement(p)
    framed = text.P(text="See the box.")
    frame = draw.Frame(width="5cm", height="2cm", anchortype="paragraph")
    box = draw.TextBox()
    box.addElement(text.P(text="Boxed text."))
    frame.addElement(box)
    framed.addElement(frame)
    document.text.addElement(framed)
    items = text.List()
    for value in ("First item", "Second item"):
        item = text.ListItem()
        item.addElement(text.P(text=value))
        items.addElement(item)
    document.text.addElement(items)
    grid = table.Table(name="T")
    for row in (["Berth", "Tonnes"], ["North", "1200"]):
        tr = table.TableRow()
        for value in row:
            cell = table.TableCell()
            cell.addElement(text.P(text=value))
            tr.addElement(cell)
        grid.addElement(tr)
    document.text.addElement(grid)
    document.save(str(path))
    return path


def test_odt_headings_notes_comments_frames_lists_and_tables_in_order(tmp_path):
    document = load_document(_odt(tmp_path / "report.odt"))
    assert blocks(document) == [
        "## Harbor report",
        "Dues rose[^1] this year.",
        "See the box.",
        "Boxed text.",
        "First item",
        "Second item",
        "| Berth | Tonnes |\n|---|---|\n| North | 1200 |",
        "[^1] Since March.",
        "[comment] Check the figure.",
    ]


def test_odt_repeated_rows_and_cells_are_bounded(tmp_path):
    document = load_document(build.odt_repeated_table(tmp_path / "repeat.odt"))
    assert blocks(document)[0] == "Before the table."
    rows = tables(document)[0].split("\n")
    assert len(rows) == 101 and rows[0].count("x") == 100  # 100 rows (and a rule) of 100 cells, not 10^12


def test_odt_of_another_kind_is_refused(tmp_path):
    path = tmp_path / "sheet.odt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", "<a/>")
    with pytest.raises(DocumentError, match="not an OpenDocument text"):
        load_document(path)


# -- DOCX: what python-docx's paragraphs leave out -----------------------------------------------------

_BOX = (
    f'<w:r xmlns:w="{W}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
    "<wps:txbx><w:txbxContent><w:p><w:r><w:t>Boxed text.</w:t></w:r></w:p></w:txbxContent></wps:txbx>"
    "</w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox><w:txbxContent><w:p><w:r><w:t>Boxed text.</w:t>"
    "</w:r></w:p></w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
)


def _docx_with_furniture(path: Path) -> Path:
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "Harbor Authority, confidential"
    document.sections[0].footer.paragraphs[0].text = "7"  # a page number alone is furniture
    paragraph = document.add_paragraph("Body text.")
    paragraph._p.append(parse_xml(_BOX))
    document.add_paragraph("After the box.")
    document.save(path)
    with zipfile.ZipFile(path) as z:
        files = {name: z.read(name) for name in z.namelist()}
    files["word/footnotes.xml"] = (
        f'<w:footnotes xmlns:w="{W}"><w:footnote w:type="separator" w:id="-1"><w:p/></w:footnote>'
        '<w:footnote w:id="1"><w:p><w:r><w:t>Since March.</w:t></w:r></w:p></w:footnote></w:footnotes>'
    ).encode()
    files["word/charts/chart1.xml"] = b"<c:chartSpace xmlns:c='urn:x'/>"
    rels = (
        files["word/_rels/document.xml.rels"]
        .decode()
        .replace(
            "</Relationships>",
            '<Relationship Id="rIdF" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"'
            ' Target="footnotes.xml"/><Relationship Id="rIdC" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/chart" Target="charts/chart1.xml"/></Relationships>',
        )
    )
    files["word/_rels/document.xml.rels"] = rels.encode()
    files["[Content_Types].xml"] = (
        files["[Content_Types].xml"]
        .decode()
        .replace(
            "</Types>",
            '<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.'
            'wordprocessingml.footnotes+xml"/><Override PartName="/word/charts/chart1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/></Types>',
        )
        .encode()
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def test_docx_text_box_once_header_with_words_footnote_and_a_chart_warning(tmp_path):
    document = load_document(_docx_with_furniture(tmp_path / "report.docx"))
    assert blocks(document) == [
        "Harbor Authority, confidential",
        "Body text.",
        "Boxed text.",  # once: the VML fallback repeats the DrawingML box
        "After the box.",
        "[^1] Since March.",
    ]
    assert document.warnings == ["charts not read (their text, if any, is not indexed)"]


def test_a_partly_read_file_is_named_in_a_warning_by_the_bounded_reader(tmp_path, caplog):
    path = _docx_with_furniture(tmp_path / "report.docx")
    reader = BoundedReader(ReadLimits(timeout_s=60))
    try:
        with caplog.at_level(logging.WARNING, logger="longqa.retrieval.read.bounded"):
            document = reader.load(path, max_words=10_000)
    finally:
        reader.close()
    assert document.warnings == ["charts not read (their text, if any, is not indexed)"]
    assert f"{path}: not fully read: charts not read" in caplog.text


def test_a_strict_open_xml_word_file_is_read(tmp_path):
    import docx

    from longqa.retrieval.read.office.word import _STRICT_NAMESPACES

    plain = tmp_path / "plain.docx"
    document = docx.Document()
    document.add_heading("Strict title", 1)
    document.add_paragraph("Strict body.")
    document.save(plain)
    strict = tmp_path / "strict.docx"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(strict, "w") as out:
        for name in source.namelist():
            data = source.read(name)
            for strict_ns, transitional in _STRICT_NAMESPACES.items():
                data = data.replace(transitional, strict_ns)
            out.writestr(name, data)
    assert b"purl.oclc.org" in zipfile.ZipFile(strict).read("_rels/.rels")
    assert load_document(strict).text == "# Strict title\n\nStrict body."


XLS_SAMPLE = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "tika" / "testEXCEL.xls"  # Apache-2.0


def test_an_old_binary_xls_workbook_is_read_as_sheets_of_tables():
    document = load_document(XLS_SAMPLE)
    assert blocks(document)[0] == "## Sheet: Feuil1"
    rows = tables(document)[0].split("\n")
    assert rows[0].startswith("| Sample Excel Worksheet - Numbers and their Squares |")
    assert "|  | Number | Square |" in rows and "|  | 14 | 196 |" in rows


def test_xls_numbers_are_shown_as_excel_displays_them():
    rows = tables(load_document(XLS_SAMPLE.with_name("testEXCEL-formats.xls")))[0].split("\n")
    assert "|  | / | Number #,##0.00 | 1,599.99 | -1,599.99 |" in rows
    assert "|  | / | Currency $#,##0.00;[Red]($#,##0.00) | $1,599.99 | ($1,599.99) |" in rows
    assert "|  | / | Percentage (0.025) | 3% | 2.50% |" in rows
    assert "|  | / | Time Format: h:mm | 6:15 | 18:15 |" in rows
    assert "|  | / | Date Format: d-mmm-yy | 17-May-07 |  |" in rows


def test_an_xls_that_is_not_an_old_workbook_is_refused_clearly(tmp_path):
    text = tmp_path / "text.xls"
    text.write_text("Name\tQty\n", "utf-8")
    with pytest.raises(DocumentError, match="not an Excel 97-2003 workbook"):
        load_document(text)
    cut = tmp_path / "cut.xls"
    cut.write_bytes(XLS_SAMPLE.read_bytes()[:3000])
    with pytest.raises(DocumentError, match="corrupt XLS"):
        load_document(cut)


def test_odt_embedded_spreadsheet_and_formula_are_read_in_place(tmp_path):
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink"'
    )
    content = (
        f"<office:document-content {ns}><office:body><office:text><text:p>Before.</text:p>"
        '<text:p><draw:frame><draw:object xlink:href="./Object 1"/></draw:frame>'
        '<draw:frame><draw:object xlink:href="./Object 2"/></draw:frame></text:p>'
        "<text:p>After.</text:p></office:text></office:body></office:document-content>"
    )
    sheet = (
        f"<office:document-content {ns}><office:body><office:spreadsheet><table:table>"
        "<table:table-row><table:table-cell><text:p>Berth</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>North</text:p></table:table-cell></table:table-row>"
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    path = tmp_path / "embedded.odt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
        z.writestr("Object 1/content.xml", sheet)
        z.writestr(
            "Object 2/content.xml",
            '<math:math xmlns:math="http://www.w3.org/1998/Math/MathML"><math:semantics><math:mi>a</math:mi>'
            '<math:annotation math:encoding="StarMath 5.0">a^2 + b^2 = c^2</math:annotation>'
            "</math:semantics></math:math>",
        )
    document = load_document(path)
    assert blocks(document) == ["Before.", "| Berth |\n|---|\n| North |", "a^2 + b^2 = c^2", "After."]
    assert document.warnings == []


def test_an_epub_spine_item_that_is_not_xhtml_is_named_in_the_warnings(tmp_path):
    from .test_formats import OPF, make_epub

    opf = OPF.replace(b"</manifest>", b'<item id="p1" href="page.svg" media-type="image/svg+xml"/></manifest>').replace(
        b"</spine>", b'<itemref idref="p1"/></spine>'
    )
    document = load_document(make_epub(tmp_path / "book.epub", {"OEBPS/content.opf": opf, "OEBPS/page.svg": b"<svg/>"}))
    assert "The tide turned at noon." in document.text
    assert document.warnings == ["1 spine item(s) that are not XHTML (images, SVG) not read"]
