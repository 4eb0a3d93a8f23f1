"""The question budget as a plan: how `question_budget` input tokens are shared among the model calls
of a route, so the worst case of every route fits by construction. Pure functions of the plan, the
prompts' fixed sizes (`longqa.llm.ledger.Overheads`) and the ledger; no model and no index.

- `sized_plan`: the organizer's plan with its evidence sized to the route. Each call that reads the
  evidence is one read (the joint filter, the extractor, the generator); a per-chunk filter also pays
  its prompt and the CoT once per passage; a step-wise route pays two hops' prompts and reads each
  hop's chunks twice (at the hop, then in the generator). A perspective the budget cannot afford
  beside enough evidence is turned off, with the reason; a budget that cannot hold the generator's
  prompt and one chunk is an `OverBudget` error naming both numbers.
- `allowance` / `generator_share`: what a node may spend now, keeping the generator's smallest share.
- `counted_by`: within it, prompts are sized by the model server's own count where it can give one
  (llama.cpp), so the budget holds whatever the model's tokenizer (the node wrapper applies it).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from longqa.llm.ledger import Overheads, calibration, spent

from .plan import Plan
from .settings import Settings

SAFETY = 0.05  # of the budget kept back: the first call's prompt is sized by our count, not the model's
# what the plan expects a call's output to add to later prompts (a hop's notes, I_g); longer outputs
# are paid for by the later prompts, which are cut to what is left: the budget holds either way
NOTE_TOKENS = 64
ANALYZE_SHARE = 0.35  # the most of the budget the LLM analyzer (question + primary chunks) may read
GLOBAL_INFO_TOKENS = 128


__all__ = [
    "OverBudget",
    "allowance",
    "counted_by",
    "evidence_tokens",
    "generator_share",
    "left",
    "sized_plan",
    "usable",
]


class OverBudget(ValueError):
    """A question budget too small for the route's smallest prompt: the message says how small."""


def usable(question_budget: int, usage: Sequence[dict[str, Any]] | None) -> int:
    """Tokens the rest of the run may plan on: the budget less the safety share and what was spent."""
    return int(question_budget * (1 - SAFETY)) - spent(usage)


def left(question_budget: int | None, usage: Sequence[dict[str, Any]] | None) -> int | None:
    """Input tokens still unspent (None: no budget)."""
    return None if not question_budget else question_budget - spent(usage)


def allowance(
    question_budget: int | None, usage: Sequence[dict[str, Any]] | None, reserved: int = 0
) -> tuple[int | None, float]:
    """(the most a node's call may cost, attempts together, keeping `reserved` for later calls;
    the model's tokens per token we count). (None, ...) without a budget."""
    rest = left(question_budget, usage)
    return (None if rest is None else max(rest - reserved, 0)), calibration(usage)


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


def generator_share(plan: Plan) -> int:
    """What a node before the generator leaves for it: the generator's fixed prompt and one chunk,
    so a node spending what is left never starves the answer."""
    if plan.overheads is None or not plan.question_budget:
        return 0
    return plan.overheads.generate + plan.granularity


def counted_by(spec: Any) -> AbstractContextManager[None]:
    """Within this block, prompts are sized by the model's server where it can count them
    (`longqa.llm.budget.counted_by`, imported here when first used so that importing contracts
    loads no model client)."""
    from longqa.llm.budget import counted_by as counting

    return counting(spec)
