"""What searching a library costs a replica that shares its engines, against one process with an
embedded store, side by side in one run.

A library of --docs documents (distinct HotpotQA + MuSiQue paragraphs, about --words words in all)
is indexed twice: into an embedded store (one host), and through replica A's store into a real
Chroma server (`chroma run` on a free 127.0.0.1 port). Then --queries HotpotQA questions are
searched (`Searcher.search(k=5, hybrid 1:1, depth 20)`, query vectors cached first, so the query's
embedding is not timed) on:
- the embedded store (warm);
- replica B, a store with a home of its own that has never seen the library: its first search
  copies the documents and chunkings from the server's catalog and builds the version's BM25;
  then warm, with the manifest rechecked at most once a second (SHARED_RECHECK_S), and again with
  the recheck on every search (the worst case: each search one more round trip).

    python bench/replica_search.py --docs 20 --words 40000 --queries 50
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import chroma_running, document_files, machine, md_table, save, whole_number_options  # noqa: E402

GRANULARITY = 150


def ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return 1000 * statistics.median(ordered), 1000 * p95


def main() -> int:
    args = whole_number_options(__doc__, docs=20, words=40_000, queries=50, seed=0)

    from longqa.retrieval.index.config import IndexSettings
    from longqa.retrieval.index.embed.embedder import get_embedder
    from longqa.retrieval.index.library import library as library_module
    from longqa.retrieval.index.library.library import Library
    from longqa.retrieval.index.library.manifest import file_members
    from longqa.retrieval.index.store import IndexStore
    from longqa.retrieval.search.search import Searcher, query_vector
    from longqa.retrieval.tokens import wordpiece_counter

    base = Path(tempfile.mkdtemp(prefix="longqa-replica-bench-"))
    files, questions = document_files(base, args.docs, args.words, args.seed, width=3)
    n_words = sum(len(f.read_text("utf-8").split()) for f in files)
    questions = questions[: args.queries]
    embedder, counter = get_embedder(), wordpiece_counter()
    with chroma_running(base) as port:

        def store(home: str, shared: bool) -> IndexStore:
            settings = IndexSettings(home=base / home, chroma_host="127.0.0.1" if shared else None, chroma_port=port)
            return IndexStore(settings, embedder=embedder, counter=counter)

        local, a = store("local", False), store("replica-a", True)
        t0 = time.perf_counter()
        Library(local, "bench").update(file_members(files, local.settings.max_words), [GRANULARITY])
        local_index_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        Library(a, "bench").update(file_members(files, a.settings.max_words), [GRANULARITY])
        shared_index_s = time.perf_counter() - t0  # A has a home of its own: it embeds too, then writes the catalog
        for q in questions:
            query_vector(embedder, q)

        def run(searcher: Searcher) -> list[float]:
            out = []
            for q in questions:
                t = time.perf_counter()
                searcher.search(q, k=5, granularity=GRANULARITY)
                out.append(time.perf_counter() - t)
            return out

        local_s = run(Searcher(local, library=Library(local, "bench")))
        b = store("replica-b", True)
        searcher_b = Searcher(b, library=Library(b, "bench"))
        t = time.perf_counter()
        searcher_b.search(questions[0], k=5, granularity=GRANULARITY)
        first_b = time.perf_counter() - t
        warm_b = run(searcher_b)
        library_module.SHARED_RECHECK_S = 0.0  # every search rechecks the manifest
        every_b = run(Searcher(b, library=Library(b, "bench")))

    rows = [
        ["embedded store, one host (warm)", *(f"{v:.1f}" for v in ms(local_s))],
        ["replica B, first search (copies + builds the BM25)", f"{1000 * first_b:.0f}", "-"],
        ["replica B warm, manifest rechecked once a second", *(f"{v:.1f}" for v in ms(warm_b))],
        ["replica B warm, manifest rechecked every search", *(f"{v:.1f}" for v in ms(every_b))],
    ]
    table = md_table(["search", "median ms", "p95 ms"], rows)
    print(f"{args.docs} documents, {n_words:,} words, {len(questions)} queries; g={GRANULARITY}")
    print(f"indexing: embedded {local_index_s:.1f} s; through replica A into the server {shared_index_s:.1f} s")
    print(table)
    save(
        "replica_search",
        {
            "machine": machine(),
            "args": vars(args),
            "index_s": {"embedded": local_index_s, "shared": shared_index_s},
            "table": table,
            "first_b_s": first_b,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
