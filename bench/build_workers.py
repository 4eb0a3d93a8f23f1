"""How building one library grows with workers (issue 49): `longqa index-together` processes over a real
PostgreSQL (the work list, row claims) and Chroma server, embedding through a fixed fleet of endpoints.

The endpoints are embeddings stubs (tests/embeddings_stub.py) that take a fixed time per request
(--latency_ms: a GPU's time per batch) and serve at most --capacity requests at once each (a fleet of
fixed throughput), so the endpoints, not this CPU, set the pace and workers can outnumber its cores;
their vectors are not a model's. For 1, 2, 3 (and --more) workers, a fresh
library of --docs documents (--words words in all) is built; printed: wall time, words/s, and the
share of the workers' time spent claiming, waiting and publishing (each worker reports its own).

    python bench/build_workers.py --docs 96 --words 96000 --latency_ms 400 --endpoints 2 --capacity 2 --more 6
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import chroma_running, document_files, machine, md_table, save, whole_number_options  # noqa: E402


def run(n: int, env: dict[str, str], folder: Path, name: str, base: Path) -> tuple[float, float, float]:
    """(wall seconds, workers' seconds, their seconds coordinating) of one build by `n` workers."""
    command = [sys.executable, "-m", "longqa.cli", "index-together", str(folder), "--collection", name, "-q"]
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            command, env={**env, "LONGQA_HOME": str(base / f"{name}-{i}")}, stdout=subprocess.PIPE, text=True
        )
        for i in range(n)
    ]
    outs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - t0
    total = coordinating = 0.0
    for p, out in zip(procs, outs, strict=True):
        found = re.search(r"; ([\d.]+) s \(([\d.]+) s claiming", out)
        if p.returncode != 0 or not found:
            raise SystemExit(f"a worker failed:\n{out}")
        total, coordinating = total + float(found[1]), coordinating + float(found[2])
    return wall, total, coordinating


def main() -> None:
    from tests.embeddings_stub import EmbeddingsStub
    from tests.servers import postgres_server

    args = whole_number_options(__doc__, docs=96, words=96_000, latency_ms=400, endpoints=2, capacity=2, more=6)
    counts = [1, 2, 3] + ([args.more] if args.more > 3 else [])
    base = Path(tempfile.mkdtemp(prefix="longqa-build-workers-"))
    files, _ = document_files(base, args.docs, args.words)
    words = sum(len(f.read_text("utf-8").split()) for f in files)
    rows = []
    with ExitStack() as stack:
        pg = stack.enter_context(postgres_server())
        port = stack.enter_context(chroma_running(base))
        stubs = [
            stack.enter_context(EmbeddingsStub(latency_s=args.latency_ms / 1000, capacity=args.capacity))
            for _ in range(args.endpoints)
        ]
        env = {
            **os.environ,
            "CHROMA_HOST": "127.0.0.1",
            "CHROMA_PORT": str(port),
            "LONGQA_POSTGRES_URI": pg.uri,
            "LONGQA_EMBEDDINGS_URL": ",".join(s.base_url for s in stubs),
            "LONGQA_EMBEDDINGS_MODEL": "stub",
            "LONGQA_EMBEDDINGS_CONCURRENCY": "2",
        }
        for n in counts:
            wall, total, coordinating = run(n, env, files[0].parent, f"bench-{n}", base)
            rows.append([n, f"{wall:.1f}", f"{words / wall:,.0f}", f"{100 * coordinating / total:.1f}%"])
            print(f"{n} worker(s): {wall:.1f} s", file=sys.stderr)
    table = md_table(["workers", "wall s", "words/s", "time coordinating"], rows)
    print(
        f"\n{args.docs} documents, {words:,} words; {args.endpoints} stub endpoints at {args.latency_ms} ms a request "
        f"serving {args.capacity} at once each; 32 texts a request, 2 in flight per endpoint per worker\n\n{table}"
    )
    save("build_workers", {"machine": machine(), "args": vars(args), "words": words, "rows": rows})


if __name__ == "__main__":
    main()
