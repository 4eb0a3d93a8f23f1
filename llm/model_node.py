"""A node that calls the model, runnable both ways: `graph.invoke` and `graph.ainvoke`.

A model node is written once, as a generator: its own work (settings, prompt, parsing the reply)
is plain code, and each model call is a `yield`:

    reply = yield ask(settings, "generate", Prompt(passages, render, answers=True), max_tokens=...)

The driver owns the question budget (llm/budget.py `Budget`): a node says what it would send (a
`Prompt`: the items, how to render them, what to keep back for the answer; or fixed messages) and
the driver fits it to what is left, gives the call that as its allowance and hands back, on the
reply, what was kept (`reply.kept`, `reply.dropped`, `reply.cut`). When not even the smallest prompt
fits, nothing is sent and `Unaffordable` (an `LLMError`) is raised at the `yield`, so the node
catches it where it asked, as it catches a failed call, and degrades as its paper says. A node that
reads as much as the model's window holds (the long-context reader) yields a `Window` instead: the
driver sizes its room (llm/window.py), and a call the server refuses as longer than the window is
fitted again smaller and retried once, within the budget: the driver's rule, not the node's. The driver
gives every call the run's deadline (the state's `deadline_at`) and puts the usage records of every
call the node made on the ledger (its update's `usage`), so a node passes neither; if the node's own
code raises, the exception carries those records (`spent`) for the graph's node wrapper
(graph/node.py) to keep. `model_node` turns such a generator into the node the graph runs:
- sync (`invoke`, the CLI): the node's thread makes each call (`call_llm`);
- async (`ainvoke`, `astream`, the LangGraph server): the node's own work runs in a worker thread
  and each call is awaited on the event loop (`acall_llm`), so a run waiting on the model holds no
  thread. Measured on the server with 16 runs over 8 documents (bench/server_concurrency.py,
  bench/README.md): with sync nodes, runs queue for threads instead of for the model.
Hand-written because LangGraph takes a node as one sync or one async function, and a node that is
both would otherwise be written twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableLambda
from langgraph.runtime import get_runtime

from .budget import Budget, Fitted, Later, Prompt, Room, Shortfall
from .calls import LLMError, Reply, Unaffordable, acall_llm, call_llm
from .models import ModelSpec
from .window import Window, fit_window, refit_window

__all__ = [
    "LLMError",
    "Later",
    "ModelCall",
    "ModelSteps",
    "Prompt",
    "Room",
    "Unaffordable",
    "Window",
    "ask",
    "long_context_shortfall",
    "model_node",
    "paid_tasks",
]


class RunSpec(ModelSpec, Protocol):
    """What the driver reads of a run's settings (`longqa.contracts.settings.Settings`): the model's,
    and the question budget a call works within before the organizer's plan shares it."""

    @property
    def question_limit(self) -> int | None:
        """The run's question budget in input tokens (None: no limit)."""
        ...


@dataclass(frozen=True)
class ModelCall:
    """What a model node asks for: the prompt to fit and `call_llm`'s other arguments; `send` False:
    fitted only, not sent (what the model would be given, where there is no model)."""

    spec: RunSpec
    node: str
    prompt: Prompt | Window
    options: dict[str, Any]  # max_tokens, schema
    send: bool = True


def ask(
    spec: RunSpec, node: str, prompt: Prompt | Window | Sequence[BaseMessage], send: bool = True, **options: Any
) -> ModelCall:
    """The model call a node yields: a `Prompt` the driver fits to the question budget, a `Window`
    it sizes by the model's window too, or fixed messages (sent as they are, keeping the generator's
    share). The reply (or an LLMError, an `Unaffordable` one when nothing fits) comes back at the
    yield; with `send` False, the reply is empty and holds only what was fitted."""
    fitted = prompt if isinstance(prompt, Prompt | Window) else Prompt.fixed(list(prompt))
    return ModelCall(spec, node, fitted, options, send)


ModelSteps = Generator[ModelCall, Reply, dict]


@dataclass(frozen=True)
class _Done:
    update: dict


def _advance(step: Callable[..., ModelCall], *args: Any) -> ModelCall | _Done:
    """One stretch of the node's own work, up to its next model call or its end (a StopIteration
    cannot cross a Future, so the end comes back as `_Done`)."""
    try:
        return step(*args)
    except StopIteration as done:
        return _Done(done.value)


def _spent(update: dict, ledger: list[dict]) -> dict:
    return {**update, "usage": ledger} if ledger else update


def _budget(call: ModelCall, state: Any, ledger: list[dict]) -> Budget:
    return Budget.of(state, call.spec.question_limit, ledger)


def _fitted(call: ModelCall, state: Any, ledger: list[dict]) -> Fitted:
    """The call's prompt fitted to what the state's budget leaves after this node's calls so far."""
    if isinstance(call.prompt, Window):
        cap = call.options["max_tokens"]
        return fit_window(call.prompt, call.node, call.spec, cap, _budget(call, state, ledger), call.send)
    fitted = _budget(call, state, ledger).fit(call.prompt)
    if fitted.refused is not None:
        raise Unaffordable(f"{call.node}: {fitted.refused}", fitted.allowance)
    return fitted


def _refitted(call: ModelCall, state: Any, ledger: list[dict], refused: Fitted, error: LLMError) -> Fitted | None:
    """The driver's rule for a call the server refused as longer than the model's window: a prompt
    sized by the window (`Window`) is fitted again smaller, by the server's numbers, and retried once
    within what the budget leaves (the ledger holds the refused attempt). None: no retry."""
    if not isinstance(call.prompt, Window):
        return None
    cap = call.options["max_tokens"]
    return refit_window(call.prompt, call.node, call.spec, cap, _budget(call, state, ledger), refused, error)


def _options(call: ModelCall, fitted: Fitted, state: Any) -> dict[str, Any]:
    deadline_at = state.get("deadline_at") if isinstance(state, dict) else None
    return {"deadline_at": deadline_at, "allowance": fitted.allowance, **call.options}


def _kept(reply: Reply, fitted: Fitted) -> Reply:
    kept = {"kept": fitted.kept, "dropped": fitted.dropped, "cut": fitted.cut}
    return replace(reply, **kept, chosen=fitted.chosen, notes=list(fitted.notes))


def _failed(error: LLMError, fitted: Fitted | None) -> LLMError:
    """`error` with what the prompt it was asked with held (nothing, where it was not fitted)."""
    error.kept = fitted.kept if fitted is not None else []
    error.chosen = fitted.chosen if fitted is not None else None
    error.notes = list(fitted.notes) if fitted is not None else []
    return error


def _made(call: ModelCall, state: Any, ledger: list[dict]) -> Reply | LLMError:
    """One call of the node in this thread, fitted and made with `call_llm` (refitted and made again
    where the driver's rule says): its reply, or the error the node is given at its yield."""
    fitted = None
    try:
        fitted = _fitted(call, state, ledger)
        retries = 1  # a prompt refused as over the model's window: once more, smaller
        while call.send:
            try:
                reply = call_llm(call.spec, call.node, fitted.messages, **_options(call, fitted, state))
            except LLMError as e:
                ledger += e.usage
                smaller = _refitted(call, state, ledger, fitted, e) if retries else None
                if smaller is None:
                    raise
                fitted, retries = smaller, retries - 1
                continue
            ledger += reply.usage
            return _kept(reply, fitted)
        return _kept(Reply("", []), fitted)
    except LLMError as e:
        return _failed(e, fitted)


async def _amade(call: ModelCall, state: Any, ledger: list[dict]) -> Reply | LLMError:
    """`_made` on the event loop: the fitting (which may ask the model's server to count) in worker
    threads, each attempt awaited (`acall_llm`)."""
    fitted = None
    try:
        fitted = await asyncio.to_thread(_fitted, call, state, ledger)
        retries = 1
        while call.send:
            try:
                reply = await acall_llm(call.spec, call.node, fitted.messages, **_options(call, fitted, state))
            except LLMError as e:
                ledger += e.usage
                smaller = await asyncio.to_thread(_refitted, call, state, ledger, fitted, e) if retries else None
                if smaller is None:
                    raise
                fitted, retries = smaller, retries - 1
                continue
            ledger += reply.usage
            return _kept(reply, fitted)
        return _kept(Reply("", []), fitted)
    except LLMError as e:
        return _failed(e, fitted)


def run_steps(steps: ModelSteps, state: Any = None) -> dict:
    """Drive a model node in this thread: each call fitted to the budget and made with `call_llm`."""
    ledger: list[dict] = []
    try:
        call = _advance(next, steps)
        while isinstance(call, ModelCall):
            made = _made(call, state, ledger)
            call = _advance(steps.throw, made) if isinstance(made, LLMError) else _advance(steps.send, made)
    except Exception as e:
        e.spent = ledger  # type: ignore[attr-defined]
        raise
    return _spent(call.update, ledger)


async def arun_steps(steps: ModelSteps, state: Any = None) -> dict:
    """Drive a model node on the event loop: its work (and the prompt's fitting, which may ask the
    model's server to count) in worker threads, each call awaited."""
    ledger: list[dict] = []
    try:
        call = await asyncio.to_thread(_advance, next, steps)
        while isinstance(call, ModelCall):
            made = await _amade(call, state, ledger)
            step = steps.throw if isinstance(made, LLMError) else steps.send
            call = await asyncio.to_thread(_advance, step, made)
    except Exception as e:
        e.spent = ledger  # type: ignore[attr-defined]
        raise
    return _spent(call.update, ledger)


def paid_tasks(
    state: Any, items: Sequence[Any], task: Callable[[Any], dict], render: Callable[[dict], str]
) -> list[dict]:
    """The `Send` tasks of a model node that runs once per item (LongRAG's per-passage filter): best
    item first while what the question budget leaves beside the generator's share pays for them.
    A Send task is its own state, so each carries what the driver reads there: its cost as its
    `allowance` (None: no budget) and the run's `deadline_at`."""
    paid = Budget.of(state).each(items, lambda item: render(task(item)))
    deadline_at = state.get("deadline_at")
    return [{**task(item), "allowance": cost, "deadline_at": deadline_at} for item, cost in paid]


def long_context_shortfall(state: Any, texts: Sequence[str]) -> Shortfall | None:
    """Whether what the question budget leaves is too little for a long-context prompt that reads more
    than the `texts` retrieval found (Self-Route's fallback): what is left and that prompt's size, or
    None when it is not."""
    return Budget.of(state).fallback_shortfall(texts)


def model_node(node: Callable[..., ModelSteps]) -> RunnableLambda:
    """The graph's node for a generator `node(state, runtime)`: sync and async."""

    def run(state: Any) -> dict:
        return run_steps(node(state, get_runtime()), state)

    async def arun(state: Any) -> dict:
        return await arun_steps(node(state, get_runtime()), state)

    return RunnableLambda(run, afunc=arun, name=node.__name__)
