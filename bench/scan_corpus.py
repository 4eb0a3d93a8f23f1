"""A small public corpus of scans whose true text is known: public-domain paragraphs rendered to page
images with Pillow, then made to look like what a copier or a phone gives (noise, blur, a slight
skew, a page turned 90/180/270 degrees, JPEG artefacts), laid out as a letter, a bill and a newspaper
column, and saved as PNG, JPEG, BMP, WebP, multi-page TIFF, image-only PDFs and a PDF mixing a text
page with a scanned one. Nothing is downloaded and nothing big is committed: `build(folder)` writes it.

Used by bench/ocr_engines.py (which engine reads them best) and by the OCR tests.

    python bench/scan_corpus.py /tmp/scans        # writes the files and truth.json
"""

from __future__ import annotations

import io
import json
import random
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))

# public domain: Lincoln (1863), Melville (1851), Austen (1813), Dickens (1859), Thoreau (1854)
GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived "
    "in Liberty, and dedicated to the proposition that all men are created equal. Now we are engaged in a "
    "great civil war, testing whether that nation, or any nation so conceived and so dedicated, can long "
    "endure. We are met on a great battle-field of that war. We have come to dedicate a portion of that "
    "field, as a final resting place for those who here gave their lives that that nation might live."
)
MELVILLE = (
    "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, "
    "and nothing particular to interest me on shore, I thought I would sail about a little and see the "
    "watery part of the world. It is a way I have of driving off the spleen and regulating the circulation. "
    "Whenever I find myself growing grim about the mouth; whenever it is a damp, drizzly November in my "
    "soul, then, I account it high time to get to sea as soon as I can."
)
AUSTEN = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in "
    "want of a wife. However little known the feelings or views of such a man may be on his first entering "
    "a neighbourhood, this truth is so well fixed in the minds of the surrounding families, that he is "
    "considered the rightful property of some one or other of their daughters."
)
DICKENS = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of Light, "
    "it was the season of Darkness, it was the spring of hope, it was the winter of despair."
)
THOREAU = (
    "I went to the woods because I wished to live deliberately, to front only the essential facts of life, "
    "and see if I could not learn what it had to teach, and not, when I came to die, discover that I had "
    "not lived. I did not wish to live what was not life, living is so dear; nor did I wish to practise "
    "resignation, unless it was quite necessary. I wanted to live deep and suck out all the marrow of life."
)
BILL_LINES = [
    "ACME HARDWARE SUPPLY",
    "Invoice number 4471",
    "Date: 12 March 1911",
    "Item  Quantity  Price",
    "Copper nails  200  4.00",
    "Oak planks  12  18.60",
    "Brass hinges  8  3.20",
    "Total due  25.80",
    "Payable within thirty days",
]


@dataclass
class Scan:
    """One file of the corpus: its name, its true text, its pages' rotation, and what makes it hard."""

    name: str
    text: str
    kind: str
    pages: int = 1
    rotation: list[int] = field(default_factory=list)
    answer: str = ""  # a phrase of it a question can find


def _font(size: int, mono: bool = False) -> ImageFont.FreeTypeFont:
    names = ("DejaVuSansMono.ttf",) if mono else ("DejaVuSerif.ttf", "LiberationSerif-Regular.ttf")
    for folder in FONT_DIRS:
        for name in names:
            if (folder / name).exists():
                return ImageFont.truetype(str(folder / name), size)
    return ImageFont.load_default(size)


def render_page(paragraphs: list[str], width: int = 1275, columns: int = 1, size: int = 30) -> Image.Image:
    """A white page (8.5 inches wide at `width / 8.5` dots an inch) with the paragraphs in black,
    wrapped to the page or to `columns` narrow columns."""
    height = int(width * 11 / 8.5)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    font = _font(size)
    margin = width // 10
    gutter = width // 25
    column_width = (width - 2 * margin - gutter * (columns - 1)) // columns
    chars = max(10, int(column_width / (size * 0.55)))
    lines = [line for p in paragraphs for line in [*textwrap.wrap(p, chars), ""]]
    per_column = max(1, (height - 2 * margin) // int(size * 1.4))
    for i, line in enumerate(lines):
        column, row = divmod(i, per_column)
        if column >= columns:
            break
        x = margin + column * (column_width + gutter)
        draw.text((x, margin + row * int(size * 1.4)), line, fill=0, font=font)
    return page


def render_bill(width: int = 1275) -> Image.Image:
    """An invoice: a heading, a table of items with quantities and prices, a total."""
    page = Image.new("L", (width, int(width * 11 / 8.5)), 255)
    draw = ImageDraw.Draw(page)
    margin = width // 10
    draw.text((margin, margin), BILL_LINES[0], fill=0, font=_font(44))
    y = margin + 90
    for line in BILL_LINES[1:]:
        cells = line.split("  ")
        xs = [margin, margin + width // 2, margin + int(width * 0.68)][: len(cells)]
        for x, cell in zip(xs, cells, strict=True):
            draw.text((x, y), cell, fill=0, font=_font(30, mono=len(cells) > 1))
        if line.startswith("Item") or line.startswith("Total"):
            draw.line((margin, y - 8, width - margin, y - 8), fill=0, width=2)
        y += 56
    return page


def scanned(page: Image.Image, seed: int, skew: float = 1.2, noise: int = 18) -> Image.Image:
    """What a copier makes of a page: slightly turned, a grey cast, speckle noise, a little blur."""
    rng = random.Random(seed)
    page = page.rotate(skew, resample=Image.BICUBIC, expand=False, fillcolor=255)
    pixels = page.load()
    w, h = page.size
    for _ in range(w * h // 60):  # speckles
        x, y = rng.randrange(w), rng.randrange(h)
        pixels[x, y] = max(0, min(255, pixels[x, y] + rng.randint(-noise * 6, noise * 6)))
    page = page.filter(ImageFilter.GaussianBlur(0.7))
    return page.point(lambda v: int(40 + v * 0.8))  # a grey page, ink never quite black


def faxed(page: Image.Image, seed: int) -> Image.Image:
    """A poor copy: sent at a third of the resolution and blown back up, blurred, skewed by 2 degrees."""
    w, h = page.size
    small = scanned(page, seed, skew=2.0, noise=30).resize((w // 3, h // 3), Image.BILINEAR)
    return small.resize((w, h), Image.BICUBIC).filter(ImageFilter.GaussianBlur(1.0))


def photographed(page: Image.Image) -> Image.Image:
    """A phone's photo of a page: light falling off from one corner to the other, a 3-degree tilt."""
    w, h = page.size
    light = Image.linear_gradient("L").resize((w, h)).rotate(45, expand=False, fillcolor=128)
    shade = light.point(lambda v: int(90 + v * 0.6))  # 90 (dim corner) .. 243 (lit corner)
    lit = Image.composite(page, shade, page.point(lambda v: 255 - v))
    return lit.rotate(3.0, resample=Image.BICUBIC, expand=True, fillcolor=110)


def _save(image: Image.Image | list[Image.Image], path: Path, **options: object) -> None:
    if isinstance(image, list):
        image[0].save(path, save_all=True, append_images=image[1:], **options)
    else:
        image.save(path, **options)


def image_pdf(pages: list[Image.Image], path: Path, dpi: float = 150.0) -> None:
    """A PDF of page images only (no text layer), as a scanner writes one."""
    _save([p.convert("RGB") for p in pages], path, format="PDF", resolution=dpi)


def mixed_pdf(text: str, scan: Image.Image, path: Path) -> None:
    """A PDF whose first page has a text layer (reportlab) and whose second is a scan."""
    from pypdf import PdfReader, PdfWriter
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    first = io.BytesIO()
    c = canvas.Canvas(first, pagesize=letter)
    y = 720
    for line in textwrap.wrap(text, 80):
        c.drawString(72, y, line)
        y -= 16
    c.save()
    second = io.BytesIO()
    image_pdf([scan], second)  # type: ignore[arg-type]
    writer = PdfWriter()
    for data in (first, second):
        data.seek(0)
        for page in PdfReader(data).pages:
            writer.add_page(page)
    with path.open("wb") as f:
        writer.write(f)


def build(folder: Path, width: int = 1275) -> list[Scan]:
    """Write the corpus to `folder` (and truth.json); returns what each file holds."""
    folder.mkdir(parents=True, exist_ok=True)
    scans: list[Scan] = []

    def add(name: str, image: object, text: str, kind: str, answer: str, **kw: object) -> None:
        _save(image, folder / name) if not name.endswith(".pdf") else None  # type: ignore[arg-type]
        scans.append(Scan(name, text, kind, answer=answer, **kw))  # type: ignore[arg-type]

    letter_page = render_page([GETTYSBURG], width)
    add("letter.png", letter_page, GETTYSBURG, "clean page, PNG", "four score and seven years ago")
    add(
        "copier.jpg", scanned(render_page([MELVILLE], width), 1), MELVILLE, "noisy skewed scan, JPEG", "call me ishmael"
    )
    add(
        "faxed.jpg",
        faxed(render_page([DICKENS], width), 5),
        DICKENS,
        "poor copy: low resolution, blur, skew",
        "epoch of belief",
    )
    add(
        "photo.jpg",
        photographed(render_page([THOREAU], width)),
        THOREAU,
        "photo: uneven light, 3-degree tilt",
        "suck out all the marrow",
    )
    for angle in (90, 180, 270):  # PIL turns counter-clockwise: the page as it lies turned on the glass
        page = scanned(render_page([AUSTEN], width), angle, skew=0.5).rotate(angle, expand=True)
        add(
            f"turned_{angle}.png",
            page,
            AUSTEN,
            f"page turned {angle}",
            "a truth universally acknowledged",
            rotation=[angle],
        )
    add(
        "bill.bmp",
        scanned(render_bill(width), 7, skew=0.4),
        "\n".join(BILL_LINES),
        "bill layout, BMP",
        "invoice number 4471",
    )
    column = render_page([DICKENS, THOREAU], width, columns=2, size=24)
    add(
        "newspaper.webp",
        scanned(column, 3, skew=0.3),
        f"{DICKENS}\n{THOREAU}",
        "two newspaper columns, WebP",
        "it was the best of times",
    )
    tiff = [scanned(render_page([THOREAU], width), 11), scanned(render_page([DICKENS], width), 12)]
    add("bundle.tif", tiff, f"{THOREAU}\n{DICKENS}", "multi-page TIFF", "went to the woods", pages=2)
    pdf_pages = [scanned(render_page([GETTYSBURG], width), 21), scanned(render_page([MELVILLE], width), 22)]
    image_pdf(pdf_pages, folder / "scanned.pdf")
    scans.append(Scan("scanned.pdf", f"{GETTYSBURG}\n{MELVILLE}", "scanned PDF, 2 pages", 2, answer="ishmael"))
    image_pdf([scanned(render_page([AUSTEN], width), 31).rotate(90, expand=True)], folder / "scanned_turned.pdf")
    scans.append(Scan("scanned_turned.pdf", AUSTEN, "scanned PDF, page turned 90", 1, [90], "good fortune"))
    mixed_pdf(THOREAU, scanned(render_page([DICKENS], width), 41), folder / "mixed.pdf")
    scans.append(
        Scan(
            "mixed.pdf",
            f"{THOREAU}\n{DICKENS}",
            "PDF: a text page and a scanned page",
            2,
            answer="epoch of incredulity",
        )
    )
    (folder / "truth.json").write_text(json.dumps([s.__dict__ for s in scans], indent=1), "utf-8")
    return scans


if __name__ == "__main__":
    for scan in build(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/scans")):
        print(f"{scan.name:<22} {scan.kind}")
