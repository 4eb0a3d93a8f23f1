"""What reading each file under a time and memory ceiling costs (issue 29, part 4): a folder of
ordinary small files read, and indexed, with the isolation (`retrieval/read/bounded.py`: worker
processes under `read_timeout_s` / `read_memory_mb`; since issue 45 every file, small text too) and
without it (every file read in this process, no ceiling), side by side in one run, rounds
interleaved.

  read    every file of the folder loaded (a fresh reader each round, so its worker start-up counts)
  index   `longqa index` of the folder into a fresh home (reading, chunking, BM25, embedding)

    python bench/bounded_reading.py                    # 200 files (80 .md, 60 .html, 60 .docx), 2 rounds
    python bench/bounded_reading.py --files 60 --rounds 1
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import distinct_paragraphs, machine, md_table, offline_env, save  # noqa: E402

MODES = ("in-process", "isolated")


def build_folder(folder: Path, n_files: int) -> dict[str, int]:
    """n_files ordinary documents of ~3 paragraphs each: 40% Markdown, 30% HTML, 30% Word."""
    import docx

    paragraphs = [text for _, text, _ in distinct_paragraphs()]
    kinds = {"md": 0, "html": 0, "docx": 0}
    for i in range(n_files):
        body = paragraphs[3 * i : 3 * i + 3]
        kind = "md" if i % 10 < 4 else "html" if i % 10 < 7 else "docx"
        kinds[kind] += 1
        path = folder / f"doc{i:04d}.{kind}"
        if kind == "md":
            path.write_text(f"# Document {i}\n\n" + "\n\n".join(body), "utf-8")
        elif kind == "html":
            path.write_text(f"<html><body><h1>Document {i}</h1>" + "".join(f"<p>{p}</p>" for p in body), "utf-8")
        else:
            document = docx.Document()
            document.add_heading(f"Document {i}", 1)
            for p in body:
                document.add_paragraph(p)
            document.save(str(path))
    return kinds


def reader(mode: str):
    from longqa.retrieval.read.bounded import BoundedReader, ReadLimits

    return BoundedReader(ReadLimits(isolated=mode == "isolated")).start()


def time_read(folder: Path, mode: str) -> float:
    files = sorted(folder.iterdir())
    t0 = time.perf_counter()
    bounded = reader(mode)  # started in the timed part: its worker's start-up counts
    for f in files:
        bounded.load(f, max_words=3_000_000)
    seconds = time.perf_counter() - t0
    bounded.close()
    return seconds


def time_index(folder: Path, mode: str, home: Path) -> float:
    from longqa.contracts.settings import Settings
    from longqa.services import inputs

    original = inputs.reader_for
    try:
        t0 = time.perf_counter()
        bounded = reader(mode)
        inputs.reader_for = lambda limits: bounded  # the same index run, reading through this reader
        opened = inputs.index_library({"documents": [str(folder)]}, Settings(home=home), [150])
        seconds = time.perf_counter() - t0
    finally:
        inputs.reader_for = original
        bounded.close()
    assert not opened.skipped, opened.skipped
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    offline_env()
    work = Path(tempfile.mkdtemp(prefix="bounded-bench-"))
    try:
        folder = work / "docs"
        folder.mkdir()
        kinds = build_folder(folder, args.files)
        time_index(folder, "in-process", work / "warm")  # load the embedder before any timed run
        results: dict[str, dict[str, list[float]]] = {m: {"read": [], "index": []} for m in MODES}
        for r in range(args.rounds):
            for mode in MODES if r % 2 == 0 else reversed(MODES):
                results[mode]["read"].append(time_read(folder, mode))
                results[mode]["index"].append(time_index(folder, mode, work / f"home-{mode}-{r}"))
        base = {k: statistics.median(results["in-process"][k]) for k in ("read", "index")}
        rows = []
        for mode in MODES:
            read, index = results[mode]["read"], results[mode]["index"]
            rows.append(
                [
                    mode,
                    " / ".join(f"{s:.2f}" for s in read),
                    f"{statistics.median(read) / base['read']:.2f}",
                    " / ".join(f"{s:.1f}" for s in index),
                    f"{statistics.median(index) / base['index']:.2f}",
                ]
            )
        print(f"{args.files} files ({', '.join(f'{n} .{k}' for k, n in kinds.items())}), {args.rounds} round(s)")
        headers = ["reading", "read s (per round)", "read ratio", "index s (per round)", "index ratio"]
        print(md_table(headers, rows))
        path = save("bounded_reading", {"machine": machine(), "files": kinds, "results": results})
        print(f"saved {path}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
