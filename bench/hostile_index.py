"""The whole index of one hostile file, chunking and embedding included (issue 45): each file of
`tests/hostile_builders.py` indexed beside three short notes, in a child process that first indexes
the notes alone (the embedder and a reader loaded), then the folder; it reports the growth of its
own peak resident memory over what it held after that warm run, and the folder run's seconds.
Cases: runs without whitespace under the text limit (chunked and embedded) and the issue's files
(a 200 MB run, an .xlsx holding one 200 MB string: refused by `max_text_mb` in the reader; a Markdown
line of `![` repeated: read in the worker).

    python bench/hostile_index.py                 # every case
    python bench/hostile_index.py --only run4,brackets
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, offline_env, save  # noqa: E402
from tests import hostile_builders as build  # noqa: E402

NOTES = {"a.md": "The harbor opens at dawn.", "b.txt": "Cargo rose by a fifth.", "c.md": "Ships enter before noon."}
CHILD = r"""
import json, os, resource, sys, time
from longqa.graph.index_graph import graph
home, warm, folder = sys.argv[1:4]
assert graph.invoke({"documents": [warm]}, context={"home": home})["error"] is None
with open("/proc/self/statm") as f:
    held = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
t0 = time.perf_counter()
out = graph.invoke({"documents": [folder]}, context={"home": home})
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
report = {"s": seconds, "growth_mb": (peak - held) / 2**20, "chunks": out["chunks"], "skipped": out["skipped"]}
print(json.dumps(report))
"""
CASES: dict[str, tuple[str, Callable[[Path], Path]]] = {
    "run4": ("run4.txt", lambda p: build.long_run_text(p, 4)),
    "run16": ("run16.txt", lambda p: build.long_run_text(p, 16)),
    "run200": ("run200.txt", lambda p: build.long_run_text(p, 200)),
    "xlsx200": ("huge.xlsx", lambda p: build.xlsx_huge_string(p, 200)),
    "brackets": ("brackets.md", build.markdown_image_brackets),
}


def run(case: str) -> list:
    """One case: [case, file, outcome, chunks, seconds, peak growth MB]."""
    name, builder = CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for folder in (base / "warm", base / "docs"):
            folder.mkdir()
            for note, text in NOTES.items():
                (folder / note).write_text(text, "utf-8")
        builder(base / "docs" / name)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(base / "home"), str(base / "warm"), str(base / "docs")],
            capture_output=True,
            text=True,
            check=True,
        )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    skipped = [s.split(": ", 1)[1] for s in report["skipped"] if name in s]
    outcome = f"skipped: {skipped[0][:60]}" if skipped else "indexed"
    return [case, name, outcome, sum(report["chunks"].values()), report["s"], report["growth_mb"]]


def main() -> None:
    """Run the cases asked for and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated cases: " + ", ".join(CASES))
    offline_env()
    rows = [run(case) for case in parser.parse_args().only.split(",")]
    print(md_table(["case", "file", "outcome", "chunks", "index s", "peak growth MB"], rows))
    print("saved", save("hostile_index", {"machine": machine(), "rows": rows}))


if __name__ == "__main__":
    main()
