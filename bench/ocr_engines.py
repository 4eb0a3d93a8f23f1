"""Which OCR engine longqa reads scans with: word recall against the known text of bench/scan_corpus.py's
scans, seconds per page and peak memory, engine by engine, each in a fresh process.

Engines (one missing from the environment is named and left out):

  tesseract-psm1   Tesseract 5 (Debian's tesseract-ocr) through pytesseract, `--psm 1`: the page's
                   orientation found and the text read in one pass; read again with Sauvola's local
                   threshold when that finds (nearly) nothing (longqa.retrieval.read.ocr.read_page, what longqa runs)
  tesseract-sauvola  `--psm 1` with Sauvola's threshold on every page
  tesseract-osd    `--psm 0` (orientation only) first, the page turned, then `--psm 3`
  tesseract-try4   the page read at 0/90/180/270 degrees, the reading with the best mean confidence kept
  tesseract-plain  `--psm 3`, no orientation detection (what a turned page costs without it)
  rapidocr         rapidocr 3 (PP-OCR models shipped in its wheel, ONNX Runtime)
  rapidocr-ort     rapidocr-onnxruntime 1.4 (PP-OCRv4 models shipped in its wheel)

Recall is the share of the true words (lower case, letters and digits) found, counted as a multiset;
peak memory is the largest resident set of one process of the engine's run (the Python process that
drives it, or a Tesseract process it starts: `ru_maxrss`).

    python bench/ocr_engines.py                     # every engine found, on a fresh corpus
    python bench/ocr_engines.py --engines tesseract-psm1 rapidocr
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENGINES = (
    "tesseract-psm1",
    "tesseract-sauvola",
    "tesseract-osd",
    "tesseract-try4",
    "tesseract-plain",
    "rapidocr",
    "rapidocr-ort",
)
DPI = 200
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> Counter[str]:
    """The text's words, lower case, as a multiset."""
    return Counter(_WORD.findall(text.lower()))


def recall(truth: str, found: str) -> float:
    """The share of the true words found (each counted as often as it occurs in the truth)."""
    want, got = words(truth), words(found)
    return sum(min(n, got[w]) for w, n in want.items()) / max(1, sum(want.values()))


def pages_of(path: Path) -> list[tuple[object, str]]:
    """(page image or None, text layer) of each page: images' frames, a PDF's pages rendered at DPI
    when they have no text layer."""
    from PIL import Image, ImageSequence

    if path.suffix.lower() != ".pdf":
        with Image.open(path) as image:
            return [(frame.convert("L").copy(), "") for frame in ImageSequence.Iterator(image)]
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    out: list[tuple[object, str]] = []
    for page in pdf:
        layer = page.get_textpage().get_text_range()
        out.append((None, layer) if layer.strip() else (page.render(scale=DPI / 72).to_pil().convert("L"), ""))
    return out


def _longqa():  # noqa: ANN202
    from longqa.retrieval.read.ocr import OcrLimits, read_page

    return lambda image: read_page(image, OcrLimits(), "bench", 1)


def _tesseract(psm: str):  # noqa: ANN202
    import pytesseract

    return lambda image: pytesseract.image_to_string(image, config=f"--psm {psm}")


def _tesseract_osd():  # noqa: ANN202
    import pytesseract

    def read(image: object) -> str:
        try:
            turn = int(re.search(r"Rotate: (\d+)", pytesseract.image_to_osd(image)).group(1))  # type: ignore[union-attr]
        except (pytesseract.TesseractError, AttributeError):
            turn = 0
        return pytesseract.image_to_string(image.rotate(-turn, expand=True), config="--psm 3")  # type: ignore[attr-defined]

    return read


def _tesseract_try4():  # noqa: ANN202
    import pytesseract

    def read(image: object) -> str:
        best = (-1.0, "")
        for turn in (0, 90, 180, 270):
            data = pytesseract.image_to_data(
                image.rotate(turn, expand=True),
                config="--psm 3",
                output_type=pytesseract.Output.DICT,  # type: ignore[attr-defined]
            )
            confs = [float(c) for c, t in zip(data["conf"], data["text"], strict=True) if t.strip() and float(c) >= 0]
            score = sum(confs) / len(confs) if confs else 0.0
            best = max(best, (score, " ".join(t for t in data["text"] if t.strip())))
        return best[1]

    return read


def _rapidocr():  # noqa: ANN202
    import numpy as np
    from rapidocr import RapidOCR

    engine = RapidOCR()
    return lambda image: " ".join(engine(np.asarray(image.convert("RGB"))).txts or ())


def _rapidocr_ort():  # noqa: ANN202
    import numpy as np
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR()

    def read(image: object) -> str:
        result, _ = engine(np.asarray(image.convert("RGB")))  # type: ignore[attr-defined]
        return " ".join(line[1] for line in result or ())

    return read


READERS = {
    "tesseract-psm1": _longqa,
    "tesseract-sauvola": lambda: _tesseract("1 -c thresholding_method=2"),
    "tesseract-plain": lambda: _tesseract("3"),
    "tesseract-osd": _tesseract_osd,
    "tesseract-try4": _tesseract_try4,
    "rapidocr": _rapidocr,
    "rapidocr-ort": _rapidocr_ort,
}


def run_engine(engine: str, folder: Path) -> dict:
    """In this process: read every scan with one engine; recall per file, seconds per OCR'd page."""
    read = READERS[engine]()
    truth = json.loads((folder / "truth.json").read_text("utf-8"))
    files, seconds, pages = {}, 0.0, 0
    for scan in truth:
        texts = []
        for image, layer in pages_of(folder / scan["name"]):
            if image is None:
                texts.append(layer)
                continue
            started = time.perf_counter()
            texts.append(read(image))
            seconds += time.perf_counter() - started
            pages += 1
        files[scan["name"]] = round(recall(scan["text"], "\n".join(texts)), 3)
    return {"files": files, "seconds_per_page": seconds / max(1, pages), "pages": pages}


def measure(engine: str, folder: Path) -> dict | str:
    """Run one engine in a fresh process; its result with the process tree's peak memory, or why it could not run."""
    done = subprocess.run(
        [sys.executable, __file__, "--one", engine, "--folder", str(folder)], capture_output=True, text=True
    )
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["failed"])[-1][:100]
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Build the corpus, run each engine, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", nargs="*", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--folder", type=Path, help="a corpus already built (default: a fresh one)")
    parser.add_argument("--one", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        result = run_engine(args.one, args.folder)
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB; the engine's own processes below
        result["peak_mb"] = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        print(json.dumps(result))
        return
    from bench.scan_corpus import build

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp)
        if args.folder is None:
            build(folder)
        results = {engine: measure(engine, folder) for engine in args.engines}
    names = next((list(r["files"]) for r in results.values() if isinstance(r, dict)), [])
    print(f"{'file':<20}" + "".join(f"{e:>17}" for e in results))
    for name in names:
        print(
            f"{name:<20}"
            + "".join(f"{r['files'][name]:>17.3f}" if isinstance(r, dict) else f"{'-':>17}" for r in results.values())
        )
    rows = (
        ("mean recall", lambda r: f"{sum(r['files'].values()) / len(r['files']):.3f}"),
        ("s / page", lambda r: f"{r['seconds_per_page']:.2f}"),
        ("peak MB", lambda r: f"{r['peak_mb']:.0f}"),
    )
    for label, cell in rows:
        print(f"{label:<20}" + "".join(f"{cell(r) if isinstance(r, dict) else '-':>17}" for r in results.values()))
    for engine, r in results.items():
        if not isinstance(r, dict):
            print(f"{engine}: not run ({r})")


if __name__ == "__main__":
    main()
