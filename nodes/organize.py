"""organize: OkraLong's organizer (§3.3). Writes the plan — workflow, k, granularity, fusion
weights, context processing, LongRAG perspectives, fallback — as data; the edges read it.
The heuristics (the no-LLM rule included) are the pure function `longqa.contracts.plan.plan`."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.analyzer import Analysis
from longqa.contracts.budget import OverBudget, sized_for
from longqa.contracts.failure import fail
from longqa.contracts.plan import plan
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import State


def organize(state: State, runtime: Runtime[Settings]) -> dict:
    """Plan the run from the analysis and the strategy, sized to the question budget (an error when the question
    alone is over it)."""
    settings = settings_of(runtime)
    analysis = Analysis.model_validate(state["analysis"]) if state.get("analysis") else None
    the_plan = plan(analysis or Analysis(backend="none"), settings, state.get("strategy"), state["question"])
    try:  # the question budget shared among the route's calls (what the LLM analyzer spent is gone)
        the_plan = sized_for(the_plan, state, settings)
    except OverBudget as e:
        return fail("organize", str(e), plan=the_plan.model_dump(), trace=[f"organize: {e}"])
    trace = (
        f"organize[{the_plan.strategy}]: {the_plan.workflow}, "
        + (
            f"budget={the_plan.budget} tokens, bridges={the_plan.bridge_seeds}"
            if the_plan.budget
            else f"k={the_plan.k}"
        )
        + f", g={the_plan.granularity}, "
        f"weights={the_plan.weights[0]:g}:{the_plan.weights[1]:g}, extract={the_plan.extract}, "
        f"filter={the_plan.filter}, fallback={the_plan.fallback}"
        + (f", question budget={the_plan.question_budget} tokens" if the_plan.question_budget else "")
    )
    return {"plan": the_plan.model_dump(), "trace": [trace]}
