"""The question budget as a plan: how `question_budget` input tokens are shared among the model calls
of a route, so the worst case of every route fits by construction. Pure functions of the plan, the
prompts' fixed sizes (`longqa.llm.budget_arithmetic.Overheads`) and the ledger; no model and no index.

- `sized_plan`: the organizer's plan with its evidence sized to the route (what a route's worst case
  affords is `longqa.llm.budget_arithmetic.evidence_tokens`, the one module of the budget's
  arithmetic; this module decides by its numbers). A perspective the budget cannot afford beside
  enough evidence is turned off, with the reason; a budget that cannot hold the generator's prompt
  and one chunk is an `OverBudget` error naming both numbers.

What each call may spend when it is made (what is left, the generator's share, fitting a prompt to
it) is `longqa.llm.budget`'s `Budget`, applied by the model-node driver (llm/model_node.py): nodes
do no budget arithmetic. `counted_by` is re-exported for the node wrapper (graph/ sits above llm/).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from longqa.llm.budget_arithmetic import (
    Overheads,
    evidence_floor,
    evidence_tokens,
    holds_a_chunk,
    kept_for_asking_again,
    per_query,
    planned_evidence,
    route_need,
    usable,
)

from .plan import Plan
from .settings import Settings
from .state import State

__all__ = ["OverBudget", "counted_by", "sized_for", "sized_plan"]


class OverBudget(ValueError):
    """A question budget too small for the route's smallest prompt: the message says how small."""


def sized_plan(plan: Plan, o: Overheads, settings: Settings, usage: Sequence[dict[str, Any]] | None = None) -> Plan:
    """The plan with its evidence sized so every call of its route fits `plan.question_budget`
    (an unbudgeted plan comes back as it is). Raises OverBudget when nothing useful fits."""
    if not plan.question_budget or plan.workflow == "long_context":
        return plan
    room = usable(plan.question_budget, usage)
    floor = evidence_floor(plan.granularity)
    reasons = list(plan.reasons)
    if plan.reask and plan.reask_tokens:  # the first reading leaves room to ask again, where the budget holds both
        kept = kept_for_asking_again(plan.reask_tokens)
        if plan.workflow == "stepwise":  # its hops read the evidence step by step: they get the budget
            plan = plan.model_copy(update={"reask_tokens": 0})
            reasons.append("budget: nothing kept back for asking again, a step-wise route's hops spend it")
        elif evidence_tokens(plan, o, settings, room - kept) >= floor:
            room -= kept
            reasons.append(f"budget: {plan.reask_tokens} tokens kept back for asking again")
        else:
            plan = plan.model_copy(update={"reask_tokens": 0})
            reasons.append("budget: nothing kept back for asking again, it would leave less than two chunks")
    if plan.workflow == "stepwise" and plan.extract:
        plan = plan.model_copy(update={"extract": False})
        reasons.append("budget: no extractor after step-wise reasoning (its notes carry the bridge)")
    for perspective in ("extract", "filter"):
        if getattr(plan, perspective) and evidence_tokens(plan, o, settings, room) < floor:
            plan = plan.model_copy(update={perspective: False})
            reasons.append(f"budget: {perspective} off, it would leave less than two chunks of evidence")
    if plan.workflow in ("stepwise", "split") and evidence_tokens(plan, o, settings, room) < floor:
        reasons.append(f"budget: too little is left for a {plan.workflow} workflow; one direct retrieval")
        plan = plan.model_copy(update={"workflow": "direct", "k": max(plan.k, settings.factoid_k)})
    tokens = evidence_tokens(plan, o, settings, room)
    share = plan.retrievals
    if not holds_a_chunk(tokens, plan.granularity):
        raise OverBudget(
            f"question_budget={plan.question_budget} input tokens cannot hold this route: its smallest "
            f"prompts and one chunk need about {route_need(o, plan.granularity, usage)}; raise question_budget"
        )
    if tokens < planned_evidence(plan.budget, plan.k, plan.granularity, share):
        reasons.append(
            f"question budget {plan.question_budget} tokens: evidence cut to {tokens} tokens"
            + (f" ({per_query(tokens, share)} per hop)" if share > 1 else "")
        )
        plan = plan.model_copy(update={"budget": tokens})
    else:
        reasons.append(f"question budget {plan.question_budget} tokens: the route fits")
    return plan.model_copy(update={"overheads": o, "reasons": reasons})


def sized_for(plan: Plan, state: State, settings: Settings) -> Plan:
    """`sized_plan` for this question: its prompts' overheads (the question and the conversation so
    far) and what the run has spent already (the LLM analyzer's call)."""
    from longqa.llm.budget import overheads  # counts with the tokenizer: loaded when a plan is sized
    from longqa.retrieval.tokens import default_counter

    o = overheads(state["question"], state.get("history") or ())
    try:
        return sized_plan(plan, o, settings, state.get("usage"))
    except OverBudget as e:
        if not settings.has_llm:  # evidence only: no call to pay for (seen: a long question refused all the same)
            reason = "question budget: no model is called, so it does not apply (the evidence is not cut to it)"
            return plan.model_copy(update={"overheads": o, "reasons": [*plan.reasons, reason]})
        asked = default_counter().count(state["question"])
        if asked * 4 > (plan.question_budget or 0):  # the question itself is most of it: say so
            raise OverBudget(f"{e} (the question itself is about {asked:,} tokens)") from None
        raise


def counted_by(spec: Any) -> AbstractContextManager[None]:
    """Within this block, prompts are sized by the model's server where it can count them
    (`longqa.llm.budget.counted_by`, imported here when first used so that importing contracts
    loads no model client)."""
    from longqa.llm.budget import counted_by as counting

    return counting(spec)
