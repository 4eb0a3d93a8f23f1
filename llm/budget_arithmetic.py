"""The question budget's arithmetic, in one place: pure functions over token counts. Nothing here
counts a text: `longqa.llm.budget` counts (the offline counter, or the model's server) and calls into
this module, so the model-node driver (llm/model_node.py) fits each call through it; the organizer
sizes its plan with it (`longqa.contracts.budget` `sized_plan`). Light: no tokenizer, model client or
index, so `longqa.contracts` imports it (tests/test_architecture.py checks); no node, router or
service imports it or does this arithmetic by hand (tests/test_operators.py checks).

- the ledger: what the attempts cost (`spent`), the model's count per ours (`calibration`), a
  count of ours in the model's tokens (`by_the_model`) and a text's room in a prompt (`text_room`);
- the plan's share: what a route's worst case affords for evidence (`evidence_tokens`) and the
  numbers `sized_plan` decides by (`usable`, `evidence_floor`, `holds_a_chunk`, `route_need`,
  `planned_evidence`, `per_query`);
- what a call may spend: what is left (`left`), the generator's share calls before it keep back
  (`answer_share`), a call's cap (`call_cap`), a hop's notes (`with_notes`), a retry
  (`retry_affordable`), a counted prompt (`affordable`), fitting a prompt (`drop_until_fits`,
  `cut_until_fits`, `paid_in_turn`);
- the long context: its room within the budget and the model's window (`long_context_fixed`,
  `long_context_room`, `fallback_shortfall`, `window_room`, `over_window`, `shrunk`,
  `counted_room`, `refused_room`, `fits_whole`, `fill_in_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

SAFETY = 0.05  # of the budget kept back: the first call's prompt is sized by our count, not the model's
# what the plan expects a call's output to add to later prompts (a hop's notes, I_g); longer outputs
# are paid for by the later prompts, which are cut to what is left: the budget holds either way
NOTE_TOKENS = 64
GLOBAL_INFO_TOKENS = 128
LONG_CONTEXT_OVERHEAD = 200  # the long-context prompt's instructions around its context, generously
TOKENS_PER_RETRY = 1.25  # with no number from the server, assume it counted a quarter more than we did

T = TypeVar("T")


class Overheads(BaseModel):
    """Input tokens of each call's prompt besides its evidence: instructions, question, history."""

    analyze: int
    split: int
    filter: int  # the joint CoT + filter call, or LongRAG's CoT call
    judge: int  # one per-chunk filter call, besides its passage and the CoT
    extract: int
    reason: int  # one step-wise hop, besides its chunks and the notes so far
    generate: int
    long_context: int
    per_passage: int  # the label and source line around each passage shown


# -- the ledger ----------------------------------------------------------------------------------------


def spent(usage: Sequence[dict[str, Any]] | None) -> int:
    """Input tokens the ledger's attempts cost, failed ones and retries included."""
    return sum(int(r.get("input_tokens") or 0) for r in usage or ())


# A server's ratio to our count varies a little with each prompt's mix of chat template and text (a stub counting
# 1.4x ours + 12 measured 1.38 on the analyzer's prompt, 1.40 on the generator's, which filled the budget to 1,906 of
# 1,900): a ratio above 1 is taken this much larger.
CALIBRATION_MARGIN = 1.02


def calibration(usage: Sequence[dict[str, Any]] | None) -> float:
    """How many tokens the model's server counts per token we count (at least 1): the largest ratio
    its replies reported so far, with CALIBRATION_MARGIN, so the next prompt is cut by the model's count, not ours."""
    ratios = [
        r["input_tokens"] / r["counted_tokens"]
        for r in usage or ()
        if not r.get("estimated") and r.get("counted_tokens")
    ]
    ratio = max([1.0, *ratios])
    return ratio * CALIBRATION_MARGIN if ratio > 1.0 else 1.0


def by_the_model(ours: int, scale: float) -> int:
    """A prompt's tokens as the model's server will count them: ours times `scale` (`calibration`)."""
    return round(ours * scale)


def text_room(cap: int, scale: float, around: int) -> int:
    """Our tokens a text may have in a prompt that costs at most `cap` of the model's tokens, beside
    the `around` tokens of the prompt without it."""
    return int(cap / scale) - around


# -- the plan's share ----------------------------------------------------------------------------------


class Route(Protocol):
    """What the plan's sizing reads of a plan (`longqa.contracts.plan.Plan`)."""

    workflow: str
    filter: bool
    filter_mode: str
    extract: bool
    granularity: int
    max_hops: int


class Reads(Protocol):
    """What the plan's sizing reads of the run's settings (`longqa.contracts.settings.Settings`)."""

    @property
    def has_llm(self) -> bool: ...

    cot_max_tokens: int
    extract_max_tokens: int


def usable(question_budget: int, usage: Sequence[dict[str, Any]] | None) -> int:
    """Tokens the rest of the run may plan on: the budget less the safety share and what was spent."""
    return int(question_budget * (1 - SAFETY)) - spent(usage)


def evidence_tokens(plan: Route, o: Overheads, settings: Reads, room: int) -> int:
    """The evidence tokens a route's worst case affords within `room` input tokens. Without a model
    only the reading of the evidence is sized (as one generator would read it): no call is made.
    Each call that reads the evidence is one read (the joint filter, the extractor, the generator); a
    per-chunk filter also pays its prompt and the CoT once per passage; a step-wise route pays two
    hops' prompts and reads each hop's chunks twice (at the hop, then in the generator)."""
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


def kept_for_asking_again(reask_tokens: int) -> int:
    """What the plan's sizing keeps back of `usable`'s room for one re-ask of `reask_tokens`: their share
    beside the safety share (the first reading's cap keeps the whole of them back)."""
    return int(reask_tokens * (1 - SAFETY))


def evidence_floor(granularity: int) -> int:
    """Less evidence than two chunks: the organizer drops a perspective instead."""
    return 2 * granularity


def holds_a_chunk(tokens: int, granularity: int) -> bool:
    """Whether `tokens` of evidence hold a chunk (or 64 tokens of a larger one): a route worth running."""
    return tokens >= min(granularity, 64)


def route_need(o: Overheads, granularity: int, usage: Sequence[dict[str, Any]] | None) -> int:
    """The question budget a route's smallest prompts and one chunk need, with what was spent."""
    return int((o.generate + granularity) / (1 - SAFETY)) + spent(usage)


def planned_evidence(budget: int | None, k: int, granularity: int, queries: int = 1) -> int:
    """The evidence tokens a plan reads over `queries` retrievals: its budget, else k chunks each."""
    return budget if budget else k * granularity * queries


def per_query(budget: int | None, queries: int) -> int | None:
    """One retrieval's share of the evidence budget when `queries` retrievals share it (None: k)."""
    return budget // queries if budget else None


# -- what a call may spend ---------------------------------------------------------------------------


def left(question_budget: int | None, usage: Sequence[dict[str, Any]] | None) -> int | None:
    """Input tokens still unspent (None: no budget)."""
    return None if not question_budget else question_budget - spent(usage)


def answer_share(generate: int, granularity: int) -> int:
    """The generator's share that calls before it keep back: its fixed prompt (`generate` tokens)
    and one chunk."""
    return generate + granularity


def call_cap(total: int | None, rest: int, reserved: int, share: float | None = None) -> int | None:
    """The most one call may cost: what is left (`rest`) less what later calls keep (`reserved`), and
    at most `share` of the whole budget (None: no budget)."""
    if total is None:
        return None
    cap = max(rest - reserved, 0)
    return cap if share is None else min(cap, int(total * share))


def with_notes(note_tokens: int) -> int:
    """What a later prompt will read again: the notes so far (`note_tokens`) and this call's note."""
    return note_tokens + NOTE_TOKENS


def generator_reading(evidence_tokens: int, granularity: int, global_info_cap: int) -> int:
    """What a call before the generator keeps for it beyond its share (its prompt and one chunk): the
    rest of the evidence it will read, and the global information the extractor writes for it."""
    return max(0, evidence_tokens - granularity) + min(global_info_cap, GLOBAL_INFO_TOKENS)


def retry_affordable(records: Sequence[dict[str, Any]], cap: int | None) -> bool:
    """A retry costs its prompt again: whether the attempts so far and one more fit `cap`."""
    if cap is None or not records:
        return True
    return spent(records) + int(records[-1].get("input_tokens") or 0) <= cap


def affordable(cost: int | None, allowance: int | None) -> bool:
    """Whether a prompt of `cost` tokens (None: not counted) fits the call's allowance (None: any)."""
    return cost is None or allowance is None or cost <= allowance


def drop_until_fits(
    items: Sequence[T], cost: Callable[[list[T]], int], cap: int, score: Callable[[T], float]
) -> tuple[list[T], int]:
    """(the items kept, their prompt's cost): the lowest-scored items dropped, one at a time, until
    `cost(kept)` is at most `cap`. The kept items stay in their order, and a non-empty result always
    fits; an empty one means not even one item does (its cost is then the empty prompt's)."""
    kept = list(items)
    size = cost(kept)
    while kept and size > cap:
        kept.remove(min(kept, key=score))
        size = cost(kept)
    return kept, size


def cut_until_fits(room: int, cost: Callable[[int], int], cap: int) -> tuple[int, int] | None:
    """(the tokens an item's text is cut to, the prompt's cost) for the largest cut, from `room`
    down, whose prompt `cost(tokens)` fits `cap`: each miss takes off what it was over (at least 8);
    None when none fits."""
    while room > 0:
        over = cost(room)
        if over <= cap:
            return room, over
        room -= max(8, over - cap)
    return None


def paid_in_turn(costs: Sequence[int | None], cap: int | None) -> list[int]:
    """The indexes of the calls paid for, in turn, while their costs together fit `cap` (a call that
    does not fit is passed over; None: no budget, every call is paid)."""
    used, paid = 0, []
    for i, cost in enumerate(costs):
        if cap is not None and cost is not None:
            if used + cost > cap:
                continue
            used += cost
        paid.append(i)
    return paid


# -- the long context ----------------------------------------------------------------------------------


def long_context_fixed(question_tokens: int) -> int:
    """A long-context prompt's tokens besides its content: its instructions and the question."""
    return LONG_CONTEXT_OVERHEAD + question_tokens


def long_context_room(cap: int | None, scale: float, overhead: int) -> int | None:
    """The content tokens (our count) a long-context prompt may hold beside `overhead` tokens of
    instructions within a call cap of `cap` model tokens (None: no budget)."""
    return None if cap is None else max(int(cap / scale) - overhead, 0)


def fallback_shortfall(rest: int | None, long_context: int, granularity: int, read: int) -> tuple[int, int] | None:
    """(what is left, the smallest long-context prompt that reads more than the `read` tokens
    retrieval found) when the first is less than the second; else None (`long_context`: the prompt's
    fixed part, 0 when no plan sized it)."""
    smallest = long_context + max(granularity, read + 1) if long_context else 0
    return (rest, smallest) if rest is not None and rest < smallest else None


def window_room(window: int, answer_cap: int, fixed: int, room: int | None = None) -> int:
    """The content tokens a long-context prompt may hold: the model's window less the answer's cap
    and the prompt's `fixed` tokens, and within the question budget's `room` (None: no budget)."""
    content = max(window - answer_cap - fixed, 0)
    return content if room is None else min(content, room)


def over_window(counted: int, answer_cap: int, window: int) -> bool:
    """Whether a prompt the server counts as `counted` tokens, with the answer's cap, overflows the window."""
    return counted + answer_cap > window


def shrunk(budget: int, counted: int, room: int) -> int:
    """A content budget scaled by what fits (`room`) over what the server counted, with 5% to spare."""
    return max(int(budget * min(1.0, room / max(counted, 1)) * 0.95), 0)


def counted_room(room: int, counted: int, window: int, answer_cap: int) -> int:
    """The content budget after the server counted a prompt as `counted` tokens, over its window."""
    return shrunk(room, counted, window - answer_cap)


def refused_room(budget: int, counted: int | None, context_size: int | None, window: int, answer_cap: int) -> int:
    """The content budget after the server refused a prompt as too long: scaled by what its context
    (`context_size`, else our `window`) leaves beside the answer over what it counted (`counted`;
    when it did not say, our size with a quarter more)."""
    over = counted or round(TOKENS_PER_RETRY * (budget + LONG_CONTEXT_OVERHEAD))
    return shrunk(budget, over, (context_size or window) - answer_cap)


def fits_whole(sizes: Sequence[int], room: int, each: int) -> bool:
    """Whether texts of these sizes, each with `each` tokens around it, fit `room` together."""
    return sum(sizes) + each * len(sizes) <= room


def fill_in_order(sizes: Sequence[int], room: int, each: int) -> tuple[int, int]:
    """(how many of the texts, in order, fit `room` with `each` tokens around each, their tokens):
    the first that does not fit ends the filling."""
    used = 0
    for n, size in enumerate(sizes):
        if used + size + each > room:
            return n, used
        used += size + each
    return len(sizes), used
