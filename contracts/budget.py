"""The question budget as a plan: how `question_budget` input tokens are shared among the model calls
of a route, so the worst case of every route fits by construction. Pure functions of the plan, the
prompts' fixed sizes (`longqa.llm.ledger.Overheads`) and the ledger; no model and no index.

- `sized_plan`: the organizer's plan with its evidence sized to the route. Each call that reads the
  evidence is one read (the joint filter, the extractor, the generator); a per-chunk filter also pays
  its prompt and the CoT once per passage; a step-wise route pays two hops' prompts and reads each
  hop's chunks twice (at the hop, then in the generator). A perspective the budget cannot afford
  beside enough evidence is turned off, with the reason; a budget that cannot hold the generator's
  prompt and one chunk is an `OverBudget` error naming both numbers.

What each call may spend when it is made (what is left, the generator's share, fitting a prompt to
it) is `longqa.llm.budget`'s `Budget`, applied by the model-node driver (llm/model_node.py): nodes
do no budget arithmetic. `counted_by` is re-exported for the node wrapper (graph/ sits above llm/).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from longqa.llm.ledger import GLOBAL_INFO_TOKENS, NOTE_TOKENS, SAFETY, Overheads, spent, usable

from .plan import Plan
from .settings import Settings
from .state import State

__all__ = ["OverBudget", "counted_by", "evidence_tokens", "sized_for", "sized_plan"]


class OverBudget(ValueError):
    """A question budget too small for the route's smallest prompt: the message says how small."""


def evidence_tokens(plan: Plan, o: Overheads, settings: Settings, room: int) -> int:
    """The evidence tokens a route's worst case affords within `room` input tokens. Without a model
    only the reading of the evidence is sized (as one generator would read it): no call is made."""
    labels = 1 + o.per_passage / max(plan.granularity, 1)  # each passage's label around its text
    if not settings.has_llm:
        return int((room - o.generate) / labels)
    if plan.workflow == "stepwise":
        # two hops (their prompts and notes), each hop's chunks read at the hop and by the generator
        hop = (room - 2 * (o.reason + NOTE_TOKENS) - o.generate) / (4 * labels)
        return int(hop) * plan.max_hops  # retrieval gives each hop its 1/max_hops share
    fixed, reads = o.generate, 1.0
    if plan.workflow == "split":
        fixed += o.split
    if plan.filter and plan.filter_mode == "joint":
        fixed, reads = fixed + o.filter, reads + 1
    elif plan.filter:  # LongRAG's CoT over all, then per passage: its prompt, the passage and the CoT
        fixed += o.filter
        reads += 2 + (o.judge + settings.cot_max_tokens) / max(plan.granularity, 1)
    if plan.extract:
        fixed, reads = fixed + o.extract + min(settings.extract_max_tokens, GLOBAL_INFO_TOKENS), reads + 1
    return int((room - fixed) / (reads * labels))


def sized_plan(plan: Plan, o: Overheads, settings: Settings, usage: Sequence[dict[str, Any]] | None = None) -> Plan:
    """The plan with its evidence sized so every call of its route fits `plan.question_budget`
    (an unbudgeted plan comes back as it is). Raises OverBudget when nothing useful fits."""
    if not plan.question_budget or plan.workflow == "long_context":
        return plan
    room = usable(plan.question_budget, usage)
    floor = 2 * plan.granularity  # less evidence than two chunks: drop a perspective instead
    reasons = list(plan.reasons)
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
    share = plan.max_hops if plan.workflow == "stepwise" else 1
    smallest = o.generate + plan.granularity
    if tokens < min(plan.granularity, 64):
        raise OverBudget(
            f"question_budget={plan.question_budget} input tokens cannot hold this route: its smallest "
            f"prompts and one chunk need about {int(smallest / (1 - SAFETY)) + spent(usage)}; raise question_budget"
        )
    current = plan.budget if plan.budget else plan.k * plan.granularity * share
    if tokens < current:
        reasons.append(
            f"question budget {plan.question_budget} tokens: evidence cut to {tokens} tokens"
            + (f" ({tokens // share} per hop)" if share > 1 else "")
        )
        plan = plan.model_copy(update={"budget": tokens})
    else:
        reasons.append(f"question budget {plan.question_budget} tokens: the route fits")
    return plan.model_copy(update={"overheads": o, "reasons": reasons})


def sized_for(plan: Plan, state: State, settings: Settings) -> Plan:
    """`sized_plan` for this question: its prompts' overheads (the question and the conversation so
    far) and what the run has spent already (the LLM analyzer's call)."""
    from longqa.llm.budget import overheads  # counts with the tokenizer: loaded when a plan is sized

    o = overheads(state["question"], state.get("history") or ())
    return sized_plan(plan, o, settings, state.get("usage"))


def counted_by(spec: Any) -> AbstractContextManager[None]:
    """Within this block, prompts are sized by the model's server where it can count them
    (`longqa.llm.budget.counted_by`, imported here when first used so that importing contracts
    loads no model client)."""
    from longqa.llm.budget import counted_by as counting

    return counting(spec)
