"""OCR held to bounds a reader worker cannot escape (an auditor's two repros):

1. A read killed for its time leaves nothing behind: the reader worker leads a process group of its
   own, so the Tesseract it started dies with it, and its temporary files (pytesseract's page images,
   whose own cleanup never runs in a worker killed with SIGKILL) are in a folder of its own that is
   removed once it has ended; a worker whose parent is killed ends its group itself.
2. All of one file's OCR is held to `ocr_file_timeout_s` (LONGQA_OCR_FILE_TIMEOUT_S): a PDF of pages
   that each draw a noise image read for ~2.5 s a page with no bound but its 500 pages. Past the cap
   the pages not yet read are left out, named in a warning, and a file with no text read is skipped
   with that reason.

Tesseract processes are found in /proc by their command line, which names the image they read (in
the temporary folder the test gives): a Tesseract orphaned by its killed worker is no longer the
test's descendant, so descent alone would miss exactly the processes looked for."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.read import bounded
from longqa.retrieval.read.bounded import BoundedReader, ReadLimits
from longqa.retrieval.read.loaders import DocumentError, load_document
from longqa.retrieval.read.ocr import DEFAULT_FILE_TIMEOUT_S, OcrLimits, configure

pytestmark = [
    pytest.mark.skipif(shutil.which("tesseract") is None, reason="Tesseract not installed"),
    pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds processes in /proc"),
]
SLOW_IMAGE_PX = 3000  # a square of binary noise: Tesseract reads it for ~5 s a pass (~10 s both), no text
CAP_S = 0.2  # a file's OCR time in the cap's tests: less than one noise page's first pass (~0.7 s)


def _noise(width: int, height: int, seed: int, block: int = 1) -> object:
    import numpy as np
    from PIL import Image

    bits = np.random.default_rng(seed).random((height // block, width // block)) > 0.5
    image = Image.fromarray((bits * 255).astype(np.uint8), "L")
    return image.resize((width, height), Image.NEAREST).convert("1") if block > 1 else image.convert("1")


def _slow_image(path: Path) -> Path:
    _noise(SLOW_IMAGE_PX, SLOW_IMAGE_PX, 0).save(path)  # type: ignore[attr-defined]
    return path


def _noise_pdf(pages: int) -> io.BytesIO:
    """Letter pages each drawing one binary-noise image (850x1100 at 100 dpi, read at 200): no text
    layer, and ~0.7 s a pass of Tesseract that finds no text."""
    frames = [_noise(850, 1100, seed) for seed in range(pages)]
    data = io.BytesIO()
    frames[0].save(data, format="PDF", save_all=True, append_images=frames[1:], resolution=100)  # type: ignore[attr-defined]
    data.seek(0)
    return data


def _text_page(text: str) -> io.BytesIO:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    data = io.BytesIO()
    c = canvas.Canvas(data, pagesize=letter)
    c.drawString(72, 720, text)
    c.save()
    data.seek(0)
    return data


def _pdf(path: Path, *parts: io.BytesIO) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for part in parts:
        for page in PdfReader(part).pages:
            writer.add_page(page)
    with path.open("wb") as f:
        writer.write(f)
    return path


def _tesseracts(root: Path) -> set[int]:
    """The live (not zombie) Tesseract processes reading an image under `root`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if args[0].endswith(b"tesseract") and any(str(root).encode() in a for a in args) and state != "Z":
            found.add(int(entry.name))
    return found


class Watch:
    """Records, while a block runs, the Tesseract processes reading under `root` and the names of the
    files under it: proof that the case reached Tesseract, and what it must leave behind."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pids: set[int] = set()
        self.files: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.pids |= _tesseracts(self.root)
            self.files |= {p.name for p in self.root.rglob("*")}

    def wait_for_tesseract(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.pids and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.pids, "Tesseract never ran"


def _all_gone(pids: set[int], within_s: float = 5.0) -> set[int]:
    """The processes of `pids` still alive (zombies count as gone) after waiting up to `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        alive = {pid for pid in pids if _alive(pid)}
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _left_in(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.startswith(("tess_", "longqa-reader-")))


# -- 1. a killed read leaves no Tesseract and no temporary files ---------------------------------------


def test_a_timed_out_ocr_read_leaves_no_tesseract_and_no_temporary_files(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))  # where the parent makes each worker's folder
    image = _slow_image(tmp_path / "noise.png")
    reader = BoundedReader(ReadLimits(timeout_s=2.0))
    try:
        with Watch(root) as seen, pytest.raises(DocumentError, match="reading timed out"):
            reader.load(image, 100_000)
        left, after = _left_in(root), _all_gone(seen.pids)
    finally:
        reader.close()
    assert seen.pids and any(name.startswith("tess_") for name in seen.files), (seen.pids, seen.files)
    assert any(name.startswith("longqa-reader-") for name in seen.files)  # the worker's own folder
    assert after == set(), f"Tesseract still running after the read returned: {after}"
    assert left == [], left  # removed by the time load() returned, not later


def test_index_skips_a_slow_image_and_leaves_no_tesseract_or_temporary_files(tmp_path):
    """The auditor's repro through `longqa index`: its TMPDIR holds no reader folder or pytesseract
    file after the run, and no Tesseract of the run is left running."""
    root, docs = tmp_path / "tmp", tmp_path / "docs"
    root.mkdir()
    docs.mkdir()
    _slow_image(docs / "noise.png")
    (docs / "ok.md").write_text("# Ok\n\nThe harbour master logs every ship that enters before noon.\n")
    env = {**os.environ, "TMPDIR": str(root), "LONGQA_WARM": "0", "LONGQA_MODEL": ""}
    command = [sys.executable, "-m", "longqa.cli", "--home", str(tmp_path / "home"), "index", str(docs)]
    with Watch(root) as seen:
        done = subprocess.run(
            [*command, "--set", "read_timeout_s=2"], capture_output=True, text=True, env=env, timeout=300
        )
        left, after = _left_in(root), _all_gone(seen.pids)
    assert done.returncode == 0, done.stderr
    assert "noise.png: reading timed out" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "1 indexed" in done.stdout + done.stderr
    assert seen.pids, "Tesseract never ran"
    assert after == set() and left == [], (after, left)


def test_a_worker_whose_parent_is_killed_mid_ocr_ends_its_tesseract_and_folder(tmp_path):
    root = tmp_path / "tmp"
    root.mkdir()
    image = _slow_image(tmp_path / "noise.png")
    script = (
        "import sys\nfrom longqa.retrieval.read.bounded import BoundedReader, ReadLimits\n"
        "BoundedReader(ReadLimits(timeout_s=120)).load(sys.argv[1], 100_000)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script, str(image)], env={**os.environ, "TMPDIR": str(root)})
    try:
        with Watch(root) as seen:
            seen.wait_for_tesseract(60)
            parent.send_signal(signal.SIGKILL)  # no chance to stop its worker
            parent.wait(10)
            after = _all_gone(seen.pids, within_s=3 * bounded.PARENT_CHECK_S + 2)
    finally:
        parent.kill()
    assert after == set(), f"Tesseract outlived its reader's parent: {after}"
    deadline = time.monotonic() + 5
    while _left_in(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _left_in(root) == []


# -- 2. all of a file's OCR is held to ocr_file_timeout_s --------------------------------------------


def test_a_scan_whose_ocr_outlasts_the_files_time_is_skipped_naming_the_setting(tmp_path):
    pdf = _pdf(tmp_path / "noise.pdf", _noise_pdf(4))
    configure(OcrLimits(file_timeout_s=CAP_S))
    try:
        t0 = time.monotonic()
        with pytest.raises(DocumentError) as refused:
            load_document(pdf)
        seconds = time.monotonic() - t0
    finally:
        configure(OcrLimits())
    # the first page is cut at the cap (or, on a fast machine, read: no text), the rest never started
    assert refused.value.reason.startswith(
        f"the file's OCR took longer than {CAP_S:g} s (LONGQA_OCR_FILE_TIMEOUT_S): page(s) "
    ), refused.value.reason
    assert refused.value.reason.endswith("3, 4 not read"), refused.value.reason
    assert seconds < 5, seconds  # four pages would take ~5 s and more


def test_past_the_files_ocr_time_the_pages_read_are_kept_and_the_rest_named(tmp_path):
    pdf = _pdf(tmp_path / "mixed.pdf", _text_page("The lighthouse was first lit in 1871."), _noise_pdf(3))
    configure(OcrLimits(file_timeout_s=CAP_S))
    try:
        document = load_document(pdf)
    finally:
        configure(OcrLimits())
    assert "first lit in 1871" in document.text
    [warning] = [w for w in document.warnings if "LONGQA_OCR_FILE_TIMEOUT_S" in w]
    assert warning.startswith(f"the file's OCR took longer than {CAP_S:g} s (LONGQA_OCR_FILE_TIMEOUT_S): page(s) ")
    assert warning.endswith("3, 4 not read"), warning
    assert 3 not in document.ocr_pages and 4 not in document.ocr_pages  # never read by OCR


def test_an_image_whose_ocr_outlasts_the_files_time_is_skipped_naming_the_setting(tmp_path):
    image = tmp_path / "noise.png"
    _noise(1700, 2200, 3, block=2).save(image)  # type: ignore[attr-defined]
    configure(OcrLimits(file_timeout_s=CAP_S))
    try:
        with pytest.raises(DocumentError, match=r"\(LONGQA_OCR_FILE_TIMEOUT_S\): page\(s\) 1 not read"):
            load_document(image)
    finally:
        configure(OcrLimits())


def test_in_the_reader_worker_a_long_scan_ends_near_its_files_ocr_time(tmp_path):
    """Twenty noise pages (~25 s of OCR) with a 2 s cap: the read ends within a few seconds of it."""
    pdf = _pdf(tmp_path / "long.pdf", _noise_pdf(20))
    (tmp_path / "warm.md").write_text("A first file, so the worker is started and ready.\n")
    reader = BoundedReader(ReadLimits(timeout_s=30, ocr=OcrLimits(file_timeout_s=2.0)))
    try:
        reader.load(tmp_path / "warm.md", 1000)
        t0 = time.monotonic()
        with pytest.raises(DocumentError, match=r"took longer than 2 s \(LONGQA_OCR_FILE_TIMEOUT_S\)") as refused:
            reader.load(pdf, 100_000)
        seconds = time.monotonic() - t0
    finally:
        reader.close()
    assert refused.value.reason.endswith("more not read"), refused.value.reason  # 10 pages named, then a count
    assert seconds < 2.0 + 6, seconds


def test_the_parent_ends_a_read_whose_ocr_runs_past_the_files_time_plus_the_reads(monkeypatch):
    """A worker that keeps reporting pages (one that does not hold itself to the cap) is stopped by
    the parent at read_timeout_s + ocr_file_timeout_s (+ the slack)."""
    monkeypatch.setattr(bounded, "PAGE_SLACK_S", 0.1)

    class Pages:  # a worker's end of the socket that reports a page every 20 ms, forever
        def poll(self, timeout: float) -> bool:
            time.sleep(min(timeout, 0.02))
            return timeout >= 0.02

        def recv(self) -> tuple[str, object]:
            return "page", (1, 1000)

    worker = type("FakeWorker", (), {"conn": Pages()})()
    reader = BoundedReader(ReadLimits(timeout_s=0.3, ocr=OcrLimits(file_timeout_s=0.5)))
    monkeypatch.setattr(bounded, "show_page", lambda *a: None)
    t0 = time.monotonic()
    with pytest.raises(
        DocumentError, match=r"took longer than 0.9 s: the read_timeout_s limit, plus ocr_file_timeout_s"
    ):
        reader._answer(worker, "endless.pdf")  # type: ignore[arg-type]
    assert 0.8 < time.monotonic() - t0 < 3


def test_the_files_ocr_time_is_a_deployment_setting(monkeypatch):
    monkeypatch.delenv("LONGQA_OCR_FILE_TIMEOUT_S", raising=False)
    assert Settings().read_limits().ocr.file_timeout_s == DEFAULT_FILE_TIMEOUT_S == 300
    assert Settings(ocr_file_timeout_s=12).read_limits().ocr.file_timeout_s == 12
    monkeypatch.setenv("LONGQA_OCR_FILE_TIMEOUT_S", "45")
    assert Settings().read_limits().ocr.file_timeout_s == 45
    with pytest.raises(ValueError):
        Settings(ocr_file_timeout_s=0)
