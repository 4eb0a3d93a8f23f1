"""A node that calls the model, runnable both ways: `graph.invoke` and `graph.ainvoke`.

A model node is written once, as a generator: its own work (settings, prompt, parsing the reply)
is plain code, and each model call is a `yield`:

    reply = yield ask(settings, "generate", [HumanMessage(prompt)], max_tokens=..., deadline_at=...)

An `LLMError` is raised at the `yield`, so the node catches it where it asked. The driver gives
every call the run's deadline (the state's `deadline_at`) and puts the usage records of every call
the node made on the ledger (its update's `usage`), so a node neither passes one nor returns the
other; if the node's own code raises, the exception carries those records (`spent`) for the graph's
node wrapper (graph/node.py) to keep. `model_node` turns such a generator into the node the graph runs:
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
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableLambda
from langgraph.runtime import get_runtime

from .calls import LLMError, Reply, acall_llm, call_llm
from .models import ModelSpec


@dataclass(frozen=True)
class ModelCall:
    """What a model node asks for: `call_llm`'s arguments."""

    spec: ModelSpec
    node: str
    messages: list[BaseMessage]
    options: dict[str, Any]  # max_tokens, schema, deadline_at


def ask(spec: ModelSpec, node: str, messages: list[BaseMessage], **options: Any) -> ModelCall:
    """The model call a node yields; the reply (or an LLMError) comes back at the yield."""
    return ModelCall(spec, node, messages, options)


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


def _options(call: ModelCall, deadline_at: float | None) -> dict[str, Any]:
    return {"deadline_at": deadline_at, **call.options}


def _spent(update: dict, ledger: list[dict]) -> dict:
    return {**update, "usage": ledger} if ledger else update


def run_steps(steps: ModelSteps, deadline_at: float | None = None) -> dict:
    """Drive a model node in this thread: each call made with `call_llm`."""
    ledger: list[dict] = []
    try:
        call = _advance(next, steps)
        while isinstance(call, ModelCall):
            try:
                reply = call_llm(call.spec, call.node, call.messages, **_options(call, deadline_at))
            except LLMError as e:
                ledger += e.usage
                call = _advance(steps.throw, e)
            else:
                ledger += reply.usage
                call = _advance(steps.send, reply)
    except Exception as e:
        e.spent = ledger  # type: ignore[attr-defined]
        raise
    return _spent(call.update, ledger)


async def arun_steps(steps: ModelSteps, deadline_at: float | None = None) -> dict:
    """Drive a model node on the event loop: its work in worker threads, each call awaited."""
    ledger: list[dict] = []
    try:
        call = await asyncio.to_thread(_advance, next, steps)
        while isinstance(call, ModelCall):
            try:
                reply = await acall_llm(call.spec, call.node, call.messages, **_options(call, deadline_at))
            except LLMError as e:
                ledger += e.usage
                call = await asyncio.to_thread(_advance, steps.throw, e)
            else:
                ledger += reply.usage
                call = await asyncio.to_thread(_advance, steps.send, reply)
    except Exception as e:
        e.spent = ledger  # type: ignore[attr-defined]
        raise
    return _spent(call.update, ledger)


def _deadline(state: Any) -> float | None:
    return state.get("deadline_at") if isinstance(state, dict) else None


def model_node(node: Callable[..., ModelSteps]) -> RunnableLambda:
    """The graph's node for a generator `node(state, runtime)`: sync and async."""

    def run(state: Any) -> dict:
        return run_steps(node(state, get_runtime()), _deadline(state))

    async def arun(state: Any) -> dict:
        return await arun_steps(node(state, get_runtime()), _deadline(state))

    return RunnableLambda(run, afunc=arun, name=node.__name__)
