"""retrieve: OkraLong's assembled retriever — hybrid BM25 + dense search with the plan's k,
granularity and fusion weights. Receives one query through `Send` (the question, a sub-question
or a step-wise next query); parallel calls merge through the `hits` reducer."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graph.settings import Settings
from graph.state import RetrieveTask

from .resources import searcher_for, settings_of, to_hit


def retrieve(task: RetrieveTask, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    searcher = searcher_for(settings, task["doc_ids"])
    results = searcher.search(task["query"], k=task["k"], granularity=task["granularity"],
                              weights=tuple(task["weights"]), depth=settings.fusion_depth, mode=task["mode"])
    return {"hits": [to_hit(r, task["query"]) for r in results], "route": ["retrieve"],
            "trace": [f"retrieve: {len(results)} chunk(s) of {task['granularity']} tokens for {task['query']!r}"]}
