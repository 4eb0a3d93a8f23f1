"""retrieve: OkraLong's assembled retriever — hybrid BM25 + dense search with the plan's k,
granularity and fusion weights. Receives one query through `Send` (the question, a sub-question
or a step-wise next query); parallel calls merge through the `hits` reducer."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.runtime import searcher_for, settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import RetrieveTask, hit_from


def retrieve(task: RetrieveTask, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    searcher = searcher_for(settings, task["doc_ids"])
    results = searcher.search(
        task["query"],
        k=task["k"],
        granularity=task["granularity"],
        weights=tuple(task["weights"]),
        depth=settings.fusion_depth,
        mode=task["mode"],
    )
    return {
        "hits": [hit_from(r, task["query"]) for r in results],
        "route": ["retrieve"],
        "trace": [f"retrieve: {len(results)} chunk(s) of {task['granularity']} tokens for {task['query']!r}"],
    }
