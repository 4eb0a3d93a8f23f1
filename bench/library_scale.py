"""A library of 10 / 100 / 1,000 documents: warm question latency, indexing throughput, peak
memory, and the cost of updating one changed file against a full build.

    python bench/library_scale.py [--sizes 10 100 1000] [--paragraphs 7] [--questions 20] [--repeats 5]

Documents are folders of .txt files built from distinct HotpotQA and MuSiQue paragraphs in
../shared/data (`--paragraphs` per document, ~80 words each). Each size runs in its own process
(so peak memory is that size's), one after another in one invocation, on a fresh index home:
  build     `longqa index`'s library update over the folder (read, chunk, embed, Chroma, BM25)
  warm      the same HotpotQA questions (about the first 10 documents, so every size holds their
            answers) searched as the graph's primary retrieval does (hybrid, k=3, g=150), after one
            warm-up search each: `retrieval` with the query vector cached, `+ query` embedding it too
  noop      indexing the unchanged folder again (stat only)
  update    one file changed (a sentence appended), indexed again: the cost against `build`
No LLM is involved: these are retrieval and indexing numbers.

`--compare-across N` instead builds each size N times with each document embedded alone (before)
and with the new members' units embedded together across documents (retrieval/index/library/batch_embed.py),
alternating, and compares build speed and the top-3 results of every question.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import distinct_paragraphs, machine, md_table, offline_env, save  # noqa: E402

G = 150


def corpus(n_docs: int, per_doc: int) -> tuple[list[str], list[str]]:
    """(document texts, questions about the first 10 documents) from distinct shared paragraphs."""
    paragraphs = distinct_paragraphs()
    if len(paragraphs) < n_docs * per_doc:
        raise SystemExit(f"{len(paragraphs)} distinct paragraphs: not enough for {n_docs} x {per_doc}")
    docs, questions = [], []
    for d in range(n_docs):
        chosen = paragraphs[d * per_doc : (d + 1) * per_doc]
        docs.append("\n\n".join(f"{title}\n{text}" for title, text, _ in chosen) + "\n")
        if d < 10:
            questions += [q for _, _, q in chosen if q]
    return docs, list(dict.fromkeys(questions))


def worker(size: int, per_doc: int, n_questions: int, repeats: int, across: bool = True) -> dict:
    """One size, in this process: build, warm questions, no-op and one-file updates."""
    offline_env()
    from longqa.contracts.settings import Settings
    from longqa.retrieval.index.library import batch_embed

    batch_embed.ACROSS_DOCUMENTS = across
    from longqa.retrieval.search.search import forget_query, query_vector
    from longqa.services.inputs import index_library
    from longqa.services.stores import searcher_for

    texts, questions = corpus(size, per_doc)
    questions = questions[:n_questions]
    work = Path(tempfile.mkdtemp(prefix=f"libscale-{size}-"))
    folder = work / "docs"
    for i, text in enumerate(texts):
        sub = folder / f"part{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"doc{i:04d}.txt").write_text(text, "utf-8")
    settings = Settings(home=work / "home")
    state = {"documents": [str(folder)]}
    words = sum(len(t.split()) for t in texts)

    from longqa.services.stores import store_for

    store_for(settings).embedder.embed(["warm the model up"])  # not part of the build
    t0 = time.perf_counter()
    opened = index_library(state, settings, [G])
    build_s = time.perf_counter() - t0
    searcher = searcher_for(settings, opened.library.name, opened.doc_ids)

    def search(q: str):
        return searcher.search(q, k=3, granularity=G, weights=(1.0, 1.0), depth=20)

    top = [[(r.chunk.doc_id, r.chunk.index) for r in search(q)] for q in questions]  # also the warm-up
    warm, with_query = [], []
    for _ in range(repeats):
        for q in questions:
            t = time.perf_counter()
            search(q)
            warm.append((time.perf_counter() - t) * 1000)
    for q in questions:
        forget_query(q)
        t = time.perf_counter()
        query_vector(searcher.store.embedder, q)
        search(q)
        with_query.append((time.perf_counter() - t) * 1000)

    t0 = time.perf_counter()
    noop = index_library(state, settings, [G])
    noop_s = time.perf_counter() - t0
    assert noop.update.embedded == 0 and not noop.update.changed
    changed = folder / "part3" / "doc0003.txt"
    changed.write_text(changed.read_text("utf-8") + "\nOne more sentence was added to this document.\n", "utf-8")
    t0 = time.perf_counter()
    update = index_library(state, settings, [G])
    update_s = time.perf_counter() - t0
    assert [Path(p).name for p in update.update.changed] == ["doc0003.txt"]

    manifest = opened.library.manifest()
    shutil.rmtree(work, ignore_errors=True)  # 1,000 documents' index is a few hundred MB
    return {
        "documents": size,
        "words": words,
        "chunks": manifest.parts[G].n_chunks,
        "vectors": manifest.parts[G].n_units,
        "build_s": build_s,
        "words_per_s": words / build_s,
        "warm_ms": warm,
        "with_query_ms": with_query,
        "noop_s": noop_s,
        "update_s": update_s,
        "update_embedded": update.update.embedded,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "top": top,
        "across": across,
        "loadavg": os.getloadavg()[0],
    }


def compare_across(args: argparse.Namespace) -> None:
    """Builds with each document embedded alone and with units embedded across documents, alternating."""
    rows, results = [], []
    for size in args.sizes:
        for n in range(args.compare_across):
            pair = {}
            for across in (False, True):
                command = [sys.executable, __file__, "--worker", str(size), "--paragraphs", str(args.paragraphs)]
                command += ["--questions", str(args.questions), "--repeats", "1"] + ([] if across else ["--alone"])
                done = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=True)
                pair[across] = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{size} documents, across={across}: {pair[across]['build_s']:.1f} s", file=sys.stderr)
            alone, together = pair[False], pair[True]
            results.append(pair)
            rows.append(
                [
                    f"{size:,} ({n + 1})",
                    f"{alone['loadavg']:.1f} / {together['loadavg']:.1f}",
                    f"{alone['build_s']:.1f}",
                    f"{alone['words_per_s']:,.0f}",
                    f"{together['build_s']:.1f}",
                    f"{together['words_per_s']:,.0f}",
                    f"{alone['build_s'] / together['build_s']:.2f}x",
                    "yes" if alone["top"] == together["top"] else "NO",
                    f"{alone['peak_rss_mib']:,.0f} / {together['peak_rss_mib']:,.0f}",
                ]
            )
    headers = ["documents (pair)", "load after", "alone build s", "words/s", "together build s", "words/s"]
    headers += ["speed-up", "same top-3 for every question", "peak RSS MiB"]
    print(md_table(headers, rows))
    path = save("library_scale_across", {"machine": machine(), "args": vars(args), "results": results})
    print(f"\nwritten to {path}", file=sys.stderr)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--paragraphs", type=int, default=7, help="paragraphs per document")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare-across", type=int, default=0, metavar="N", help="N builds each way, alternating")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--alone", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.paragraphs, args.questions, args.repeats, not args.alone)))
        return
    offline_env()
    if args.compare_across:
        compare_across(args)
        return
    results = []
    for size in args.sizes:
        command = [sys.executable, __file__, "--worker", str(size), "--paragraphs", str(args.paragraphs)]
        command += ["--questions", str(args.questions), "--repeats", str(args.repeats)]
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        r = results[-1]
        print(f"{size} documents: built in {r['build_s']:.1f} s", file=sys.stderr)
    base = statistics.median(results[0]["warm_ms"])
    rows = []
    for r in results:
        rows.append(
            [
                f"{r['documents']:,}",
                f"{r['words']:,}",
                f"{r['chunks']:,}",
                f"{statistics.median(r['warm_ms']):.1f}",
                f"{pct(r['warm_ms'], 0.95):.1f}",
                f"{statistics.median(r['warm_ms']) / base:.2f}",
                f"{statistics.median(r['with_query_ms']):.1f}",
                f"{r['build_s']:.1f}",
                f"{r['words_per_s']:,.0f}",
                f"{r['noop_s']:.2f}",
                f"{r['update_s']:.2f}",
                f"{100 * r['update_s'] / r['build_s']:.1f}%",
                f"{r['peak_rss_mib']:,.0f}",
            ]
        )
    headers = [
        "documents",
        "words",
        "chunks",
        "warm retrieval median ms",
        "p95 ms",
        "× smallest",
        "+ query embedding ms",
        "build s",
        "words/s",
        "re-index unchanged s",
        "update one file s",
        "update / build",
        "peak RSS MiB",
    ]
    print(md_table(headers, rows))
    path = save("library_scale", {"machine": machine(), "args": vars(args), "results": results})
    print(f"\nwritten to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
