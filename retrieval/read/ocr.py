"""Text from page images: photos and scans (.png, .jpg, .tif, .bmp, .webp, multi-page TIFF) and the
pages of a PDF that have no text layer, read by Tesseract 5 through pytesseract.

Tesseract won the side-by-side measurement on bench/scan_corpus.py's scans against rapidocr (the PyPI
engines whose models install offline; bench/README.md, "OCR engines"). Each page is read with
`--psm 1`, which finds the page's orientation (0/90/180/270) and reads it in one pass: as accurate as
detecting it first (`--psm 0`) or reading all four turns, at a fraction of their time. A page, its
passes together, is held to `page_timeout_s` (Tesseract is killed past it) and, inside the reader
worker, to its memory ceiling (the worker's address-space limit binds the Tesseract process it starts);
a document reads at most `max_pages` pages by OCR, and all of them in at most `file_timeout_s`: past
it the pages not yet read are left out, named in one warning, and a file left with no text at all is
refused with that reason. Pages are separated by a form feed in the text, so a passage's page is the
count of form feeds before it (`page_at`).
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..documents import Document
from .limits import DocumentError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")
# Tesseract's global (Otsu) threshold loses a page photographed under uneven light; Sauvola's local
# one reads it, at about twice the time, so it is the second pass (bench/README.md, "OCR engines")
PASSES = ("--psm 1", "--psm 1 -c thresholding_method=2")
MIN_PAGE_LETTERS = 20  # fewer letters and digits than this from the first pass: the page is read again
PAGE_BREAK = "\f"  # between pages in a document's text, as pdftotext writes it
DEFAULT_PAGE_TIMEOUT_S = 60.0
DEFAULT_MAX_PAGES = 500
DEFAULT_FILE_TIMEOUT_S = 300.0  # all of one file's OCR (a pass over noise takes ~1-3 s a page: ~100 such pages)
DEFAULT_DPI = 200  # PDF pages are rendered at this resolution to be read
MAX_PIXELS = 60_000_000  # a page image larger than this (a decompression bomb, a poster) is refused
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd, or scripts/dev.sh ocr"

PageProgress = Callable[[int, int], None]  # (pages read by OCR so far, pages to read)


@dataclass(frozen=True)
class OcrLimits:
    """Whether and how far scans are read: on or off (LONGQA_OCR), a page's time, the pages a
    document may have read by OCR, the resolution PDF pages are rendered at, the time all of one
    document's OCR may take (LONGQA_OCR_FILE_TIMEOUT_S)."""

    enabled: bool = True
    page_timeout_s: float = DEFAULT_PAGE_TIMEOUT_S
    max_pages: int = DEFAULT_MAX_PAGES
    dpi: int = DEFAULT_DPI
    language: str = "eng"
    file_timeout_s: float = DEFAULT_FILE_TIMEOUT_S


class OcrTimeUp(DocumentError):
    """A page cut short because its file's OCR time (`OcrLimits.file_timeout_s`) is spent."""


# The limits and the progress hook of this process's reads. Set once per process (the reader worker
# serves one set of limits, given on its command line), so the worker's request and every reader's
# signature stay as they are.
_configured: dict[str, object] = {"limits": OcrLimits(), "progress": None}


def configure(limits: OcrLimits, progress: PageProgress | None = None) -> None:
    """Set this process's OCR limits and the hook told of each page read."""
    _configured.update(limits=limits, progress=progress)


def configured() -> tuple[OcrLimits, PageProgress | None]:
    """This process's OCR limits and page hook."""
    return _configured["limits"], _configured["progress"]  # type: ignore[return-value]


def unavailable(limits: OcrLimits) -> str | None:
    """Why scans cannot be read here (OCR switched off, Tesseract not installed), else None."""
    if not limits.enabled:
        return "OCR is switched off (LONGQA_OCR=off)"
    if shutil.which("tesseract") is None:
        return f"Tesseract is not installed ({INSTALL})"
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return "pytesseract is not installed (pip install pytesseract)"
    return None


def read_page(image: object, limits: OcrLimits, source: str | Path, page: int, file_left_s: float = math.inf) -> str:
    """One page image's text, its orientation corrected. Its passes together are held to the page's
    time and to `file_left_s` (what is left of its file's OCR time): past the page's own, a
    `DocumentError` naming the page; cut short by the file's, an `OcrTimeUp`."""
    import pytesseract

    start = time.monotonic()
    end = start + min(limits.page_timeout_s, file_left_s)
    try:
        text = ""
        for config in PASSES:  # Sauvola's local threshold only when the global one found (nearly) nothing
            left = end - time.monotonic()
            if left <= 0:  # the second pass has no time left: the first one's text is the page's
                break
            text = pytesseract.image_to_string(image, lang=limits.language, config=config, timeout=left).strip()
            if sum(ch.isalnum() for ch in text) >= MIN_PAGE_LETTERS:
                break
        return text
    except RuntimeError as e:  # pytesseract's timeout: "Tesseract process timeout"
        if "timeout" not in str(e).lower():
            raise
        if file_left_s < limits.page_timeout_s:
            raise OcrTimeUp(source, f"OCR of page {page} cut short: {_time_up(limits)}") from None
        raise DocumentError(
            source, f"OCR of page {page} took longer than {limits.page_timeout_s:g} s (LONGQA_OCR_PAGE_TIMEOUT_S)"
        ) from None
    except pytesseract.TesseractError as e:
        raise DocumentError(source, f"OCR of page {page} failed ({str(e.message)[:200]})") from None
    except MemoryError:
        raise
    except OSError as e:  # Tesseract killed by the memory ceiling, or not startable
        raise DocumentError(source, f"OCR of page {page} failed ({e.strerror or type(e).__name__})") from None


def read_image(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """The text of every frame of an image file (a TIFF may hold many pages), pages separated by
    form feeds (a reader of `loaders._ARCHIVE_READERS`: every page of it is read by OCR)."""
    limits, progress = configured()
    if reason := unavailable(limits):
        raise DocumentError(path, f"an image: its text needs OCR, and {reason}")
    texts: list[str] = []
    words, failed, stopped = 0, [], ""
    end = time.monotonic() + limits.file_timeout_s  # all of this file's OCR
    for number, (total, frame) in enumerate(_frames(path, limits), 1):
        text = _page_in_time(frame, limits, path, number, failed, end)
        if text is None:  # the file's OCR time is spent: this page and the ones after it are not read
            stopped = _left_out(limits, range(number - 1, total))
            failed.append(stopped)
            break
        words += len(text.split())
        if words > max_words:
            raise DocumentError(path, f"more than {max_words:,} words; raise LONGQA_MAX_WORDS to allow it")
        texts.append(text)
        if progress is not None:
            progress(number, total)
    if not any(t.strip() for t in texts):
        raise DocumentError(path, stopped or (failed[0] if failed else "an image with no text that OCR could read"))
    if notes is not None:
        notes.extend(failed)
    return f"\n\n{PAGE_BREAK}\n\n".join(texts)


def page_or_skip(image: object, limits: OcrLimits, path: Path, page: int, failed: list[str]) -> str:
    """One page's text; a page whose OCR fails or runs past its time costs that page (its reason in `failed`)."""
    return _page_in_time(image, limits, path, page, failed, math.inf) or ""


def _page_in_time(image: object, limits: OcrLimits, path: Path, page: int, failed: list[str], end: float) -> str | None:
    """One page's text (as `page_or_skip`), or None when its file's OCR time, up at `end` (a
    `time.monotonic()`), is spent before the page or while it is read."""
    left = end - time.monotonic()
    if left <= 0:
        return None
    try:
        return read_page(image, limits, path, page, left)
    except OcrTimeUp:
        return None
    except DocumentError as e:
        failed.append(e.reason)
        return ""


def _frames(path: Path, limits: OcrLimits) -> Iterator[tuple[int, object]]:
    from PIL import Image, ImageSequence, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS  # Pillow refuses larger images (DecompressionBombError) before decoding
    try:
        with Image.open(path) as image:
            n = getattr(image, "n_frames", 1)
            if n > limits.max_pages:
                raise DocumentError(path, _too_many(n, limits))
            for frame in ImageSequence.Iterator(image):
                yield n, frame.convert("L")
    except DocumentError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError) as e:
        said = str(e).replace(f" '{path}'", "").replace(str(path), "the file")  # no path in a reason
        raise DocumentError(path, f"not a readable image ({type(e).__name__}: {said[:200]})") from None


def _too_many(pages: int, limits: OcrLimits) -> str:
    return f"{pages:,} pages to read by OCR, more than {limits.max_pages:,} (LONGQA_OCR_MAX_PAGES)"


def _time_up(limits: OcrLimits) -> str:
    return f"the file's OCR took longer than {limits.file_timeout_s:g} s (LONGQA_OCR_FILE_TIMEOUT_S)"


def _left_out(limits: OcrLimits, indexes: list[int] | range) -> str:
    """The pages (0-based `indexes`) a file's OCR did not read once its time was spent, and why."""
    return f"{_time_up(limits)}: page(s) {_numbers(list(indexes))} not read"


def ocr_pdf_pages(
    path: Path,
    pages: list[int],
    limits: OcrLimits,
    progress: PageProgress | None = None,
    failed: list[str] | None = None,
) -> dict[int, str]:
    """The text of the PDF's pages `pages` (0-based, the ones without a text layer), rendered with
    pypdfium2 and read by OCR; a page that fails costs that page, its reason added to `failed`.
    Refused when more than `max_pages` need it. Once the file's OCR time (`file_timeout_s`) is
    spent, the pages left are not read (absent from the result; one line in `failed` names them)."""
    if len(pages) > limits.max_pages:
        raise DocumentError(path, _too_many(len(pages), limits))
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(str(path))
    except pypdfium2.PdfiumError as e:
        raise DocumentError(path, f"unreadable PDF for OCR ({e})") from None
    texts: dict[int, str] = {}
    failed = [] if failed is None else failed
    end = time.monotonic() + limits.file_timeout_s  # all of this file's OCR, rendering included
    try:
        for done, index in enumerate(pages, 1):
            text = _page_in_time(_render(pdf[index], limits), limits, path, index + 1, failed, end)
            if text is None:  # the file's OCR time is spent: this page and the ones after it are not read
                failed.append(_left_out(limits, pages[done - 1 :]))
                break
            texts[index] = text
            if progress is not None:
                progress(done, len(pages))
    finally:
        pdf.close()
    return texts


def _render(page: Any, limits: OcrLimits) -> object:
    """A PDF page (a pypdfium2 `PdfPage`) as a grey image at `limits.dpi`, fewer dots where that passes MAX_PIXELS."""
    width, height = page.get_size()
    scale = min(limits.dpi / 72, (MAX_PIXELS / max(1.0, width * height)) ** 0.5)
    return page.render(scale=scale, grayscale=True).to_pil()


def page_at(text: str, offset: int) -> int:
    """The page (1-based) that `offset` of a document's text lies on."""
    return text.count(PAGE_BREAK, 0, max(0, offset)) + 1


def page_span(text: str, start: int, end: int) -> str:
    """The pages a span of a document covers, "3" or "3-4"; "" for a document without pages."""
    if PAGE_BREAK not in text:
        return ""
    first, last = page_at(text, start), page_at(text, max(start, end - 1))
    return str(first) if first == last else f"{first}-{last}"


def fill_scanned_pages(path: Path, pages: list[str], notes: list[str]) -> list[int]:
    """Read by OCR the PDF pages whose extracted text is empty (no text layer: a scan) and put their
    text in `pages`; returns the numbers (1-based) of those OCR read. Without OCR here, the pages are
    left empty and `notes` says which and why (a PDF of scans only is then refused by its reader).
    Pages the file's OCR time left unread stay empty, named in `notes`; a PDF left with no text at
    all is refused with that reason."""
    limits, progress = configured()
    blank = [i for i, text in enumerate(pages) if not text.strip()]
    if not blank:
        return []
    if reason := unavailable(limits):
        if len(blank) < len(pages):
            notes.append(f"page(s) {_numbers(blank)} are scans with no text layer, not read: {reason}")
        return []
    read = ocr_pdf_pages(path, blank, limits, progress, notes)
    for index, text in read.items():
        pages[index] = text
    if len(read) < len(blank) and not any(text.strip() for text in pages):  # its OCR time ran out, no text read
        raise DocumentError(path, _left_out(limits, [i for i in blank if i not in read]))
    return sorted(i + 1 for i in read)


def scans_refused() -> str:
    """Why a PDF whose every page is a scan is not read."""
    reason = unavailable(configured()[0])
    if reason:
        return f"PDF has no extractable text (its pages are scans with no text layer, and {reason})"
    return "PDF has no extractable text, even by OCR"


def _numbers(indexes: list[int]) -> str:
    shown = ", ".join(str(i + 1) for i in indexes[:10])
    return shown + (f" and {len(indexes) - 10} more" if len(indexes) > 10 else "")


PROGRESS_FROM_PAGES = 3  # a scan of this many pages or more shows a line per page as OCR reads it


def show_page(source: str, done: int, total: int) -> None:
    """A progress line on stderr for a page read by OCR in a long scan (not under -q: errors only)."""
    import logging
    import sys

    if total >= PROGRESS_FROM_PAGES and logging.getLogger().isEnabledFor(logging.WARNING):
        print(f"{source}: OCR page {done}/{total}", file=sys.stderr, flush=True)


def location(document: Document, start: int, end: int) -> dict[str, object]:
    """Where a span of a document lies, for its citation: {"page": "3"} in a paged document (a PDF,
    a multi-page TIFF), with "ocr": True when the text of one of those pages was read by OCR; {} otherwise."""
    pages = page_span(document.text, start, end) or ("1" if document.encoding == "pdf" else "")
    if not pages:
        return {"ocr": True} if document.ocr_pages else {}
    first, _, last = pages.partition("-")
    read = set(range(int(first), int(last or first) + 1)) & set(document.ocr_pages)
    return {"page": pages, "ocr": True} if read else {"page": pages}
