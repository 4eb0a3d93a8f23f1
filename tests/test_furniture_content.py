"""Running headers and footers leave a PDF's pages, but content never does: a line that repeats
with numbers that change otherwise than a page number (a date and an amount, an entry number) is
content, and removal never takes a page's only text (nor, so, a whole document's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.retrieval.read.loaders import load_document
from longqa.retrieval.read.pdf.pdf_text import clean_pdf_pages

AMOUNTS = [1250, 980, 4410, 3075]
BODIES = [
    "Deposits came from the harbour dues of the north quay.",
    "A dredging invoice from Holt and Sons was paid.",
    "The buoy tender Greyling was sold to Anker Werft.",
    "Pilotage fees rose after the storm season.",
]
TIDE = "Page {i}: the tide table for Brenmouth lists entry {i}."


def balance(i: int) -> str:
    return f"Closing balance on 30.0{i}.2024: {AMOUNTS[i - 1]} EUR"


def statement(i: int) -> str:
    return f"Statement {i} of the Tolvik port account, prepared by the treasurer."


def write_pdf(path: Path, pages: list[list[str]]) -> Path:
    """A PDF with one text line for each string, from the top of each page down."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for lines in pages:
        for n, line in enumerate(lines):
            c.drawString(72, 800 - 15 * n, line)
        c.showPage()
    c.save()
    return path


def statement_pages() -> list[list[str]]:
    return [[balance(i), "", body, statement(i)] for i, body in enumerate(BODIES, start=1)]


def test_a_repeated_line_whose_date_and_amount_change_is_content():
    pages = ["\n".join(lines) for lines in statement_pages()]
    assert clean_pdf_pages(pages) == pages


def test_bank_statement_pdf_keeps_its_balances(tmp_path):
    text = load_document(write_pdf(tmp_path / "statements.pdf", statement_pages())).text
    for i, body in enumerate(BODIES, start=1):
        assert balance(i) in text
        assert body in text
        assert statement(i) in text  # its number counts the pages, but it stands inside a sentence
    assert len(text.split()) > 35 * 2


@pytest.mark.parametrize("count", [3, 5])
def test_one_sentence_pages_are_read_not_refused(tmp_path, count):
    pages = [[TIDE.format(i=i)] for i in range(1, count + 1)]
    text = load_document(write_pdf(tmp_path / "tides.pdf", pages)).text
    for i in range(1, count + 1):
        assert TIDE.format(i=i) in text


def test_removal_never_takes_a_pages_only_text():
    # a fixed line alone on each page repeats exactly: furniture by every rule, yet all there is
    pages = ["Tide table for Brenmouth"] * 4
    assert clean_pdf_pages(pages) == pages
    pages = [f"Harbor Log\n\nEntry on the {w} tide.\n\n{n}" for n, w in enumerate(["high", "low", "neap"], 1)]
    pages.append("Harbor Log\n\n4")  # a page of furniture only keeps it, the others lose theirs
    cleaned = clean_pdf_pages(pages)
    assert [p.strip() for p in cleaned[:3]] == [
        "Entry on the high tide.",
        "Entry on the low tide.",
        "Entry on the neap tide.",
    ]
    assert cleaned[3] == pages[3]


def test_quarter_lines_with_two_changing_numbers_stay_under_a_dropped_title():
    pages = [f"Quarterly report\nRevenue for quarter {i} was {i}00 thousand." for i in range(1, 5)]
    cleaned = clean_pdf_pages(pages)
    assert cleaned == [f"Revenue for quarter {i} was {i}00 thousand." for i in range(1, 5)]


TITLE = "Harbor Authority Annual Report 2023"


@pytest.mark.parametrize(
    "header,footer",
    [
        (lambda n: TITLE, lambda n: str(n)),  # a fixed title, a bare page number
        (lambda n: "Confidential", lambda n: f"Page {n} of 10"),
        (lambda n: f"Annual Report 2023 | Page {n + 11}", lambda n: "Confidential"),  # numbering offset
        (lambda n: f"{n} Annual Report 2023", lambda n: f"- {n} -"),
        (lambda n: TITLE, lambda n: ["i", "ii", "iii", "1", "2", "3", "4"][n - 1]),  # roman, then arabic
        (lambda n: f"p. {n} · Harbor Authority", lambda n: f"Seite {n} von 10"),
    ],
)
def test_genuine_running_headers_and_footers_are_still_dropped(header, footer):
    bodies = [
        f"The harbor handled {t} cargo this year." for t in ("bulk", "grain", "timber", "coal", "oil", "salt", "ore")
    ]
    pages = [f"{header(n)}\n\n{body}\n\n{footer(n)}" for n, body in enumerate(bodies, start=1)]
    assert [p.strip() for p in clean_pdf_pages(pages)] == bodies


def test_page_of_pdf_still_loses_its_header_and_footer(tmp_path):
    pages = [[TITLE, "", f"The harbor handled {t} cargo.", f"Page {n} of 4"] for n, t in enumerate("abcd", 1)]
    text = load_document(write_pdf(tmp_path / "report.pdf", pages)).text
    assert TITLE not in text and "Page 3 of 4" not in text
    for t in "abcd":
        assert f"The harbor handled {t} cargo." in text
