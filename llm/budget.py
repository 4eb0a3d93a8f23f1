"""What a question's model calls cost in input tokens, before they are made: the tokens each prompt
holds besides its evidence (`Overheads`), what the ledger has spent (`spent`), how the model's own
counts compare with ours (`calibration`), and a prompt cut to a number of tokens (`fit`).

Where the model's server can count (llama.cpp: its chat template applied, then its own tokenizer), a
prompt's size is the server's count, so a call is sized by exactly what it will be charged, whatever
the model's tokenizer; the node driver turns that on for a node's work (`counted_by`). Elsewhere
counts are the offline counter's (retrieval/tokens.py) plus MESSAGE_TOKENS per chat message for the
template around it, and a server that counts more than we do is caught by `calibration` after its
first reply. The plan that divides a question's budget among its calls is `longqa.contracts.budget`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from langchain_core.messages import BaseMessage, HumanMessage

from longqa.prompts import generation, longrag, okralong, self_route
from longqa.retrieval.tokens import default_counter

from .endpoint import templated_tokens
from .ledger import Overheads
from .ledger import calibration as calibration  # the ledger's readings, for callers of this module
from .ledger import spent as spent
from .models import ModelSpec, speaks_openai

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
    return sum(default_counter().count_many(text)) + MESSAGE_TOKENS * len(text)


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
    kept = list(items)
    size = round(prompt_tokens(render(kept)) * scale)
    while kept and size > cap:
        kept.remove(min(kept, key=score))
        size = round(prompt_tokens(render(kept)) * scale)
    return kept, size
