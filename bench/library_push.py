"""What moving an already-indexed library to an empty Chroma server costs (issue #31, part 4: at most
5% of a build), against building it, side by side in one run.

A library of --docs documents (distinct HotpotQA + MuSiQue paragraphs, about --words words in all)
is built in an embedded store (one host: chunked and embedded). The same home, its vectors cached,
is then pointed at an empty Chroma server (`chroma run` on a free 127.0.0.1 port) and the library
updated there (nothing is embedded: the vectors are copied), once with the catalog in PostgreSQL
(LONGQA_POSTGRES_URI, a throw-away cluster) and once with the Chroma-record catalog (no PostgreSQL).

    python bench/library_push.py --docs 300 --words 60000
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import chroma_running, document_files, machine, md_table, save, whole_number_options  # noqa: E402

GRANULARITY = 150


def main() -> int:
    args = whole_number_options(__doc__, docs=300, words=60_000, seed=0)

    from longqa.retrieval.index.config import IndexSettings
    from longqa.retrieval.index.embed.embedder import get_embedder
    from longqa.retrieval.index.library.library import Library
    from longqa.retrieval.index.library.manifest import file_members
    from longqa.retrieval.index.store import IndexStore
    from longqa.retrieval.tokens import wordpiece_counter
    from tests.servers import postgres_server

    base = Path(tempfile.mkdtemp(prefix="longqa-push-bench-"))
    files, _ = document_files(base, args.docs, args.words, args.seed, width=4)
    n_words = sum(len(f.read_text("utf-8").split()) for f in files)
    embedder, counter = get_embedder(), wordpiece_counter()
    rows, timings = [], {}
    with chroma_running(base) as port:
        with postgres_server() as postgres:

            def update(name: str, **where) -> tuple[float, object, Library]:
                store = IndexStore(IndexSettings(home=base / "home", **where), embedder=embedder, counter=counter)
                library = Library(store, name)
                t0 = time.perf_counter()
                done = library.update(file_members(files, store.settings.max_words), [GRANULARITY])
                return time.perf_counter() - t0, done, library

            build_s, built, library = update("push")
            units = library.manifest().parts[GRANULARITY].n_units
            server = {"chroma_host": "127.0.0.1", "chroma_port": port}
            pg_s, pushed, _ = update("push", **server, postgres_uri=postgres.uri)
            chroma_s, pushed_chroma, _ = update("push-chroma", **server)
        rows = [
            ["build, embedded store (chunk + embed)", f"{build_s:.1f}", "100%", built.embedded],
            ["push to an empty server, catalog in PostgreSQL", f"{pg_s:.1f}", f"{100 * pg_s / build_s:.1f}%",
             pushed.embedded],
            ["push to an empty server, Chroma-record catalog", f"{chroma_s:.1f}", f"{100 * chroma_s / build_s:.1f}%",
             pushed_chroma.embedded],
        ]  # fmt: skip
        timings = {"build_s": build_s, "push_postgres_s": pg_s, "push_chroma_catalog_s": chroma_s, "units": units}
    table = md_table(["step", "seconds", "of the build", "vectors embedded"], rows)
    print(f"{args.docs} documents, {n_words:,} words, {timings['units']:,} vectors; g={GRANULARITY}")
    print(table)
    save("library_push", {"machine": machine(), "args": vars(args), "timings": timings, "table": table})
    return 0


if __name__ == "__main__":
    sys.exit(main())
