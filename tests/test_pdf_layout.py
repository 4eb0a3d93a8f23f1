"""PDF pages in reading order and whole words (issue 30): the column splitter and the word repair on
layout text, and `load_document` on PDFs drawn here in two and three columns and letter-spaced."""

from __future__ import annotations

import time
from pathlib import Path

from longqa.retrieval.read.loaders import load_document
from longqa.retrieval.read.pdf.pdf_columns import reading_order
from longqa.retrieval.read.pdf.pdf_words import repair_words

LEFT = [
    "The harbor master logs every ship that",
    "enters the harbor before noon and the",
    "pilots record the tide at each berth.",
    "Cargo volumes rose by a fifth in the",
]
RIGHT = [
    "second quarter, led by grain and timber",
    "shipped from the northern terminals while",
    "the southern quay was closed for repairs",
    "and the new crane was being installed.",
]


def _grid(left: list[str], right: list[str], at: int = 48) -> list[str]:
    return [a.ljust(at) + b for a, b in zip(left, right, strict=True)]


def test_two_columns_come_out_column_by_column_under_a_full_width_title():
    title = "        Annual Report of the Harbor Authority for the Year Two Thousand and Twenty Three"
    page = "\n".join([title, "", *_grid(LEFT, RIGHT)])
    lines = [line.strip() for line in reading_order(page).split("\n") if line.strip()]
    assert lines == [title.strip(), *LEFT, *RIGHT]


def test_three_columns_come_out_left_to_right():
    a = ["alpha words in the first column", "more alpha words run on here", "and alpha ends this column"]
    b = ["beta words in the second column", "more beta words run on here", "and beta ends this column"]
    c = ["gamma words in the third column", "more gamma words run on here", "and gamma ends this column"]
    page = "\n".join(x.ljust(36) + y.ljust(36) + z for x, y, z in zip(a, b, c, strict=True))
    lines = [line.strip() for line in reading_order(page).split("\n") if line.strip()]
    assert lines == a + b + c


def test_a_table_and_a_one_column_page_are_left_as_they_are():
    table = "\n".join(
        f"North Quay {i}        {1200 + i:>8,}        {14 + i:>4}        +{i}.5%        {20 + i}.25" for i in range(8)
    )
    assert reading_order(table) == table
    prose = "\n".join(LEFT + RIGHT)
    assert reading_order(prose) == prose


def test_letter_spaced_and_split_words_are_rejoined_from_the_documents_own_words():
    pages = [
        "T a  b l e   1  .  I n  te  r f a c  e   S u m m a r y\nThe mo del was pro duced by the first model.",
        "Table 2 lists what the model produced, and the interface summary follows.",
    ]
    first, second = repair_words(pages)
    assert first.split("\n") == ["Table 1. Interface Summary", "The model was produced by the first model."]
    assert second == pages[1]


def test_words_that_stand_alone_and_table_cells_are_not_joined():
    pages = ["He went in to see a b c on the list.\nNorth  1   2   7\nThe model in to the model."]
    assert repair_words(pages) == pages


def test_a_word_hyphenated_at_a_line_end_is_whole_again():
    pages = [
        "the vessels were discov-\nered by the pilots; the harbor was discovered\n"
        "a fast-\nmoving tide, a fast tide moving fast and moving"
    ]
    lines = repair_words(pages)[0].split("\n")
    assert lines[0] == "the vessels were discovered"
    assert lines[1].startswith("by the pilots")
    assert lines[2] == "a fast-moving"  # both halves are words the document uses, the joined one is not


def test_repair_and_reading_order_are_linear_in_the_page(tmp_path):
    """Hostile page text (a PDF's layout text is bounded by the reader's worker, but these passes
    must not be quadratic inside it): eight times the text costs about eight times the time."""

    def page(n: int) -> str:
        letters = " ".join("abcdefghij" * (n // 10))
        split = "mo del " * n
        grid = "\n".join(("word " * 8).ljust(48) + "text " * 8 for _ in range(n // 20))
        dots = "(" + "." * (n * 10) + ")"  # one long token of punctuation (a leader gone wrong)
        return f"{letters}\n{split}\n{grid}\n{dots} a b c"

    times = []
    for n in (5_000, 40_000):
        text = page(n)
        best = float("inf")
        for _ in range(2):  # this process's CPU seconds, the better of two: other processes' load does not count
            t0 = time.process_time()
            repair_words([reading_order(text)])
            best = min(best, time.process_time() - t0)
        times.append(best)
    assert times[1] < 30 * max(times[0], 0.05), times  # quadratic would be ~64x; linear ~8x


def test_a_wide_grid_is_not_scanned_for_columns():
    wide = "\n".join("word " * 10 + " " * 3000 + "far away text here" for _ in range(5))
    assert reading_order(wide) == wide


def _columns_pdf(path: Path, columns: int, paragraphs: list[str]) -> Path:
    from reportlab.lib.enums import TA_JUSTIFY
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph

    styles = getSampleStyleSheet()
    body = ParagraphStyle("b", styles["BodyText"], alignment=TA_JUSTIFY, fontSize=9)
    gutter, width = 14.0, A4[0] - 100
    col = (width - gutter * (columns - 1)) / columns
    frames = [Frame(50 + i * (col + gutter), 50, col, A4[1] - 100, id=f"c{i}") for i in range(columns)]
    doc = BaseDocTemplate(str(path), pagesize=A4, pageTemplates=[PageTemplate("p", frames)])
    doc.build([Paragraph(p, body) for p in paragraphs])
    return path


SENTENCES = [
    "The harbor master logs every ship that enters the harbor before noon on weekdays.",
    "Cargo volumes rose by a fifth in the second quarter, led by grain and timber.",
    "The southern quay was closed for repairs while the new crane was installed.",
    "Pilots record the depth of the channel at every berth after each spring tide.",
]


def _paragraphs(n: int) -> list[str]:
    return [" ".join(SENTENCES[(i + k) % 4] for k in range(6)) + f" This is paragraph {i + 1}." for i in range(n)]


def test_a_two_column_pdf_reads_in_reading_order(tmp_path):
    paragraphs = _paragraphs(14)
    text = " ".join(load_document(_columns_pdf(tmp_path / "two.pdf", 2, paragraphs)).text.split())
    positions = [text.find(f"This is paragraph {i + 1}.") for i in range(len(paragraphs))]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions
    for paragraph in paragraphs:  # every paragraph whole: not interleaved with its neighbour column
        assert paragraph in text


def test_a_three_column_pdf_reads_in_reading_order(tmp_path):
    paragraphs = _paragraphs(12)
    text = " ".join(load_document(_columns_pdf(tmp_path / "three.pdf", 3, paragraphs)).text.split())
    for paragraph in paragraphs:
        assert paragraph in text


def test_a_letter_spaced_heading_reads_as_words(tmp_path):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path / "spaced.pdf"
    c = Canvas(str(path), pagesize=A4)
    heading = c.beginText(72, 760)
    heading.setFont("Helvetica-Bold", 12)
    heading.setCharSpace(3)
    heading.textLine("Table 1. Cargo Summary")
    c.drawText(heading)
    c.setFont("Helvetica", 11)
    c.drawString(72, 730, "The cargo summary in Table 1 shows grain and timber.")
    c.save()
    text = load_document(path).text
    assert text.startswith("Table 1. Cargo Summary"), text
