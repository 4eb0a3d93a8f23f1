"""Counting for the question budget, and fitting a node's prompt to it: what a question's model calls
cost in input tokens before they are made (the tokens each prompt holds besides its evidence,
`overheads`; a prompt's size, `prompt_tokens`), a text cut to a number of tokens (`cut_to`), and what
each call may spend: `Budget`, read from the run's state (what is left, the generator's share that
calls before it keep back, what a node's `Prompt` declares later calls will read: a hop's notes, the
generator's passages), which fits the prompt to it for the model-node driver (llm/model_node.py), so
no node does this arithmetic or imports this module. The long context's room within the model's
window is `LongContext`'s, given to the node as a `Room` (llm/window.py). This module counts; the
arithmetic itself (what is left, the caps, the fit loops, the plan's share) is
`longqa.llm.budget_arithmetic`, which the organizer's `sized_plan` (`longqa.contracts.budget`) uses too.

Where the model's server can count (llama.cpp: its chat template applied, then its own tokenizer), a
prompt's size is the server's count, so a call is sized by exactly what it will be charged, whatever
the model's tokenizer; the node driver turns that on for a node's work (`counted_by`). Elsewhere
counts are the offline counter's (retrieval/tokens.py) plus MESSAGE_TOKENS per chat message for the
template around it, and a server that counts more than we do is caught by `calibration` after its
first reply.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict

from longqa.prompts import generation, longrag, okralong, self_route
from longqa.retrieval.tokens import default_counter

from . import budget_arithmetic as arithmetic
from .budget_arithmetic import Overheads
from .budget_arithmetic import calibration as calibration  # the ledger's readings, for callers of this module
from .budget_arithmetic import spent as spent
from .endpoint import count_uncertain, templated_tokens
from .models import ModelSpec, speaks_openai

# our count's margin while the model's server, which counts, cannot for now (llm/endpoint.py count_uncertain)
UNCOUNTED_MARGIN = 1.25
MESSAGE_TOKENS = 8  # a chat template's tokens around one message (role markers, turn ends), generously

T = TypeVar("T")


# the base URL of the server that counts this node's prompts (None: our own count), set by `counted_by`
_SERVER: contextvars.ContextVar[str | None] = contextvars.ContextVar("longqa_counting_server", default=None)


@contextlib.contextmanager
def counted_by(spec: ModelSpec | None) -> Iterator[None]:
    """Within this block, prompts are sized by the model's server where it can count them."""
    url = spec.base_url if spec is not None and spec.base_url and speaks_openai(spec) else None
    token = _SERVER.set(url)
    try:
        yield
    finally:
        _SERVER.reset(token)


def served_tokens(messages: Sequence[BaseMessage]) -> int | None:
    """The input tokens the counting server (`counted_by`) will charge for `messages`, or None."""
    url = _SERVER.get()
    return templated_tokens(url, list(messages)) if url else None


def prompt_tokens(messages: Sequence[BaseMessage] | str) -> int:
    """A prompt's input tokens: the server's own count where it can give one (`counted_by`), else
    ours, its text plus each message's framing."""
    as_messages = [HumanMessage(messages)] if isinstance(messages, str) else list(messages)
    served = served_tokens(as_messages)
    if served is not None:
        return served
    text = [m.content if isinstance(m.content, str) else str(m.content) for m in as_messages]
    ours = sum(default_counter().count_many(text)) + MESSAGE_TOKENS * len(text)
    url = _SERVER.get()
    # the server counts, but not just now: our word pieces may be fewer than its tokens (Qwen's: ~16% more)
    return math.ceil(ours * UNCOUNTED_MARGIN) if url and count_uncertain(url) else ours


def overheads(question: str, history: Sequence[str] = ()) -> Overheads:
    """The fixed part of every prompt a question's route can make (its templates, filled with the
    question; the generator's also holds the conversation so far)."""
    count = default_counter().count
    q = count(question) + MESSAGE_TOKENS
    past = count("\n".join(history)) + count(generation.HISTORY_HEADER) if history else 0
    generate = (
        count(longrag.GENERATOR)
        + count(generation.EVIDENCE_HEADER)
        + count(generation.CITE_INSTRUCTION)
        + count(generation.DATA_NOTE)
        + count(self_route.UNANSWERABLE_CLAUSE)
        + count(generation.GLOBAL_INFO_HEADER)
        + count(generation.REASONING_HEADER)
    )
    return Overheads(
        analyze=q + count(okralong.ANALYZER_SYSTEM) + count(okralong.ANALYZER_USER) + MESSAGE_TOKENS,
        split=q
        + sum(
            count(t) for t in (okralong.SPLITTER_SYSTEM, okralong.SPLITTER_DEMO_USER, okralong.SPLITTER_DEMO_ASSISTANT)
        )
        + 3 * MESSAGE_TOKENS,
        filter=q + count(longrag.JOINT_FILTER),
        judge=q + count(longrag.FILTER),
        extract=q + count(longrag.EXTRACTOR),
        reason=q
        + sum(
            count(t) for t in (okralong.REASONER_SYSTEM, okralong.REASONER_DEMO_USER, okralong.REASONER_DEMO_ASSISTANT)
        )
        + count(okralong.REASONER_USER)
        + 3 * MESSAGE_TOKENS,
        generate=q + past + generate,
        long_context=q + count(self_route.LONG_CONTEXT),
        per_passage=count("\n\n[E99] (a-source-name.pdf)\n"),
    )


def cut_to(text: str, tokens: int) -> str:
    """The text's start, at most `tokens` tokens by the offline counter (which may count a token the
    vocabulary lacks as several), marked as cut."""
    counter = default_counter()
    if counter.count(text) <= tokens:
        return text
    spans = counter.spans(text)
    n = min(tokens, len(spans))
    while n > 0 and counter.count(text[: spans[n - 1][1]]) > tokens:
        n = int(n * 0.9)
    return (text[: spans[n - 1][1]].rstrip() if n > 0 else "") + " [...]"


def fit(
    items: Sequence[T],
    render: Callable[[list[T]], Sequence[BaseMessage] | str],
    cap: int,
    score: Callable[[T], float],
    scale: float = 1.0,
) -> tuple[list[T], int]:
    """(the items kept, the prompt's tokens): the lowest-scored items dropped, one at a time, until
    `render(kept)` costs at most `cap` tokens (scaled by `scale`, the model's count per ours). The
    kept items stay in their order, and a non-empty result always fits; an empty one means not even
    one item does (its size is then the empty rendering's, which may itself be over the cap)."""
    return arithmetic.drop_until_fits(items, lambda kept: _model_count(render(kept), scale), cap, score)


def _model_count(messages: Sequence[BaseMessage] | str, scale: float) -> int:
    """A prompt's size as the model will count it (our count, scaled by `calibration`)."""
    return arithmetic.by_the_model(prompt_tokens(messages), scale)


def _notes_room(text: str) -> int:
    """What a later prompt will read again of `text` (the hops' notes so far), and this call's note."""
    return arithmetic.with_notes(default_counter().count(text))


def _generator_room(later: Later, granularity: int) -> int:
    """What a call before the generator keeps for it beside its share: the passages it will read (our
    count) and the global information this call writes it (LongRAG's source paragraphs are longer than
    the chunks: unkept, they took the generator's evidence)."""
    counted = sum(default_counter().count(p["text"]) for p in later.passages)
    return arithmetic.generator_reading(counted, granularity, later.writes)


@dataclass(frozen=True)
class Later:
    """What the generator reads after a call besides its share: the `passages` it will be shown and the
    global information (at most `writes` tokens) the call writes for it (LongRAG's extractor)."""

    passages: Sequence[Mapping[str, Any]]
    writes: int


def _score(item: Any) -> float:
    return item["score"]


@dataclass(frozen=True)
class Prompt(Generic[T]):
    """What a model node would send: its `items` (passages, hits) and how to `render` a prompt of
    some of them, for the driver (llm/model_node.py) to fit to what is left of the question budget.
    - `score`: which items go first when some must (the lowest-scored are dropped);
    - `answers`: this call gives (or checks) the answer: nothing is kept back for the generator;
    - `notes`: the hops' notes so far, which later prompts read again with this call's note: kept back;
    - `later`: what the generator reads after this call besides its share (`Later`): kept back;
    - `share`: at most this share of the whole budget (the analyzer, before the plan shares it);
    - `bare`: the prompt may be sent without any item (the generator holding notes);
    - `cut`: when no item fits whole, the best one's start (its "text" cut) is sent instead;
    - `reask`: this is the generator asked again, the call the plan's held tokens are for (`Budget.held`)."""

    items: Sequence[T]
    render: Callable[[list[T]], Sequence[BaseMessage] | str]
    score: Callable[[T], float] = _score
    answers: bool = False
    notes: str | None = None
    later: Later | None = None
    share: float | None = None
    bare: bool = False
    cut: bool = False
    reask: bool = False
    sized: bool = True  # False: fixed messages, sent as they are (`fixed`)

    @classmethod
    def fixed(cls, messages: Sequence[BaseMessage], answers: bool = False) -> Prompt:
        """A prompt with nothing to drop: sent as it is, with what is left as its allowance."""
        return cls((), lambda _: messages, answers=answers, bare=True, sized=False)

    def messages(self, items: list[T]) -> list[BaseMessage]:
        """The chat messages of a prompt holding `items`."""
        rendered = self.render(items)
        return [HumanMessage(rendered)] if isinstance(rendered, str) else list(rendered)


@dataclass(frozen=True)
class Fitted:
    """A prompt fitted to the budget: its messages, the items kept (`dropped` left out, the best one
    `cut` to so many tokens), the call's `allowance`; or `refused`: why not even that fits. A prompt
    sized by the model's window (llm/window.py) also says how its items were `chosen` for its `room`
    (content tokens, our count) and what the driver did to fit it (`notes`, for the node's trace)."""

    messages: list[BaseMessage]
    kept: list
    allowance: int | None = None
    dropped: int = 0
    cut: int | None = None
    refused: str | None = None
    chosen: str | None = None
    room: int | None = None
    notes: tuple[str, ...] = ()


class PlanTerms(BaseModel):
    """What the budget reads of the organizer's plan (`longqa.contracts.plan.Plan`, which the state
    holds as data; llm/ sits below contracts/): the question budget, the prompts' overheads, the
    chunk size."""

    model_config = ConfigDict(extra="ignore", from_attributes=True)

    question_budget: int | None = None
    overheads: Overheads | None = None
    granularity: int | None = None
    reask_tokens: int = 0


@dataclass(frozen=True)
class Budget:
    """What is left of one question's input-token budget, as the run's state records it: the plan's
    `question_budget` (before the organizer plans, the run's, passed in), the ledger, and the
    generator's share (its fixed prompt and one chunk) that calls before it leave. A `Send` task that
    carries its own `allowance` is budgeted by that alone. The plan is read as data (`PlanTerms`):
    llm/ sits below contracts/ (ARCHITECTURE.md's layers). It counts prompts; its sums are
    `budget_arithmetic`'s."""

    total: int | None
    usage: tuple[dict, ...] = ()
    answer_share: int = 0
    long_context: int = 0  # the long-context prompt's fixed part (0: no plan sized it)
    granularity: int = 0
    held: int = 0  # the plan's tokens for asking the generator again, which no other call spends (`Prompt.reask`)

    @classmethod
    def of(cls, state: Any, question_budget: int | None = None, ledger: Sequence[dict] = ()) -> Budget:
        """The budget a node's call works within: the state's, less `ledger` (this node's calls);
        before the organizer plans, the run's `question_budget` (None: no limit)."""
        state = state if isinstance(state, Mapping) else {}
        if "allowance" in state:  # a Send task, pre-paid by its router (nodes/filter.py `judgements`)
            return cls(state["allowance"], tuple(ledger))
        usage = (*(state.get("usage") or ()), *ledger)
        if not state.get("plan"):
            return cls(question_budget or None, usage)
        terms = PlanTerms.model_validate(state["plan"])
        total, overheads, granularity = terms.question_budget, terms.overheads, terms.granularity or 0
        if not (overheads and total):
            return cls(total or None, usage, granularity=granularity)
        share = arithmetic.answer_share(overheads.generate, granularity)
        held = terms.reask_tokens if state.get("reasked") is None else 0  # until the generator is asked again
        return cls(total, usage, share, overheads.long_context, granularity, held)

    @property
    def left(self) -> int | None:
        """Input tokens still unspent (None: no budget)."""
        return arithmetic.left(self.total, self.usage)

    @property
    def scale(self) -> float:
        """The model's tokens per token we count, learnt from its replies so far."""
        return calibration(self.usage)

    def cap(self, prompt: Prompt) -> int | None:
        """The most `prompt`'s call may cost, keeping what later calls need (None: no budget)."""
        reserved = (0 if prompt.answers else self.answer_share) + self.kept_back(prompt)
        reserved += 0 if prompt.reask else self.held
        return arithmetic.call_cap(self.total, self.left or 0, reserved, prompt.share)

    def kept_back(self, prompt: Prompt) -> int:
        """The tokens `prompt` leaves for later calls besides the generator's share: what they read
        again of the hops' notes (`notes`), and what the generator reads after it (`later`)."""
        notes = 0 if prompt.notes is None else _notes_room(prompt.notes)
        return notes + (0 if prompt.later is None else _generator_room(prompt.later, self.granularity))

    def refusal(self, prompt: Prompt, cap: int) -> str:
        """Why `prompt` is not sent: what the budget leaves it."""
        beside = "" if prompt.answers else " before the generator's share"
        return f"the question budget leaves {cap} of its {self.total} input tokens{beside}"

    def fit(self, prompt: Prompt) -> Fitted:
        """`prompt` with the best items that fit what it may cost (all of them without a budget)."""
        cap = self.cap(prompt)
        items = list(prompt.items)
        if cap is None or not prompt.sized:  # nothing to fit: the call's allowance only
            return Fitted(prompt.messages(items), items, cap)
        render = prompt.messages
        kept, size = fit(items, render, cap, prompt.score, self.scale)
        cut = None
        if items and not kept and prompt.cut and not prompt.bare:  # one item larger than what is left
            kept, size, cut = _cut_best(items, render, cap, prompt.score, self.scale)
        if size > cap or not (kept or prompt.bare):
            return Fitted([], [], cap, refused=self.refusal(prompt, cap))
        return Fitted(render(kept), kept, cap, len(items) - len(kept), cut)

    def each(self, items: Sequence[T], render: Callable[[T], str], score: Callable[[T], float] = _score) -> list:
        """One call per item (LongRAG's per-passage filter): (item, its cost as its allowance), best
        first while what is left beside the generator's share pays for them (cost None: no budget)."""
        cap, scale = self.cap(Prompt((), render)), self.scale
        ranked = sorted(items, key=lambda i: -score(i))
        costs = [None if cap is None else _model_count(render(item), scale) for item in ranked]
        return [(ranked[i], costs[i]) for i in arithmetic.paid_in_turn(costs, cap)]

    def long_context_room(self, overhead: int) -> int | None:
        """The content tokens (our count) a long-context prompt may hold beside `overhead` tokens of
        instructions within what is left (None: no budget)."""
        return arithmetic.long_context_room(self.cap(Prompt((), str, answers=True)), self.scale, overhead)

    def fallback_shortfall(self, texts: Sequence[str]) -> Shortfall | None:
        """What is left, when it is less than the smallest long-context prompt that reads more than
        the `texts` retrieval found (None: it is not)."""
        read = sum(default_counter().count_many(list(texts)))
        rest = None if self.left is None else self.left - self.held  # the re-ask's tokens are not the fallback's
        short = arithmetic.fallback_shortfall(rest, self.long_context, self.granularity, read)
        return None if short is None else Shortfall(short[0], short[1], read)


@dataclass(frozen=True)
class Shortfall:
    """A long-context fallback the question budget cannot pay for: what is `left`, the `smallest`
    prompt that reads more than retrieval found, and the tokens retrieval found (`read`)."""

    left: int
    smallest: int
    read: int


@dataclass(frozen=True)
class LongContext:
    """What a long-context prompt may hold, in content tokens (our count): the model's `window` less
    the answer's cap (`answer_cap`) and the prompt's instructions, within what the question budget
    leaves; made smaller when the model's server counts more than we do."""

    window: int
    answer_cap: int

    def room(self, budget: Budget, question: str) -> int:
        """The content tokens a long-context prompt for `question` may hold within `budget`."""
        fixed = arithmetic.long_context_fixed(default_counter().count(question))
        return arithmetic.window_room(self.window, self.answer_cap, fixed, budget.long_context_room(fixed))

    def overflows(self, counted: int) -> bool:
        """Whether a prompt the server counts as `counted` tokens leaves no room for the answer."""
        return arithmetic.over_window(counted, self.answer_cap, self.window)

    def recounted(self, room: int, counted: int) -> int:
        """`room` made smaller by the server's count of the prompt it gave (`counted`)."""
        return arithmetic.counted_room(room, counted, self.window, self.answer_cap)

    def refused(self, room: int, counted: int | None, context_size: int | None) -> int:
        """`room` made smaller after the server refused the prompt as too long (its numbers, where it
        gave them: the prompt's `counted` tokens, its `context_size`)."""
        return arithmetic.refused_room(room, counted, context_size, self.window, self.answer_cap)


@dataclass(frozen=True)
class Room:
    """The content `tokens` (our count) a prompt sized by the model's window may hold, as the driver
    gives it to the node that fills it (llm/window.py), and how texts fill it."""

    tokens: int

    def holds(self, sizes: Sequence[int], each: int = 0) -> bool:
        """Whether whole texts of these sizes (each with `each` tokens around it) fit."""
        return arithmetic.fits_whole(sizes, self.tokens, each)

    def fill(self, sizes: Sequence[int], each: int) -> tuple[int, int]:
        """(how many of the texts, best first, fit, their tokens): the first that does not ends it."""
        return arithmetic.fill_in_order(sizes, self.tokens, each)


def _cut_best(
    items: list[T], render: Callable[[list[T]], list[BaseMessage]], cap: int, score: Callable[[T], float], scale: float
) -> tuple[list[T], int, int | None]:
    """(the best item with its text cut to fit `cap`, the prompt's size, the tokens it was cut to)."""
    best = max(items, key=score)

    def with_text(tokens: int) -> list[T]:
        return [{**best, "text": cut_to(best["text"], tokens)}]  # type: ignore[list-item]

    # the tokens left beside the prompt with this item's label and no text
    room = arithmetic.text_room(cap, scale, prompt_tokens(render([{**best, "text": ""}])))
    found = arithmetic.cut_until_fits(room, lambda tokens: _model_count(render(with_text(tokens)), scale), cap)
    if found is None:
        return [], cap + 1, None
    tokens, size = found
    return with_text(tokens), size, tokens
