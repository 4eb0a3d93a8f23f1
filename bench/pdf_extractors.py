"""Which PDF text extractor longqa should read PDFs with: the candidates side by side on PDFs made here.

The PDFs are generated with reportlab (seeded), so the true text is known: prose paragraphs (left-
aligned and justified), tables with numeric columns (platypus tables, numbers right-aligned), a table
of contents with dot leaders (contiguous dots, spaced dots, middle dots), and a running header and
footer with page numbers ("Page N of M"; a title and the page number on one line; a bare number under
alternating even/odd running heads).

Candidates (pymupdf is left out: AGPL-3.0):

  pypdf layout       `page.extract_text(extraction_mode="layout")` (what longqa used before)
  pypdf plain        `page.extract_text()`
  pdfplumber layout  `page.extract_text(layout=True)` (pdfminer.six underneath)
  pdfplumber plain   `page.extract_text()`
  pypdfium2          `textpage.get_text_bounded()` (PDFium)

Measures, per candidate, over every generated PDF:

  word recall        share of the body's words (prose, headings, contents, table cells; multiset,
                     lower-cased) found in the extracted text
  table rows         share of table rows whose cells come out on one line, in order
  rows in a table    share of table rows that end in an `is_table` paragraph after longqa's own
                     steps (`reading_order`, `repair_words`, `clean_pdf_pages`, the layout-to-blocks pass,
                     `split_paragraphs`)
  header/footer      lines of running header or footer in the extracted text, and still there
                     after `clean_pdf_pages`, against the number drawn
  s/page             extraction seconds per page (median of the rounds; imports and a warm-up untimed)

    python bench/pdf_extractors.py                 # 3 PDFs (~25 pages), 3 timing rounds
    python bench/pdf_extractors.py --sections 24 --rounds 5
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.enums import TA_JUSTIFY
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable, PageBreak, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, save  # noqa: E402

WORDS = (
    "harbor quay vessel cargo tide channel berth crane pilot dredger ledger tonnage basin breakwater "
    "authority terminal container freight lock gate pier jetty mooring anchor buoy beacon lighthouse "
    "survey depth draught hull keel ballast manifest customs warehouse shed rail road truck barge tug "
    "schedule forecast revenue expense budget audit board committee report review plan project works "
    "contract tender supplier engineer inspector crew captain master officer clerk manager director "
    "north south east west inner outer upper lower new old main second third final annual quarterly "
    "rose fell grew held met opened closed moved loaded unloaded measured approved delayed completed "
    "steady strong weak higher lower early late safe busy quiet deep shallow wide narrow long short "
    "because although while after before during since until unless whereas therefore however"
).split()
TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")


@dataclass
class Source:
    """A generated PDF and the truth about it."""

    name: str
    path: Path
    pages: int
    body: list[str] = field(default_factory=list)  # words of everything but the header/footer
    table_rows: list[list[str]] = field(default_factory=list)
    furniture: list[str] = field(default_factory=list)  # header/footer line shapes (digits as #)
    furniture_drawn: int = 0


# -- making the PDFs --------------------------------------------------------------------------------


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 20))
    return " ".join(words).capitalize() + "."


def table_rows(rng: random.Random, n: int, label: str) -> list[list[str]]:
    head = ["Terminal", "Tonnes", "Vessels", "Change", "Share"]
    rows = [head]
    for i in range(n):
        rows.append(
            [
                f"{label} {rng.choice(WORDS).capitalize()} {i + 1}",
                f"{rng.randint(1_000, 99_999):,}",
                str(rng.randint(3, 400)),
                f"{rng.uniform(-9, 9):+.1f}%",
                f"{rng.uniform(0, 40):.2f}",
            ]
        )
    return rows


class TocLine(Flowable):
    """A contents line: title, leader, page number right-aligned (as word processors draw it)."""

    def __init__(self, title: str, page: int, leader: str, width: float):
        super().__init__()
        self.title, self.page, self.leader, self.line_width = title, str(page), leader, width

    def wrap(self, *_):
        return self.line_width, 16

    def draw(self):
        c = self.canv
        c.setFont("Helvetica", 11)
        c.drawString(0, 2, self.title)
        c.drawRightString(self.line_width, 2, self.page)
        start = stringWidth(self.title, "Helvetica", 11) + 6
        room = self.line_width - stringWidth(self.page, "Helvetica", 11) - 6 - start
        c.drawString(start, 2, self.leader * max(4, int(room / stringWidth(self.leader, "Helvetica", 11))))


def embedded_font() -> str:
    """DejaVu Serif from matplotlib's own fonts (a dependency), registered with reportlab."""
    import matplotlib
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if "DejaVuSerif" not in pdfmetrics.getRegisteredFontNames():
        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSerif.ttf"
        pdfmetrics.registerFont(TTFont("DejaVuSerif", str(path)))
    return "DejaVuSerif"


def story_and_truth(name: str, style: str, sections: int, seed: int) -> tuple[list, Source]:
    """The flowables of one PDF and what they say. style: "report" (contiguous dots), "redpaper"
    (spaced dots), "book" (middle dots, justified prose)."""
    rng = random.Random(f"{seed}-{name}")
    styles = getSampleStyleSheet()
    body_style = ParagraphStyle("body", styles["BodyText"])
    if style == "book":  # an embedded, subset TrueType font and justified lines, as typeset books have
        body_style = ParagraphStyle("book", styles["BodyText"], fontName=embedded_font(), alignment=TA_JUSTIFY)
    src = Source(name, Path(), 0)
    titles = [f"{i + 1} " + " ".join(rng.choices(WORDS, k=3)).title() for i in range(sections)]
    leader = {"report": ".", "redpaper": ". ", "book": "·"}[style]
    story = [Paragraph(f"{name.title()} of the Harbor", styles["Title"]), Paragraph("Contents", styles["Heading1"])]
    src.body += f"{name} of the harbor contents".split()
    for i, title in enumerate(titles):
        story.append(TocLine(title, 3 + 2 * i, leader, 6.3 * 72))
        src.body += title.lower().split() + [str(3 + 2 * i)]
    story.append(PageBreak())
    for i, title in enumerate(titles):
        story.append(Paragraph(title, styles["Heading2"]))
        src.body += title.lower().split()
        for _ in range(rng.randint(3, 5)):
            text = " ".join(sentence(rng) for _ in range(rng.randint(3, 6)))
            story.append(Paragraph(text, body_style))
            src.body += text.lower().split()
        if i % 2 == 0:
            rows = table_rows(rng, rng.randint(6, 12), ["North", "South", "East", "West"][i % 4])
            table = Table(rows, colWidths=[150, 70, 60, 60, 60], hAlign="LEFT")
            table.setStyle(
                TableStyle([("ALIGN", (1, 0), (-1, -1), "RIGHT"), ("LINEBELOW", (0, 0), (-1, 0), 0.5, "black")])
            )
            story += [Spacer(1, 8), table, Spacer(1, 8)]
            src.table_rows += rows
            src.body += [w for row in rows for cell in row for w in cell.lower().split()]
    return story, src


def make_pdf(tmp: Path, name: str, style: str, sections: int, seed: int) -> Source:
    """Build twice: the first pass counts the pages for "Page N of M"."""
    story, src = story_and_truth(name, style, sections, seed)
    src.path = tmp / f"{name}.pdf"
    total = _build(src.path, story, style, name, pages=None)
    _build(src.path, story_and_truth(name, style, sections, seed)[0], style, name, pages=total)
    src.pages = total
    src.furniture, src.furniture_drawn = _furniture_truth(style, name, total)
    return src


def _build(path: Path, story: list, style: str, name: str, pages: int | None) -> int:
    seen = {"pages": 0}

    def furniture(canvas, doc) -> None:  # drawn on the canvas, as word processors do
        n = doc.page
        seen["pages"] = max(seen["pages"], n)
        canvas.saveState()
        canvas.setFont("Helvetica", 9)
        top, bottom, left, right = A4[1] - 40, 30, 72, A4[0] - 72
        if style == "report":
            canvas.drawString(left, top, "Harbor Authority Annual Report 2023")
            canvas.drawCentredString(A4[0] / 2, bottom, f"Page {n} of {pages or 99}")
        elif style == "redpaper":
            canvas.drawString(left, top, "Tidal Systems Redpaper")
            canvas.drawRightString(right, top, str(n))
            canvas.drawString(left, bottom, "© 2024 Tidal Systems. All rights reserved.")
        else:
            if n % 2 == 0:
                canvas.drawString(left, top, f"The {name.title()} Handbook")
            else:
                canvas.drawRightString(right, top, "Safety at the Quay")
            canvas.drawCentredString(A4[0] / 2, bottom, str(n))
        canvas.restoreState()

    doc = SimpleDocTemplate(str(path), pagesize=A4, topMargin=72, bottomMargin=72)
    doc.build(story, onFirstPage=furniture, onLaterPages=furniture)
    return seen["pages"]


def _furniture_truth(style: str, name: str, pages: int) -> tuple[list[str], int]:
    """The shapes of the header/footer lines (as fragments of a line's furniture key) and how many
    such lines were drawn (a header drawn in two pieces on one line counts once)."""
    if style == "report":
        return ["harbor authority annual report #", "page # of #"], 2 * pages
    if style == "redpaper":
        return ["tidal systems redpaper", "© # tidal systems. all rights reserved."], 2 * pages
    return [f"the {name} handbook", "safety at the quay", "#"], 2 * pages


# -- the candidates ---------------------------------------------------------------------------------


def pypdf_layout(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text(extraction_mode="layout") or "" for page in PdfReader(str(path)).pages]


def pypdf_plain(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(path)).pages]


def pdfplumber_layout(path: Path) -> list[str]:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        return [page.extract_text(layout=True) or "" for page in pdf.pages]


def pdfplumber_plain(path: Path) -> list[str]:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        return [page.extract_text() or "" for page in pdf.pages]


def pypdfium2_text(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        out = []
        for page in pdf:
            textpage = page.get_textpage()
            out.append(textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n"))
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


CANDIDATES: dict[str, Callable[[Path], list[str]]] = {
    "pypdf layout": pypdf_layout,
    "pypdf plain": pypdf_plain,
    "pdfplumber layout": pdfplumber_layout,
    "pdfplumber plain": pdfplumber_plain,
    "pypdfium2": pypdfium2_text,
}


# -- scoring ----------------------------------------------------------------------------------------


def tokens(text: str) -> Counter[str]:
    return Counter(TOKEN.findall(text.lower()))


def word_recall(body: list[str], text: str) -> tuple[int, int]:
    want = tokens(" ".join(body))
    got = tokens(text)
    return sum(min(n, got[w]) for w, n in want.items()), sum(want.values())


def row_on_one_line(row: list[str], lines: list[str]) -> bool:
    cells = [" ".join(c.split()) for c in row]
    for line in lines:
        flat, at = " ".join(line.split()), 0
        for cell in cells:
            at = flat.find(cell, at)
            if at < 0:
                break
            at += len(cell)
        else:
            return True
    return False


def longqa_paragraphs(pages: list[str]):
    from longqa.retrieval.read.loaders import _pdf_layout_to_blocks, document_from_text
    from longqa.retrieval.read.pdf.pdf_columns import reading_order
    from longqa.retrieval.read.pdf.pdf_text import clean_pdf_pages
    from longqa.retrieval.read.pdf.pdf_words import repair_words

    cleaned = clean_pdf_pages(repair_words([reading_order(p) for p in pages]))
    text = "\n\n".join(b for b in (_pdf_layout_to_blocks(p) for p in cleaned) if b.strip())
    return cleaned, document_from_text(text)


def furniture_left(cleaned: list[str], shapes: list[str]) -> int:
    """Lines of a running header or footer still on the cleaned pages: any line holding a header's
    or footer's text, and a bare page number among a page's first or last 3 lines (elsewhere a bare
    number is a table cell)."""
    from longqa.retrieval.read.pdf.pdf_text import furniture_key

    left = 0
    for page in cleaned:
        lines = [line for line in page.split("\n") if line.strip()]
        for i, line in enumerate(lines):
            key = furniture_key(line)
            at_edge = i < 3 or i >= len(lines) - 3
            left += any((key == s and at_edge) if s == "#" else s in key for s in shapes)
    return left


def score(sources: list[Source], pages_by_source: dict[str, list[str]]) -> dict[str, float | int]:
    found = total = rows_ok = rows_table = before = left = drawn = 0
    n_rows = 0
    for src in sources:
        pages = pages_by_source[src.name]
        raw = "\n".join(pages)
        f, t = word_recall(src.body, raw)
        found, total = found + f, total + t
        lines = raw.split("\n")
        cleaned, document = longqa_paragraphs(pages)
        table_lines = [
            line for p in document.paragraphs if p.is_table for line in document.paragraph_text(p).split("\n")
        ]
        for row in src.table_rows:
            n_rows += 1
            rows_ok += row_on_one_line(row, lines)
            rows_table += row_on_one_line(row, table_lines)
        before += furniture_left(pages, src.furniture)
        left += furniture_left(cleaned, src.furniture)
        drawn += src.furniture_drawn
    return {
        "word_recall": found / total,
        "table_rows": rows_ok / n_rows,
        "rows_in_table": rows_table / n_rows,
        "furniture_before": before,
        "furniture_left": left,
        "furniture_drawn": drawn,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sections", type=int, default=12, help="sections per PDF (about 1.5 pages each)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="longqa-pdfbench-"))
    sources = [
        make_pdf(tmp, "report", "report", args.sections, args.seed),
        make_pdf(tmp, "redpaper", "redpaper", max(3, args.sections // 2), args.seed),
        make_pdf(tmp, "pilots", "book", args.sections, args.seed),
    ]
    n_pages = sum(s.pages for s in sources)
    print(f"{len(sources)} PDFs, {n_pages} pages, {sum(len(s.table_rows) for s in sources)} table rows, in {tmp}")
    available = {}
    for name, extract in CANDIDATES.items():
        try:
            extract(sources[0].path)  # imports and a warm-up, untimed
            available[name] = extract
        except ImportError as e:
            print(f"skipped {name}: {e}")
    seconds: dict[str, list[float]] = {name: [] for name in available}
    texts: dict[str, dict[str, list[str]]] = {}
    for _ in range(args.rounds):  # candidates interleaved within each round, so each sees the same load
        for name, extract in available.items():
            t0 = time.perf_counter()
            texts[name] = {src.name: extract(src.path) for src in sources}
            seconds[name].append(time.perf_counter() - t0)
    results, rows = {}, []
    for name in available:
        r = score(sources, texts[name]) | {"s_per_page": statistics.median(seconds[name]) / n_pages}
        results[name] = r
        rows.append(
            [
                name,
                f"{100 * r['word_recall']:.1f}",
                f"{100 * r['table_rows']:.1f}",
                f"{100 * r['rows_in_table']:.1f}",
                f"{r['furniture_before']} → {r['furniture_left']} / {r['furniture_drawn']}",
                f"{r['s_per_page']:.4f}",
            ]
        )
    head = ["extractor", "word recall %", "table rows on one line %", "rows in an is_table paragraph %"]
    print(md_table(head + ["header/footer lines: extracted → left after clean_pdf_pages / drawn", "s/page"], rows))
    out = save("pdf_extractors", {"machine": machine(), "args": vars(args), "pages": n_pages, "results": results})
    print(f"saved {out}")


if __name__ == "__main__":
    main()
