"""Reading order and whole words in PDFs: the PDF readers side by side on PDFs whose text is known.

Issue #30: two-column pages came out interleaved line by line, and some PDFs came out with words
broken apart (`mo del`, `Ta b l e 1 .`). The corpus:

  generated (reportlab, seeded; the true text is what was drawn, in reading order)
    one-column      prose in one column, left-aligned
    two-column      a full-width title and abstract, then two justified columns (a paper's page)
    two-column-tight  two ragged columns with a narrow (10 pt) gutter
    three-column    a newsletter: three narrow columns
    per-glyph       every glyph placed on its own (as some PDF writers do), with letter-spaced
                    headings ("Table 1." drawn with 3 pt tracking)
  real (bench/corpus/pdf/, see its SOURCES.md; truth: passages checked by eye against the rendered page)
    tracemonkey     pdf.js's test paper: ACM two-column, 14 pages
    markitdown      markitdown's test.pdf: one-column arXiv paper

Readers: pypdf layout (longqa before this change), pypdf plain, pdfplumber (plain and layout),
pdfminer.six `extract_text` (its layout analysis, LAParams defaults), pypdfium2, and longqa (what
`load_document` indexes: pypdf layout, columns put in reading order, broken words repaired, pages
cleaned). pymupdf is left out (AGPL-3.0).

Scores per reader over each PDF:

  word recall    share of the truth's words (NFKC, lower-cased, multiset) found in the text
  bigram recall  share of the truth's adjacent word pairs found adjacent in the text (multiset):
                 interleaved columns and broken words lose pairs
                 (both from bench/fidelity.py, shared with the other converter benches; a word
                 hyphenated at a line end counts as found only if the reader joined it again)
  s/page         seconds per page, median of the rounds (imports and a warm-up untimed)

    python bench/pdf_layout.py                 # all readers, 3 rounds
    python bench/pdf_layout.py --rounds 1 --readers longqa,pdfminer
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, save  # noqa: E402
from bench.fidelity import bigram_recall, word_recall, words  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus" / "pdf"
VOCABULARY = (
    "model produced table figure result method analysis evaluation performance compiler interpreter "
    "program variable function memory allocation collection garbage benchmark measurement language "
    "runtime dynamic static type trace loop iteration branch condition statement expression operator "
    "value number string object array element index pointer reference structure pattern sequence "
    "document paragraph section chapter summary abstract introduction conclusion discussion related "
    "work approach technique algorithm optimization implementation architecture system component "
    "interface library framework application platform environment configuration parameter setting "
    "the of and to in a is that for on with as by at from this which are be an it was we our their "
    "significantly efficiently particularly substantially consistently approximately comparatively "
    "harbor vessel cargo channel authority terminal container freight schedule forecast revenue "
    "because although while after before during since until unless whereas therefore however"
).split()


@dataclass
class Source:
    """A PDF and the text it should read as: `truth` is a list of passages, each in reading order."""

    name: str
    path: Path
    pages: int
    truth: list[str]
    columns: int


# -- the generated PDFs ------------------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(VOCABULARY, k=rng.randint(9, 22))).capitalize() + "."


def _paragraphs(rng: random.Random, n: int) -> list[str]:
    return [" ".join(_sentence(rng) for _ in range(rng.randint(2, 5))) for _ in range(n)]


def make_flow(tmp: Path, name: str, columns: int, gutter: float, justify: bool, seed: int) -> Source:
    """A title and abstract across the page, then `columns` columns of headed paragraphs."""
    from reportlab.lib.enums import TA_JUSTIFY, TA_LEFT
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, FrameBreak, NextPageTemplate, PageTemplate, Paragraph

    rng = random.Random(f"{seed}-{name}")
    styles = getSampleStyleSheet()
    body = ParagraphStyle("b", styles["BodyText"], alignment=TA_JUSTIFY if justify else TA_LEFT, fontSize=9)
    margin, width, height = 50.0, A4[0] - 100.0, A4[1] - 100.0
    col_w = (width - gutter * (columns - 1)) / columns
    head_h = 190.0

    def cols(top: float, h: float, prefix: str) -> list:
        return [Frame(margin + i * (col_w + gutter), top, col_w, h, id=f"{prefix}{i}") for i in range(columns)]

    first = [Frame(margin, margin + height - head_h, width, head_h, id="head"), *cols(margin, height - head_h, "a")]
    doc = BaseDocTemplate(str(tmp / f"{name}.pdf"), pagesize=A4)
    doc.addPageTemplates([PageTemplate("first", first), PageTemplate("rest", cols(margin, height, "c"))])
    title = " ".join(rng.choices(VOCABULARY, k=5)).title()
    abstract = " ".join(_sentence(rng) for _ in range(5))
    story = [Paragraph(title, styles["Title"]), Paragraph(abstract, body), NextPageTemplate("rest"), FrameBreak()]
    truth = [title, abstract]
    for s in range(6 if columns > 1 else 4):
        heading = f"{s + 1} " + " ".join(rng.choices(VOCABULARY, k=3)).title()
        story.append(Paragraph(heading, styles["Heading3"]))
        truth.append(heading)
        for text in _paragraphs(rng, rng.randint(3, 5)):
            story.append(Paragraph(text, body))
            truth.append(text)
    doc.build(story)
    return Source(name, tmp / f"{name}.pdf", _page_count(tmp / f"{name}.pdf"), truth, columns)


def make_per_glyph(tmp: Path, name: str, seed: int) -> Source:
    """One column drawn glyph by glyph, each at its own position (as some PDF writers emit text),
    with 0.4 pt of tracking, and headings letter-spaced by 3 pt ("T a b l e  1 ." to an extractor
    that reads gaps as spaces)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    rng = random.Random(f"{seed}-{name}")
    path = tmp / f"{name}.pdf"
    c = Canvas(str(path), pagesize=A4)
    left, right, top, bottom = 60.0, A4[0] - 60.0, A4[1] - 60.0, 60.0
    y, truth = top, []

    def draw_line(words: list[str], font: str, size: float, tracking: float) -> None:
        nonlocal y
        x = left
        for word in words:
            for ch in word:
                c.setFont(font, size)
                c.drawString(x, y, ch)
                x += stringWidth(ch, font, size) + tracking
            x += stringWidth(" ", font, size) + tracking
        y -= size * 1.45

    def ensure_room(size: float) -> None:
        nonlocal y
        if y < bottom + size:
            c.showPage()
            y = top

    for n in range(1, 9):
        heading = f"Table {n}. " + " ".join(rng.choices(VOCABULARY, k=2)).title()
        ensure_room(30)
        draw_line(heading.split(), "Helvetica-Bold", 12, 3.0)
        truth.append(heading)
        for text in _paragraphs(rng, 2):
            line: list[str] = []
            for word in text.split():
                trial = " ".join([*line, word])
                if line and stringWidth(trial, "Helvetica", 10) + 0.4 * len(trial) > right - left:
                    ensure_room(10)
                    draw_line(line, "Helvetica", 10, 0.4)
                    line = []
                line.append(word)
            ensure_room(10)
            draw_line(line, "Helvetica", 10, 0.4)
            y -= 6
            truth.append(text)
    c.save()
    return Source(name, path, _page_count(path), truth, 1)


def _page_count(path: Path) -> int:
    from pypdf import PdfReader

    return len(PdfReader(str(path)).pages)


def real_sources() -> list[Source]:
    """The real PDFs of bench/corpus/pdf with their checked passages (one passage a paragraph of
    `NAME.truth.txt`, blank-line separated)."""
    out = []
    for truth_file in sorted(CORPUS.glob("*.truth.txt")):
        pdf = truth_file.with_name(truth_file.name.replace(".truth.txt", ".pdf"))
        passages = [p.strip() for p in truth_file.read_text("utf-8").split("\n\n") if p.strip()]
        columns = int(passages[0].split("=")[1]) if passages[0].startswith("columns=") else 1
        out.append(Source(pdf.stem, pdf, _page_count(pdf), passages[1:], columns))
    return out


# -- the readers --------------------------------------------------------------------------------------


def read_pypdf(path: Path, mode: str) -> list[str]:
    from pypdf import PdfReader

    return [p.extract_text(extraction_mode=mode) or "" for p in PdfReader(str(path)).pages]


def read_pdfplumber(path: Path, layout: bool) -> list[str]:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        return [p.extract_text(layout=layout) or "" for p in pdf.pages]


def read_pdfminer(path: Path) -> list[str]:
    from pdfminer.high_level import extract_text

    return extract_text(str(path)).split("\f")


def read_pypdfium2(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        return [doc[i].get_textpage().get_text_bounded() for i in range(len(doc))]
    finally:
        doc.close()


def read_longqa(path: Path) -> list[str]:
    from longqa.retrieval.read.loaders import load_document

    return [load_document(path).text]


READERS: dict[str, Callable[[Path], list[str]]] = {
    "pypdf layout": lambda p: read_pypdf(p, "layout"),
    "pypdf plain": lambda p: read_pypdf(p, "plain"),
    "pdfplumber plain": lambda p: read_pdfplumber(p, False),
    "pdfplumber layout": lambda p: read_pdfplumber(p, True),
    "pdfminer.six": read_pdfminer,
    "pypdfium2": read_pypdfium2,
    "longqa": read_longqa,
}


# -- scoring ---------------------------------------------------------------------------------------


def recalls(truth: list[str], text: str) -> tuple[float, float]:
    """(word recall, bigram recall) of the truth's passages in `text`, scored by bench/fidelity.py;
    bigrams passage by passage (weighted by their pairs), so the seam between two passages that are
    not adjacent in the PDF is not counted as a pair to find."""
    pairs = [max(0, len(words(p)) - 1) for p in truth]
    bigram = sum(bigram_recall(p, text) * n for p, n in zip(truth, pairs, strict=True)) / max(1, sum(pairs))
    return word_recall("\n\n".join(truth), text), bigram


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--readers", default=",".join(READERS), help="comma-separated names (a prefix is enough)")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    readers = {n: f for n, f in READERS.items() if any(n.startswith(w.strip()) for w in args.readers.split(","))}
    env = machine()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sources = [
            make_flow(tmp, "one-column", 1, 0, False, args.seed),
            make_flow(tmp, "two-column", 2, 18, True, args.seed),
            make_flow(tmp, "two-column-tight", 2, 10, False, args.seed),
            make_flow(tmp, "three-column", 3, 14, True, args.seed),
            make_per_glyph(tmp, "per-glyph", args.seed),
            *real_sources(),
        ]
        texts: dict[tuple[str, str], str] = {}
        seconds: dict[tuple[str, str], list[float]] = {}
        for read in readers.values():  # imports and a warm-up, untimed
            read(sources[0].path)
        for _ in range(args.rounds):
            for src in sources:
                for name, read in readers.items():
                    t0 = time.perf_counter()
                    pages = read(src.path)
                    seconds.setdefault((name, src.name), []).append((time.perf_counter() - t0) / src.pages)
                    texts[(name, src.name)] = "\n".join(pages)
    rows, results = [], []
    for src in sources:
        for name in readers:
            w, b = recalls(src.truth, texts[(name, src.name)])
            s = statistics.median(seconds[(name, src.name)])
            rows.append([src.name, src.columns, src.pages, name, f"{w:.3f}", f"{b:.3f}", f"{s:.4f}"])
            results.append({"pdf": src.name, "reader": name, "word_recall": w, "bigram_recall": b, "s_per_page": s})
    print(md_table(["pdf", "columns", "pages", "reader", "word recall", "bigram recall", "s/page"], rows))
    print()
    summary = []
    for name in readers:
        mine = [r for r in results if r["reader"] == name]
        multi = [r for r in mine if next(s for s in sources if s.name == r["pdf"]).columns > 1]
        summary.append(
            [
                name,
                f"{min(r['word_recall'] for r in mine):.3f}",
                f"{statistics.mean(r['word_recall'] for r in mine):.3f}",
                f"{min(r['bigram_recall'] for r in multi):.3f}" if multi else "-",
                f"{statistics.mean(r['bigram_recall'] for r in mine):.3f}",
                f"{statistics.median(r['s_per_page'] for r in mine):.4f}",
            ]
        )
    heads = [
        "reader",
        "word recall min",
        "word recall mean",
        "bigram recall min (multi-column)",
        "bigram mean",
        "s/page",
    ]
    print(md_table(heads, summary))
    print(f"\nsaved {save('pdf_layout', {'machine': env, 'results': results})}")


if __name__ == "__main__":
    main()
