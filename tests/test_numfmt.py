"""Numbers shown as Excel displays them under their number format (retrieval/read/office/numfmt.py)."""

import pytest

from longqa.retrieval.read.office.numfmt import display, excel_datetime, general

CUSTOM_DATE = '"At"\\ h:mm\\ AM/PM\\ "on"\\ dddd\\ mmmm\\ d","\\ yyyy'
CURRENCY = '"$"#,##0.00_);[Red]\\("$"#,##0.00\\)'


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (1599.99, "#,##0.00", "1,599.99"),
        (-1599.99, "#,##0.00", "-1,599.99"),
        (1599.99, CURRENCY, "$1,599.99 "),
        (-1599.99, CURRENCY, "($1,599.99)"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        (1234567.891, "#,##0", "1,234,568"),
        (1234, '0.0,"K"', "1.2K"),
        (0.5, "#.00", ".50"),
        (0.125, "0.0#", "0.13"),
        (3, "000-0000", "000-0003"),
        (0, '0.00;(0.00);"-"', "-"),
        (0.025, "0%", "3%"),
        (0.025, "0.00%", "2.50%"),
        (198356388.0, "0.00E+00", "1.98E+08"),
        (-198356388.0, "0.00E+00", "-1.98E+08"),
        (2.5, "# ?/?", "2 1/2"),
        (0.75, "# ?/8", "6/8"),
        (19.99, '0\\ "dollars and"\\ .00\\ "cents"', "19 dollars and .99 cents"),
        (5, "@", "5"),
        (12.3456, "General", "12.3456"),
    ],
)
def test_numbers_are_shown_under_their_format(value, code, shown):
    assert display(value, code) == shown


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (39219.84792480324, "d-mmm-yy", "17-May-07"),
        (40089.84792480324, "m/d/yy", "10/3/09"),
        (33966.260424618056, "h:mm AM/PM", "6:15 AM"),
        (33966.760424803244, "h:mm", "18:15"),
        (39466.190980358806, "m/d/yy h:mm", "1/19/08 4:35"),
        (45000, "dddd, mmmm dd, yyyy", "Wednesday, March 15, 2023"),
        (45000.5, "yyyy-mm-dd hh:mm:ss.00", "2023-03-15 12:00:00.00"),
        (1.5, "[h]:mm:ss", "36:00:00"),
        (39219.18056369212, CUSTOM_DATE, "At 4:20 AM on Thursday May 17, 2007"),
    ],
)
def test_dates_and_times_are_shown_under_their_format(value, code, shown):
    assert display(value, code) == shown


def test_general_shows_whole_numbers_whole_and_others_to_ten_digits():
    assert general(14.0) == "14"
    assert general(0.1 + 0.2) == "0.3"
    assert general(1e20) == "1E+20"
    assert display(0.1 + 0.2, "") == "0.3"


def test_the_1904_date_system_and_the_1900_leap_year_bug():
    assert excel_datetime(0, date1904=True).date().isoformat() == "1904-01-01"
    assert excel_datetime(1).date().isoformat() == "1900-01-01"
    assert excel_datetime(61).date().isoformat() == "1900-03-01"
    assert display(39219.85, "yyyy-mm-dd", date1904=True) == "2011-05-18"


def test_an_unreadable_or_infinite_case_falls_back_to_general():
    assert display(float("inf"), "0.00") == "INF"
    assert display(2.5, '"text only"') == "text only"


def test_xlsx_numbers_dates_and_times_are_shown_under_their_formats(tmp_path):
    import datetime as dt

    import openpyxl

    from longqa.retrieval.read.loaders import load_document

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Dues"
    sheet["B3"] = "Berth"  # the table starts at B3: formats are found by the cell's own place
    sheet["C3"] = "Dues"
    sheet["D3"] = "Share"
    sheet["E3"] = "Opened"
    sheet["F3"] = "Plain"
    rows = [
        ("North", 1599.99, 0.025, dt.datetime(2007, 5, 17, 18, 15), 2.5),
        ("South", -1234567.5, 1, dt.date(2024, 3, 1), 7),
    ]
    for r, (name, dues, share, opened, plain) in enumerate(rows, 4):
        sheet.cell(r, 2, name)
        sheet.cell(r, 3, dues).number_format = '"$"#,##0.00_);[Red]\\("$"#,##0.00\\)'
        sheet.cell(r, 4, share).number_format = "0.00%"
        sheet.cell(r, 5, opened).number_format = "d-mmm-yy h:mm"
        sheet.cell(r, 6, plain)
    workbook.epoch = openpyxl.utils.datetime.CALENDAR_MAC_1904  # the 1904 date system is read too
    path = tmp_path / "dues.xlsx"
    workbook.save(path)
    assert load_document(path).text == (
        "## Sheet: Dues\n\n| Berth | Dues | Share | Opened | Plain |\n|---|---|---|---|---|\n"
        "| North | $1,599.99 | 2.50% | 17-May-07 18:15 | 2.5 |\n"
        "| South | ($1,234,567.50) | 100.00% | 1-Mar-24 0:00 | 7 |"
    )


def test_xlsx_with_an_absurd_style_index_keeps_its_other_formats(tmp_path):
    import zipfile
    from pathlib import Path

    from longqa.retrieval.read.loaders import load_document

    source = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "tika" / "testEXCEL-formats.xlsx"  # Apache-2.0
    path = tmp_path / "hostile.xlsx"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name == "xl/worksheets/sheet1.xml":  # a style index of 5,000 digits, another of a superscript two
                data = data.replace(b'<c r="D4" s="1">', b'<c r="D4" s="' + b"9" * 5000 + b'">')
                data = data.replace(b'<c r="E5" s="2">', '<c r="E5" s="²">'.encode())
            out.writestr(name, data)
    rows = load_document(path).text.split("\n")
    assert "| / | Number #,##0.00 | 1599.99 | -1,599.99 |" in rows
    assert "| / | Currency $#,##0.00;[Red]($#,##0.00) | $1,599.99 | -1599.99 |" in rows
