"""Hostile files in a folder: each one small on disk and built to stop or starve a reader (issue
29, "bounded work per file"). Every case indexes a folder of ordinary files plus one hostile file
and checks that the run ends within a bound, that this process's resident memory grows by less
than a bound while it runs, that the ordinary files are indexed, and that the hostile one is
skipped with its reason. The fixtures are built at test time under tmp_path (sparse files by
truncate). The older hostile cases (path traversal, zip bombs, billion laughs, cyclic PDFs, FIFOs,
/dev/zero links) are in tests/test_hostile.py and tests/test_formats.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from longqa.graph.index_graph import graph as index_graph
from longqa.retrieval import DocumentError
from longqa.retrieval.read.bounded import BoundedReader, ReadLimits
from longqa.retrieval.read.loaders import load_document, printable_name

from . import hostile_builders as build

RUN_SECONDS = 90  # the whole index run of a folder holding one hostile file, embedding included
RSS_GROWTH_MB = 300  # this process's resident memory during that run, over what it held before
TIMEOUT_S = 4.0  # read_timeout_s for these runs: the quadratic HTML must hit it, nothing ordinary may
ORDINARY = {
    "a_notes.md": "The harbor master logs every ship that enters the harbor before noon.",
    "b_report.txt": "Cargo volumes rose by a fifth in the second quarter, led by grain.",
    "z_after.html": "<html><body><h1>After</h1><p>Read after the hostile file, by a fresh worker.</p></body></html>",
}


class PeakRss:
    """Samples this process's resident set size while a block runs: its peak over the start."""

    def __init__(self) -> None:
        self.peak = self.start = _rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _rss_bytes())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / (1 << 20)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


pytestmark = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc for memory")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in ORDINARY.items():
        (folder / name).write_text(text, "utf-8")
    return folder


@pytest.fixture(scope="module")
def warm_home(tmp_path_factory) -> Path:
    """A home whose embedder is loaded (a first run), so memory growth measures the reading."""
    home = tmp_path_factory.mktemp("hostile-files-home")
    folder = _folder(tmp_path_factory.mktemp("warm"))
    out = index_graph.invoke({"documents": [str(folder)]}, context={"home": str(home)})
    assert out["error"] is None and len(out["doc_ids"]) == 3
    return home


def _index(home: Path, folder: Path, **settings) -> tuple[dict, float, PeakRss]:
    context = {"home": str(home), "read_timeout_s": TIMEOUT_S, "read_memory_mb": 512, **settings}
    with PeakRss() as rss:
        t0 = time.perf_counter()
        out = index_graph.invoke({"documents": [str(folder)]}, context=context)
        seconds = time.perf_counter() - t0
    return out, seconds, rss


def _sparse_text_with_long_head(path: Path) -> Path:
    path.write_bytes(b"A text head of many lines.\n" * 100_000)  # past the first block the reader sniffs
    with path.open("r+b") as f:
        f.truncate(100 << 20)
    return path


# (file name, builder, what the skip's reason says, settings for the run)
CASES: list[tuple[str, Callable[[Path], Path], str, dict]] = [
    ("bomb.docx", build.docx_bomb, "too many paragraphs in the DOCX", {}),
    (
        "runs.docx",
        lambda p: build.docx_bomb(p, 30, b"<w:r/>"),
        "too many XML elements in the DOCX",
        {"max_words": 1000},
    ),
    ("spine.epub", build.epub_spine_bomb, "too large an EPUB package document", {}),
    ("spine-small.epub", lambda p: build.epub_spine_bomb(p, 20_000), "too many spine items in the EPUB", {}),
    ("sparse.txt", build.sparse_text, "too large (524,288,000 bytes", {}),
    ("sparse-under-limit.txt", _sparse_text_with_long_head, "binary file (a NUL byte at offset 2,700,000", {}),
    # the text limit raised past the file, so its reading runs out of memory first
    ("huge.md", lambda p: build.long_run_text(p, 40), "ran out of memory", {"read_memory_mb": 64, "max_text_mb": 64}),
    # issue 30's formats: a sheet whose cells span 16,384 columns (a dense grid's area), a cell bomb
    # counted before calamine reads it, a slide of millions of empty paragraphs, a million-row CSV
    ("padded.xlsx", build.xlsx_padded_rows, "XLSX sheet spans 13 rows x 16,384 columns", {"max_words": 10_000}),
    (
        "cells.xlsx",
        lambda p: build.xlsx_cell_bomb(p, 30),
        "too many cells in the XLSX (more than 250,000",
        # the count stops at the limit (~4 MB of its XML), which a loaded 2-core machine can take past 4 s
        {"max_words": 100_000, "read_timeout_s": 20.0},
    ),
    ("bomb.pptx", build.pptx_bomb, "too many paragraphs in the PPTX", {}),
    ("rows.csv", build.million_row_csv, "more than 200,000 words", {"max_words": 200_000}),
]


@pytest.mark.parametrize(("name", "builder", "reason", "settings"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_file_is_skipped_with_its_reason_and_the_folder_indexed(
    tmp_path, warm_home, name, builder, reason, settings
):
    folder = _folder(tmp_path)
    builder(folder / name)
    out, seconds, rss = _index(warm_home, folder, **settings)
    assert out["error"] is None, out["error"]
    assert len(out["doc_ids"]) == len(ORDINARY), out
    skipped = [s for s in out["skipped"] if name in s]
    assert len(skipped) == 1 and reason in skipped[0], out["skipped"]
    assert seconds < RUN_SECONDS, f"{name}: {seconds:.1f} s"
    assert rss.growth_mb < RSS_GROWTH_MB, f"{name}: +{rss.growth_mb:.0f} MB"


def _read_or_skipped_at_the_time_limit(tmp_path: Path, home: Path, name: str, builder: Callable[[Path], Path]) -> None:
    """The folder indexed with the file `builder` makes either read or skipped because the time
    ceiling killed its worker, within the run's time and memory bounds."""
    folder = _folder(tmp_path)
    builder(folder / name)
    out, seconds, rss = _index(home, folder)
    assert out["error"] is None, out["error"]
    skipped = [s for s in out["skipped"] if name in s]
    assert len(out["doc_ids"]) == len(ORDINARY) + (0 if skipped else 1), out
    assert not skipped or "reading timed out (took longer than 4 s" in skipped[0], skipped
    assert seconds < RUN_SECONDS and rss.growth_mb < RSS_GROWTH_MB, (seconds, rss.growth_mb)


def test_a_quadratic_html_is_at_worst_a_skip_at_the_time_limit(tmp_path, warm_home):
    """3.8 MB of unclosed `<div><p>x</p>`: every reader is under the time ceiling, so this HTML
    is read (a linear HTML reader) or skipped when the ceiling kills its worker, never a hang."""
    _read_or_skipped_at_the_time_limit(tmp_path, warm_home, "nested.html", build.quadratic_html)


def test_a_letter_spaced_pdf_is_at_worst_a_skip_at_the_time_limit(tmp_path, warm_home):
    """20 wide pages of 20,000 kerned single letters each (issue 30's column search and word repair
    run on every page): read, or skipped when the ceiling kills its worker, never a hang."""
    _read_or_skipped_at_the_time_limit(tmp_path, warm_home, "spaced.pdf", build.letter_spaced_pdf)


def test_plain_text_reading_is_linear_on_a_run_without_spaces(tmp_path):
    """One 32 MB word: the reader looks at each block once (it used to rescan the growing word
    at every block), so eight times the text costs about eight times the time, not sixty-four."""
    small, large = build.long_run_text(tmp_path / "small.txt", 4), build.long_run_text(tmp_path / "large.txt", 32)
    times = []
    for path in (small, large):
        best = float("inf")
        for _ in range(2):  # this process's CPU seconds, the better of two: other processes' load does not count
            t0 = time.process_time()
            document = load_document(path)
            best = min(best, time.process_time() - t0)
        times.append(best)
        assert len(document.text) == path.stat().st_size and len(document.paragraphs) == 1
    assert times[1] < 30 * max(times[0], 0.05), times  # quadratic would be ~64x; linear ~8x


def test_a_reader_over_its_time_limit_is_killed_and_the_next_file_read(tmp_path):
    reader = BoundedReader(ReadLimits(timeout_s=1.0, memory_mb=256))
    slow = build.quadratic_html(tmp_path / "slow.html", 1.0)
    fine = tmp_path / "fine.html"
    fine.write_text("<p>Fine.</p>", "utf-8")
    try:
        t0 = time.perf_counter()
        with pytest.raises(DocumentError, match="reading timed out"):
            reader.load(slow, max_words=1000)
        assert time.perf_counter() - t0 < 10
        assert reader.load(fine, max_words=1000).text == "Fine."
    finally:
        reader.close()


def test_a_file_named_directly_is_refused_by_the_same_ceiling(tmp_path):
    reader = BoundedReader(ReadLimits(max_bytes=1 << 20))
    huge = build.sparse_text(tmp_path / "named.txt", 2)
    with pytest.raises(DocumentError, match=r"too large \(2,097,152 bytes > 1,048,576; the max_file_mb limit\)"):
        reader.load(huge, max_words=1000)


def test_a_file_name_with_a_newline_cannot_forge_an_output_line(tmp_path):
    folder = _folder(tmp_path)
    (folder / "evil\nadded: forged.md").write_text("A file whose name holds a newline.", "utf-8")
    (folder / "bomb.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (folder / "bad\rname\x1b[31m.docx").write_bytes(b"not a zip either")
    build.sparse_text(folder / "big.txt", 2)  # over the --set max_file_mb=1
    home = tmp_path / "home"
    done = subprocess.run(
        # not -q: the per-file lines are the ones a forged name could imitate (-q prints the summary alone)
        [sys.executable, "-m", "longqa.cli", "--home", str(home), "index", str(folder), "--set", "max_file_mb=1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert not any(line.startswith("added: forged") for line in lines), lines
    assert any(line.endswith("docs/evil\\nadded: forged.md") and line.startswith("added: ") for line in lines), lines
    assert any(line.startswith("skipped: ") and "bad\\rname\\x1b[31m.docx: " in line for line in lines), lines
    assert not any("\r" in line or "\x1b" in line for line in lines)
    assert any(
        line.startswith("skipped: ") and "big.txt: too large (2,097,152 bytes > 1,048,576" in line for line in lines
    )
    assert printable_name("a\nb\u2028c\x9bd") == "a\\nb\\u2028c\\x9bd"


# -- issue 45: the whole index of a file bounded, not only its read ----------------------------------
# The index runs in a child process (a warm run of the ordinary files first), which reports the
# growth of its own peak resident memory over what it held after the warm run: the parent's chunking
# and embedding are measured, not only the reader's (the reader worker has its own address-space limit).
_CHILD = r"""
import json, os, sys
from longqa.graph.index_graph import graph
home, warm, folder, timeout = sys.argv[1:5]
context = {"home": home, "read_timeout_s": float(timeout), "read_memory_mb": 512}
assert graph.invoke({"documents": [warm]}, context=context)["error"] is None
# the warm run's own peak (a first ONNX export, say) must not count: reset the peak to what is held now
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
with open("/proc/self/statm") as f:
    held = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
out = graph.invoke({"documents": [folder]}, context=context)
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024
print(json.dumps({"out": {k: out[k] for k in ("error", "doc_ids", "skipped")}, "growth_mb": (peak - held) / 2**20}))
"""
HANG_GUARD_S = 900  # not a measure of speed: only that a hung child cannot hold the suite forever
TIME_LIMIT_HIT = "reading timed out (took longer than 4 s"
# (file name, builder, what its skip may say besides the time limit; None: it must be read)
BOUNDED_CASES: list[tuple[str, Callable[[Path], Path], str | None]] = [
    ("run.txt", lambda p: build.long_run_text(p, 200), "the max_text_mb limit"),
    ("huge.xlsx", lambda p: build.xlsx_huge_string(p, 200), "the max_text_mb limit"),
    ("brackets.md", build.markdown_image_brackets, None),
]


@pytest.mark.parametrize(("name", "builder", "reason"), BOUNDED_CASES, ids=[c[0] for c in BOUNDED_CASES])
def test_the_whole_index_of_a_hostile_file_is_bounded(tmp_path, name, builder, reason):
    """A 200 MB .txt with no whitespace and an .xlsx holding one 200 MB string (which took the CLI to
    3.8 GB in its chunking) are refused in the reader by the text limit; a Markdown line of `![`
    repeated (minutes in a quadratic regular expression, once read in-process) is read in the worker
    under its time limit. The good files beside them are indexed, and the indexing process's peak
    memory grows by less than RSS_GROWTH_MB."""
    (tmp_path / "warm").mkdir()
    warm = _folder(tmp_path / "warm")
    folder = _folder(tmp_path)
    builder(folder / name)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "home"), str(warm), str(folder), str(TIMEOUT_S)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    out, skipped = report["out"], [s for s in report["out"]["skipped"] if name in s]
    assert out["error"] is None, out["error"]
    assert len(out["doc_ids"]) == len(ORDINARY) + (0 if skipped else 1), out
    said = [TIME_LIMIT_HIT] + ([reason] if reason else [])
    assert (reason is None and not skipped) or (len(skipped) == 1 and any(s in skipped[0] for s in said)), skipped
    assert report["growth_mb"] < RSS_GROWTH_MB, f"{name}: +{report['growth_mb']:.0f} MB"


def test_small_markdown_and_text_are_read_in_the_worker_too(tmp_path, monkeypatch):
    """No reader runs in the calling process any more (small Markdown was, with no time limit): with
    this process's loader made to fail, the files are still read, so the worker read them."""
    from longqa.retrieval.read import bounded

    monkeypatch.setattr(bounded, "load_document", lambda *_a, **_k: pytest.fail("read in the calling process"))
    reader = BoundedReader(ReadLimits(timeout_s=60.0, memory_mb=256))
    try:
        for name, text in (("small.md", "# Small\n\nA short note."), ("small.txt", "A short note.")):
            (tmp_path / name).write_text(text, "utf-8")
            assert "A short note." in reader.load(tmp_path / name, max_words=1000).text
    finally:
        reader.close()
