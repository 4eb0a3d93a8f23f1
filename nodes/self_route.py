"""self_route: Self-Route's routing step (Li et al. 2024, §4). A RAG answer is accepted unless it
is "unanswerable" — or, our addition, the grounding check found it unsupported by its passages
(nodes/ground.py); then, if the plan allows the fallback (Self-Route, OkraLong's precise mode), the
question goes to the long-context step once (an unsupported answer that no fallback replaces is
declined by `respond`). The decision is written to the state for the router; it never
loops: the long-context reader runs at most once."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State
from longqa.contracts.verdicts import declined, is_unsupported, needs_long_context
from longqa.llm.model_node import long_context_shortfall


def self_route(state: State, runtime: Runtime[Settings]) -> dict:
    """Decide whether an unanswerable or unsupported answer falls back to the long context: not when the documents
    never name the subject, nor when the question budget leaves too little room."""
    plan = plan_of(state)
    fallback = needs_long_context(state, plan.fallback)
    # a long context that reads no more than retrieval found would only repeat it
    short = long_context_shortfall(state, [e["text"] for e in state.get("evidence") or []])
    why = "unsupported by its passages" if is_unsupported(state) else "unanswerable"
    if is_unsupported(state) and state["grounding"]["method"] == "non-answer":  # nodes/ground.py: an echo, a label
        why = "not an answer"
    unmentioned = state.get("unmentioned") or []
    if fallback and unmentioned:  # the long context is the same documents: it does not say them either
        fallback = False
        names = ", ".join(f'"{n}"' for n in unmentioned)
        decision = f"{why}: the documents never mention {names}, so their long context cannot answer: no fallback"
    elif fallback and short is not None:
        fallback = False
        decision = (
            f"{why} from retrieval; the question budget leaves {short.left} input tokens, too few for a long "
            f"context larger than the {short.read} tokens retrieval found ({short.smallest} with its prompt): "
            "no fallback"
        )
    elif fallback:
        decision = f"{why} from retrieval: falling back to the long context"
    elif declined(state):
        decision = f"{why}, and the plan has no long-context fallback"
    else:
        decision = "answered from retrieval" if state.get("answer") else "no answer"
    return {"fallback": fallback, "trace": [f"self_route: {decision}"]}
