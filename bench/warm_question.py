"""A warm question's non-LLM work on a busy 2-core machine, and what the query embedding's thread count
does to it and to indexing.

One document (distinct HotpotQA + MuSiQue paragraphs, --words words) is indexed first (not timed).
Then, while a second process spins on one core (--busy, the default), each question is timed,
interleaved so that every row sees the same load:

  evidence-only run    `graph.invoke` on the document path with no model and the default strategy:
                       prepare, primary retrieval, local analyzer, organizer, the planned retrieval
                       and the context processor (every cached query vector is dropped first, so
                       each row embeds the question and its bridge queries itself)
  retrieval path       the retrieve and process_context nodes for the default plan of an extractive
                       question: embed the question, hybrid search and fusion, the evidence budget and
                       its two bridge searches, the precision stage, the context processor
  ... links off         the same with `heading_links` off (what following heading links costs)
  ... by text           the same with `bridge_query="text"` (bridge searches by the seed's whole text)
  embed question       the product's path (one torch thread for a few texts)
  embed question, pool the same text on torch's default pool (one thread per core): the old path

Indexing: the same --index-texts chunk texts embedded through the product's path (a large batch
keeps torch's pool) and on one thread, side by side, with no spinner.

    python bench/warm_question.py                  # 60 questions on a 60,000-word document
    python bench/warm_question.py --questions 20 --words 20000
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import big_document, machine, md_table, ms_stats, offline_env, save, timing_table  # noqa: E402


def spinner() -> subprocess.Popen:
    """A process that keeps one core busy until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=60_000)
    p.add_argument("--questions", type=int, default=60)
    p.add_argument("--index-texts", type=int, default=1_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--busy", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE", help="a Settings field"
    )
    args = p.parse_args(argv)
    offline_env()
    import torch
    from langgraph.runtime import Runtime

    from longqa.analyzer import Analysis
    from longqa.contracts.budget import sized_plan
    from longqa.contracts.plan import plan
    from longqa.contracts.settings import Settings
    from longqa.graph.graph import _task, graph
    from longqa.llm.budget import overheads
    from longqa.nodes.process_context import process_context
    from longqa.nodes.retrieve import retrieve
    from longqa.retrieval.index.embed.torch_embedder import torch_threads
    from longqa.retrieval.search.search import forget_query
    from longqa.services.stores import store_for

    home = Path(tempfile.mkdtemp(prefix="longqa-warm-"))
    text, questions = big_document(args.words, args.seed)
    questions = random.Random(args.seed).sample(questions, min(len(questions), args.questions + 5))
    path = home / "document.txt"
    path.write_text(text, "utf-8")
    settings = Settings(model=None, home=home, **dict(o.split("=", 1) for o in args.overrides))
    context = settings.model_dump()
    t0 = time.perf_counter()
    prepared: dict = {}
    for update in graph.stream({"question": questions[0], "documents": [str(path)]}, context=context):
        prepared |= update.get("prepare") or {}  # the library and its documents (the index is built here)
    index_s = time.perf_counter() - t0
    store = store_for(settings)
    embedder = store.embedder
    runtime = Runtime(context=settings)
    unlinked = Runtime(context=settings.model_copy(update={"heading_links": False}))
    by_text = Runtime(context=settings.model_copy(update={"bridge_query": "text"}))

    def retrieval_path(q: str, runtime: Runtime = runtime) -> None:
        """The retrieve node for the default plan of an extractive question (its evidence budget,
        bridge searches and the precision stage), then the context processor: the nodes themselves."""
        forget_query()  # the question and its bridge queries: every row embeds them itself
        the_plan = sized_plan(plan(Analysis(backend="bench"), settings), overheads(q), settings)
        state = {"question": q, "library": prepared["library"], "doc_ids": prepared["doc_ids"], "sources": {}}
        task = _task(state, q, the_plan).arg
        hits = retrieve(task, runtime)["hits"]
        process_context({**state, "plan": the_plan.model_dump(), "hits": hits}, runtime)

    def evidence_only_run(q: str) -> None:
        forget_query()  # the question and its bridge queries: every row embeds them itself
        out = graph.invoke({"question": q, "documents": [str(path)]}, context=context)
        assert out["status"] == "evidence-only", out.get("error")

    def pool(q: str) -> None:
        with embedder._lock:  # the model itself, bypassing the product's one-thread rule
            embedder._model.encode([q], normalize_embeddings=True, show_progress_bar=False)

    rows = {
        "evidence-only run (graph, no model)": evidence_only_run,
        "retrieval path": retrieval_path,
        "retrieval path, heading links off": lambda q: retrieval_path(q, unlinked),
        "retrieval path, bridge queries by text": lambda q: retrieval_path(q, by_text),
        "embed question (product: 1 thread)": lambda q: embedder.embed([q]),
        "embed question (torch's pool)": pool,
    }
    for q in questions[:5]:  # warm-up
        for fn in rows.values():
            fn(q)
    busy = spinner() if args.busy else None
    timings: dict[str, list[float]] = {name: [] for name in rows}
    try:
        time.sleep(0.5)
        for q in questions[5:]:
            for name, fn in rows.items():
                t = time.perf_counter()
                fn(q)
                timings[name].append(time.perf_counter() - t)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()

    document = store.load(path)
    chunks = [c.text for c in store.index(document, settings.base_granularity).chunks]
    texts = (chunks * (1 + args.index_texts // len(chunks)))[: args.index_texts]
    words = sum(len(t.split()) for t in texts)
    indexing = {}
    for name, threads in (("product path (torch's pool)", None), ("one thread", 1), ("product path, again", None)):
        t = time.perf_counter()
        with torch_threads(threads):
            embedder.embed(texts)
        indexing[name] = words / (time.perf_counter() - t)

    result = {name: ms_stats(values) for name, values in timings.items()}
    print(
        f"### Warm question, {len(text.split()):,}-word document, {len(questions) - 5} questions, "
        f"{'one core kept busy by another process' if args.busy else 'idle machine'}\n"
    )
    print(timing_table("work", result))
    pool_ms, one_ms = (
        result["embed question (torch's pool)"]["median_ms"],
        result["embed question (product: 1 thread)"]["median_ms"],
    )
    print(f"\nquery embedding, torch's pool / one thread (medians, side by side): {pool_ms / one_ms:.1f}x")
    print(f"\n### Indexing throughput, {len(texts):,} chunk texts ({words:,} words), idle machine\n")
    print(md_table(["path", "words/s"], [[k, f"{v:,.0f}"] for k, v in indexing.items()]))
    the_plan = sized_plan(plan(Analysis(backend="bench"), settings), overheads(questions[0]), settings)
    shown = the_plan.model_dump(include={"workflow", "budget", "bridge_seeds", "granularity", "mode", "precision"})
    print(f"\nplan: {shown}; index build {index_s:.1f} s; torch threads {torch.get_num_threads()}")
    info = {"machine": machine(), "args": vars(args), "warm": result, "indexing_words_per_s": indexing}
    print(f"results: {save('warm_question', info)}")


if __name__ == "__main__":
    main()
