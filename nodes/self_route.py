"""self_route: Self-Route's routing step (Li et al. 2024, §4). A RAG answer is accepted unless it
is "unanswerable"; then, if the plan allows the fallback (Self-Route, OkraLong's precise mode),
the question goes to the long-context step once. The decision is written to the state for the
router; it never loops: long_context always ends."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State
from longqa.contracts.verdicts import is_unanswerable, needs_long_context


def self_route(state: State, runtime: Runtime[Settings]) -> dict:
    fallback = needs_long_context(state, plan_of(state).fallback)
    if fallback:
        decision = "unanswerable from retrieval: falling back to the long context"
    elif is_unanswerable(state.get("answer")):
        decision = "unanswerable, and the plan has no long-context fallback"
    else:
        decision = "answered from retrieval" if state.get("answer") else "no answer"
    return {"fallback": fallback, "route": ["self_route"], "trace": [f"self_route: {decision}"]}
