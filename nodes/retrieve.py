"""retrieve: OkraLong's assembled retriever — hybrid BM25 + dense search with the plan's granularity
and fusion weights. Receives one query through `Send` (the question, a sub-question or a step-wise
next query); parallel calls merge through the `hits` reducer. The plan picks the evidence by a
token budget (the best chunks that fit, with LLM-free bridge expansion in direct retrieval, led by
the chunks whose headings the question or a seed names) or by OkraLong's fixed k."""

from __future__ import annotations

from langchain_core.runnables.config import ContextThreadPoolExecutor
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import RetrieveTask, hit_from
from longqa.retrieval.index.progress import library_progress
from longqa.retrieval.search.precision import precise_ranking
from longqa.retrieval.search.selection import with_bridges
from longqa.services.stores import searcher_for


def retrieve(task: RetrieveTask, runtime: Runtime[Settings]) -> dict:
    """One search task (a Send): search at the task's chunk size, refined by the precision operators, filling its
    token budget with bridge expansion or taking the top k."""
    settings = settings_of(runtime)
    searcher = searcher_for(settings, task["library"], task["doc_ids"])
    g, dense = task["granularity"], task["mode"] != "bm25"
    # a granularity not indexed yet is built here, with progress per document
    searcher.indexes(g, dense=dense, events=library_progress("retrieve"))

    operators = task.get("precision") or []

    def search(query: str, k: int) -> list:
        ranked = searcher.search(
            query,
            k=k,
            granularity=task["granularity"],
            weights=tuple(task["weights"]),
            depth=settings.fusion_depth,
            mode=task["mode"],
            labels=settings.label_links,
        )
        # the precision stage's ranking operators, on each ranking (a bridge search's too)
        return precise_ranking(ranked, operators, task.get("precision_gap") or 0.0)

    def fused(query: str) -> list:  # the whole fused ranking (each retriever's top fusion_depth)
        return search(query, 2 * settings.fusion_depth)

    def search_all(queries: list[str]) -> list[list]:
        """The bridge searches at once: each query's embedding runs on its own core (ONNX Runtime lets go
        of the GIL), 40 ms -> 26 ms for two on 2 cores (bench/README)."""
        if len(queries) < 2:
            return [fused(q) for q in queries]
        with ContextThreadPoolExecutor(max_workers=len(queries)) as pool:
            return list(pool.map(fused, queries))

    budget, bridged = task.get("budget"), 0
    if budget:
        # the whole fused ranking is a candidate
        results, bridged = with_bridges(
            task["query"],
            fused,
            budget,
            task.get("bridges", 0),
            settings.bridge_per_seed,
            settings.bridge_share,
            linked=(lambda said, near: searcher.named_in(g, said, near)) if settings.heading_links else None,
            by_names=settings.bridge_query == "names",
            search_all=search_all,
        )
        picked = f"{sum(r.chunk.n_tokens for r in results)} of {budget} tokens"
    else:
        results = search(task["query"], task["k"])
        picked = f"top {task['k']}"
    note = f", {bridged} by bridge expansion" if bridged else ""
    return {
        "hits": [hit_from(r, task["query"], task.get("sources")) for r in results],
        "trace": [
            f"retrieve: {len(results)} chunk(s) of {task['granularity']} tokens ({picked}{note}) for {task['query']!r}"
        ],
    }
