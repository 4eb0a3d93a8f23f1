"""organize: OkraLong's organizer (§3.3). Writes the plan — workflow, k, granularity, fusion
weights, context processing, LongRAG perspectives, fallback — as data; the edges read it.
The heuristics are the pure function `graph.organizer.plan`."""

from __future__ import annotations

from langgraph.runtime import Runtime

from analyzer import Analysis
from graph.organizer import plan
from graph.settings import Settings
from graph.state import State

from .resources import settings_of


def organize(state: State, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    analysis = Analysis.model_validate(state["analysis"]) if state.get("analysis") else None
    strategy = state.get("strategy") or settings.strategy
    the_plan = plan(analysis or Analysis(backend="none"), settings, strategy)
    notes = []
    if not settings.has_llm and the_plan.workflow in ("split", "stepwise", "long_context"):
        # splitting, reasoning and reading need a model: without one, retrieve the question directly
        # (k per sub-question / per hop would be too few for the one retrieval that replaces them)
        k = max(the_plan.k, settings.factoid_k)
        the_plan = the_plan.model_copy(update={"workflow": "direct", "k": k, "reasons": [
            *the_plan.reasons, f"no LLM configured: '{the_plan.workflow}' replaced by direct retrieval, k={k}"]})
        notes.append("organize: no LLM, direct retrieval (evidence only)")
    trace = (f"organize[{the_plan.strategy}]: {the_plan.workflow}, k={the_plan.k}, g={the_plan.granularity}, "
             f"weights={the_plan.weights[0]:g}:{the_plan.weights[1]:g}, extract={the_plan.extract}, "
             f"filter={the_plan.filter}, fallback={the_plan.fallback}")
    return {"plan": the_plan.model_dump(), "route": ["organize"], "trace": [trace, *notes]}
