"""A prompt sized by the model's window as well as by the question budget: the long-context reader's
(Self-Route's second step), which reads as much of the documents as fits.

The node declares it (`Window`: how to choose its items for a room of so many tokens, how to render
them, the question); the model-node driver (llm/model_node.py) sizes the room: the model's window
less the answer's cap and the prompt's fixed part, within what the question budget leaves
(`fit_window`), fitted again by the model server's own count where that count is over the window;
and, the driver's rule for any call the server refuses as longer than its window, once more smaller
by the numbers the server gave, within the budget (`refit_window`). The node only fills the room
it is given (`Room`); the sums are `longqa.llm.budget`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from langchain_core.messages import HumanMessage

from .budget import Budget, Fitted, LongContext, Prompt, Room
from .calls import LLMError
from .endpoint import count_tokens
from .models import ModelSpec, context_window, speaks_openai


@dataclass(frozen=True)
class Window:
    """What a node that reads as much as the model's window holds would send: `select(room)` chooses
    its items for a `Room` and says how they were chosen, `render(items)` writes the prompt, and
    `question` is the prompt's part besides its instructions and its items. Its call gives the answer:
    nothing is kept back for the generator."""

    select: Callable[[Room], tuple[list, str]]
    render: Callable[[list], str]
    question: str


def fit_window(window: Window, node: str, spec: ModelSpec, answer_cap: int, budget: Budget, sent: bool) -> Fitted:
    """The window prompt for its first attempt: the room the window and `budget` leave it, fitted
    again when the model's server (where it can count, and the prompt is `sent`) counts it over the
    window."""
    limits = LongContext(context_window(spec), answer_cap)
    room = limits.room(budget, window.question)
    fitted = _filled(window, room, budget)
    served = count_tokens(spec.base_url, _text(fitted)) if sent and spec.base_url and speaks_openai(spec) else None
    if served is not None and limits.overflows(served):  # the server counts more than we do: fit its count
        note = f"{node}: the server counts {served:,} prompt tokens, over its window; reselected"
        fitted = replace(_filled(window, limits.recounted(room, served), budget), notes=(note,))
    return fitted


def refit_window(
    window: Window, node: str, spec: ModelSpec, answer_cap: int, budget: Budget, refused: Fitted, error: LLMError
) -> Fitted | None:
    """After `refused` was refused, a smaller prompt by what the server said of it (its count, its
    context size) within what `budget` leaves; None unless the refusal was for the window's length."""
    if error.kind != "context_length" or refused.room is None:
        return None
    limits = LongContext(context_window(spec), answer_cap)
    smaller = _filled(window, limits.refused(refused.room, error.prompt_tokens, error.context_size), budget)
    note = f"{node}: the server refused the prompt as too long; retrying with {smaller.chosen}"
    return replace(smaller, notes=(*refused.notes, note))


def _filled(window: Window, room: int, budget: Budget) -> Fitted:
    """The prompt holding what the node chose for `room` tokens, with what `budget` leaves its call."""
    items, chosen = window.select(Room(room))
    messages = [HumanMessage(window.render(items))]
    allowance = budget.fit(Prompt.fixed(messages, answers=True)).allowance
    return Fitted(messages, items, allowance, chosen=chosen, room=room)


def _text(fitted: Fitted) -> str:
    content = fitted.messages[0].content
    return content if isinstance(content, str) else str(content)
