"""A node that calls the model, runnable both ways: `graph.invoke` and `graph.ainvoke`.

A model node is written once, as a generator: its own work (settings, prompt, parsing the reply)
is plain code, and each model call is a `yield`:

    reply = yield ask(settings, "generate", Prompt(passages, render, answers=True), max_tokens=...)

The driver owns the question budget (llm/budget.py `Budget`): a node says what it would send (a
`Prompt`: the items, how to render them, what to keep back for the answer; or fixed messages) and
the driver fits it to what is left, gives the call that as its allowance and hands back, on the
reply, what was kept (`reply.kept`, `reply.dropped`, `reply.cut`). When not even the smallest prompt
fits, nothing is sent and `Unaffordable` (an `LLMError`) is raised at the `yield`, so the node
catches it where it asked, as it catches a failed call, and degrades as its paper says. The driver
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
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableLambda
from langgraph.runtime import get_runtime

from .budget import Budget, Fitted, Prompt
from .calls import LLMError, Reply, Unaffordable, acall_llm, call_llm
from .models import ModelSpec

__all__ = ["LLMError", "ModelCall", "ModelSteps", "Prompt", "Unaffordable", "ask", "model_node", "paid_tasks"]


@dataclass(frozen=True)
class ModelCall:
    """What a model node asks for: the prompt to fit and `call_llm`'s other arguments."""

    spec: ModelSpec
    node: str
    prompt: Prompt
    options: dict[str, Any]  # max_tokens, schema


def ask(spec: ModelSpec, node: str, prompt: Prompt | Sequence[BaseMessage], **options: Any) -> ModelCall:
    """The model call a node yields: a `Prompt` the driver fits to the question budget, or fixed
    messages (sent as they are, keeping the generator's share). The reply (or an LLMError, an
    `Unaffordable` one when nothing fits) comes back at the yield."""
    return ModelCall(spec, node, prompt if isinstance(prompt, Prompt) else Prompt.fixed(list(prompt)), options)


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


def _fitted(call: ModelCall, state: Any, ledger: list[dict]) -> Fitted:
    """The call's prompt fitted to what the state's budget leaves after this node's calls so far."""
    fitted = Budget.of(state, call.spec, ledger).fit(call.prompt)
    if fitted.refused is not None:
        raise Unaffordable(f"{call.node}: {fitted.refused}", fitted.allowance)
    return fitted


def _options(call: ModelCall, fitted: Fitted, state: Any) -> dict[str, Any]:
    deadline_at = state.get("deadline_at") if isinstance(state, dict) else None
    return {"deadline_at": deadline_at, "allowance": fitted.allowance, **call.options}


def _kept(reply: Reply, fitted: Fitted) -> Reply:
    return replace(reply, kept=fitted.kept, dropped=fitted.dropped, cut=fitted.cut)


def run_steps(steps: ModelSteps, state: Any = None) -> dict:
    """Drive a model node in this thread: each call fitted to the budget and made with `call_llm`."""
    ledger: list[dict] = []
    try:
        call = _advance(next, steps)
        while isinstance(call, ModelCall):
            fitted = None
            try:
                fitted = _fitted(call, state, ledger)
                reply = call_llm(call.spec, call.node, fitted.messages, **_options(call, fitted, state))
            except LLMError as e:
                ledger += e.usage
                e.kept = fitted.kept if fitted is not None else []
                call = _advance(steps.throw, e)
            else:
                ledger += reply.usage
                call = _advance(steps.send, _kept(reply, fitted))
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
            fitted = None
            try:
                fitted = await asyncio.to_thread(_fitted, call, state, ledger)
                reply = await acall_llm(call.spec, call.node, fitted.messages, **_options(call, fitted, state))
            except LLMError as e:
                ledger += e.usage
                e.kept = fitted.kept if fitted is not None else []
                call = await asyncio.to_thread(_advance, steps.throw, e)
            else:
                ledger += reply.usage
                call = await asyncio.to_thread(_advance, steps.send, _kept(reply, fitted))
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


def model_node(node: Callable[..., ModelSteps]) -> RunnableLambda:
    """The graph's node for a generator `node(state, runtime)`: sync and async."""

    def run(state: Any) -> dict:
        return run_steps(node(state, get_runtime()), state)

    async def arun(state: Any) -> dict:
        return await arun_steps(node(state, get_runtime()), state)

    return RunnableLambda(run, afunc=arun, name=node.__name__)
