"""self_route: Self-Route's routing step (Li et al. 2024, §4). A RAG answer is accepted unless it
is "unanswerable"; then, if the plan allows the fallback (Self-Route, OkraLong's precise mode),
the question goes to the long-context step once. The decision is written to the state for the
router; it never loops: long_context always ends."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.budget import left
from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State
from longqa.contracts.verdicts import is_unanswerable, needs_long_context
from longqa.retrieval.tokens import default_counter


def self_route(state: State, runtime: Runtime[Settings]) -> dict:
    plan = plan_of(state)
    fallback = needs_long_context(state, plan.fallback)
    rest = left(plan.question_budget, state.get("usage"))
    # a long context that reads no more than retrieval found would only repeat it
    shown = sum(default_counter().count_many([e["text"] for e in state.get("evidence") or []]))
    smallest = plan.overheads.long_context + max(plan.granularity, shown + 1) if plan.overheads else 0
    if fallback and rest is not None and rest < smallest:
        fallback = False
        decision = (
            f"unanswerable from retrieval; the question budget leaves {rest} input tokens, too few for a long "
            f"context larger than the {shown} tokens retrieval found ({smallest} with its prompt): no fallback"
        )
    elif fallback:
        decision = "unanswerable from retrieval: falling back to the long context"
    elif is_unanswerable(state.get("answer")):
        decision = "unanswerable, and the plan has no long-context fallback"
    else:
        decision = "answered from retrieval" if state.get("answer") else "no answer"
    return {"fallback": fallback, "trace": [f"self_route: {decision}"]}
