"""self_route: Self-Route's routing step (Li et al. 2024, §4). A RAG answer is accepted unless it
is "unanswerable"; then, if the plan allows the fallback (Self-Route, OkraLong's precise mode),
the question goes to the long-context step once. It never loops: long_context always ends."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graph.organizer import Plan
from graph.settings import Settings
from graph.state import State

from .generate import is_unanswerable


def needs_long_context(state: State) -> bool:
    plan = Plan.model_validate(state["plan"])
    return (plan.fallback and not state.get("error") and is_unanswerable(state.get("answer"))
            and "long_context" not in (state.get("route") or []))


def self_route(state: State, runtime: Runtime[Settings]) -> dict:
    if needs_long_context(state):
        decision = "unanswerable from retrieval: falling back to the long context"
    elif is_unanswerable(state.get("answer")):
        decision = "unanswerable, and the plan has no long-context fallback"
    else:
        decision = "answered from retrieval" if state.get("answer") else "no answer"
    return {"route": ["self_route"], "trace": [f"self_route: {decision}"]}
