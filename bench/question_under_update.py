"""What a question over a library costs while that library is being updated (issue #31: questions
are readers, none waits on the update), against the same questions with no update running.

A collection of --docs documents (distinct HotpotQA + MuSiQue paragraphs) is indexed through the
services (`index_library`) into a real Chroma server with the catalog in PostgreSQL (a throw-away
cluster). Then --questions questions, --concurrency at a time, each `open_library` of the collection
plus one hybrid `Searcher.search(k=5)` (query vectors cached first): once idle, once while an
update of the same collection holds its lock (stopped inside it, after its first new member), and
once while an update embeds new documents (half of --add each; its CPU competes with the questions).

    python bench/question_under_update.py --docs 50 --words 20000 --questions 64 --concurrency 32
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import chroma_running, document_files, machine, md_table, save, whole_number_options  # noqa: E402

G = 150


def main() -> int:
    args = whole_number_options(__doc__, docs=50, add=10, words=20_000, questions=64, concurrency=32)

    from longqa.contracts.settings import Settings
    from longqa.retrieval.index.library.manifest import file_members
    from longqa.retrieval.search.search import query_vector
    from longqa.services.inputs import index_library, open_library
    from longqa.services.stores import searcher_for, store_for
    from tests.servers import postgres_server

    base = Path(tempfile.mkdtemp(prefix="longqa-qu-bench-"))
    n = args.docs + args.add
    files, questions = document_files(base, n, args.words, 0, width=4)
    questions = (questions * math.ceil(args.questions / max(1, len(questions))))[: args.questions]
    rows = []
    with chroma_running(base) as port:
        with postgres_server() as postgres:
            settings = Settings(
                home=base / "home", chroma_host="127.0.0.1", chroma_port=port, postgres_uri=postgres.uri
            )
            index_library({"documents": [str(f) for f in files[: args.docs]], "collection": "qu"}, settings, [G])
            store = store_for(settings)
            for q in questions:
                query_vector(store.embedder, q)

            def ask(q: str) -> float:
                t = time.perf_counter()
                opened = open_library({"collection": "qu"}, settings)
                searcher_for(settings, "qu", opened.doc_ids).search(q, k=5, granularity=G)
                return time.perf_counter() - t

            def run() -> list[float]:
                with ThreadPoolExecutor(args.concurrency) as pool:
                    return list(pool.map(ask, questions))

            def during(hold: bool, adding: list[Path]) -> tuple[list[float], bool]:
                inside, release = threading.Event(), threading.Event()

                def progress(event) -> None:
                    if event.step == "indexing":
                        inside.set()
                        if hold:
                            release.wait(600)

                library = open_library({"collection": "qu"}, settings).library
                members = file_members(files[: args.docs] + adding, store.settings.max_words)
                writer = threading.Thread(target=lambda: library.update(members, [G], progress=progress))
                writer.start()
                inside.wait(600)
                out = run()
                busy = writer.is_alive()
                release.set()
                writer.join()
                return out, busy

            run()  # warm: every replica cache (manifest, BM25, collection handles)
            idle = run()
            half = args.docs + args.add // 2
            held, held_busy = during(True, files[args.docs : half])
            embedding, embed_busy = during(False, files[half:])  # new documents: the update embeds them

        def stats(values: list[float]) -> list[str]:
            ordered = sorted(values)
            p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
            return [f"{1000 * statistics.median(ordered):.0f}", f"{1000 * p95:.0f}", f"{1000 * max(ordered):.0f}"]

        rows = [
            ["no update", *stats(idle), "-"],
            ["an update holds the lock (stopped inside it)", *stats(held), "yes" if held_busy else "no"],
            [
                "an update embeds new documents (competing for the CPU)",
                *stats(embedding),
                "yes" if embed_busy else "no",
            ],
        ]
    table = md_table(["while", "median ms", "p95 ms", "max ms", "update still running after"], rows)
    print(f"{args.docs} documents (+{args.add}), {args.questions} questions, {args.concurrency} at a time; g={G}")
    print(table)
    save("question_under_update", {"machine": machine(), "args": vars(args), "table": table})
    return 0


if __name__ == "__main__":
    sys.exit(main())
