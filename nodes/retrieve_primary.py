"""retrieve_primary: OkraLong's primary retrieval before analysis — three chunks of 150 tokens
(appendix C.3), hybrid with uniform 1:1 fusion since no pattern is known yet. Where an answer will be
grounded, it also notes the question's names that the searched documents never say (our addition:
retrieval/search/mentions.py; nodes/ground.py declines an answer to a question about something else)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import State, hit_from
from longqa.services.stores import searcher_for


def retrieve_primary(state: State, runtime: Runtime[Settings]) -> dict:
    """The primary retrieval the analyzer judges by (top primary_k at the primary size), and the question's names the
    library never mentions when grounding is on."""
    settings = settings_of(runtime)
    searcher = searcher_for(settings, state["library"], state["doc_ids"])
    query = state.get("search_query") or state["question"]
    results = searcher.search(
        query,
        k=settings.primary_k,
        granularity=settings.primary_granularity,
        weights=(1.0, 1.0),
        depth=settings.fusion_depth,
    )
    update: dict = {"primary": [hit_from(r, query, state.get("sources")) for r in results]}
    if settings.has_llm and settings.grounding != "off":
        update["unmentioned"] = searcher.unmentioned(state["question"], settings.primary_granularity)
    return update
