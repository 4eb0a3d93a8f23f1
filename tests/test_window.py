"""The model-node driver's rule for a prompt sized by the model's window (llm/window.py,
llm/model_node.py): the node declares a `Window` (how to fill a room, how to render it) and the driver
sizes the room; a call the server refuses as longer than the window is fitted again smaller, by the
numbers the server gave, and retried once, within the budget, with the ledger charged for both. The
long-context reader's own tests over the wire are tests/test_model_faults.py's section 4."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.llm import model_node
from longqa.llm.calls import LLMError, Reply
from longqa.llm.model_node import Prompt, Room, Window, arun_steps, ask, run_steps

SETTINGS = Settings(model="scripted", context_window=2000, question_budget=0)
WORD = 10  # each item is one word of WORD tokens, to the test's select


def select(room: Room) -> tuple[list[int], str]:
    items = list(range(room.tokens // WORD))
    return items, f"{len(items)} items for {room.tokens} tokens"


def render(items: list[int]) -> str:
    return " ".join(f"w{i}" for i in items)


def reading_node(state: dict, window: Window | None = None, send: bool = True):
    """A node that reads as much as the window holds and reports what the driver gave it."""
    try:
        reply = yield ask(SETTINGS, "long_context", window or Window(select, render, "q?"), send=send, max_tokens=100)
    except LLMError as e:
        return {"error": str(e), "kept": e.kept, "chosen": e.chosen, "notes": e.notes}
    return {"text": reply.text, "kept": reply.kept, "chosen": reply.chosen, "notes": reply.notes}


def refusing(times: int, asked: list):
    """A stand-in for the call layer: the server refuses the first `times` prompts as too long."""

    def call(spec, node, messages, **options):
        asked.append(messages[0].content)
        if len(asked) <= times:
            record = {"node": node, "input_tokens": 3000, "outcome": "context_length"}
            raise LLMError("exceeds the available context size", [record], "context_length", 3000, 1000)
        return Reply("the keeper", [{"node": node, "input_tokens": 400, "outcome": "ok"}])

    async def acall(spec, node, messages, **options):
        return call(spec, node, messages, **options)

    return call, acall


def drive(monkeypatch, node, times: int, run_async: bool) -> tuple[dict, list]:
    asked: list = []
    call, acall = refusing(times, asked)
    monkeypatch.setattr(model_node, "call_llm", call)
    monkeypatch.setattr(model_node, "acall_llm", acall)
    steps = node({})
    out = asyncio.run(arun_steps(steps, {})) if run_async else run_steps(steps, {})
    return out, asked


@pytest.mark.parametrize("run_async", [False, True])
def test_a_window_prompt_refused_as_too_long_is_refitted_smaller_and_retried(monkeypatch, run_async):
    out, asked = drive(monkeypatch, reading_node, times=1, run_async=run_async)
    assert len(asked) == 2 and len(asked[1]) < len(asked[0])
    assert out["text"] == "the keeper" and out["chosen"].startswith(f"{len(out['kept'])} items")
    assert out["notes"] == [f"long_context: the server refused the prompt as too long; retrying with {out['chosen']}"]
    assert [r["outcome"] for r in out["usage"]] == ["context_length", "ok"]  # both attempts on the ledger


@pytest.mark.parametrize("run_async", [False, True])
def test_a_second_refusal_reaches_the_node_with_what_it_was_asked(monkeypatch, run_async):
    out, asked = drive(monkeypatch, reading_node, times=5, run_async=run_async)
    assert len(asked) == 2  # once more, not again and again
    assert "exceeds the available context size" in out["error"]
    assert out["kept"] and out["chosen"] and "retrying" in out["notes"][-1]
    assert [r["outcome"] for r in out["usage"]] == ["context_length", "context_length"]


def test_a_prompt_not_sized_by_the_window_is_not_retried(monkeypatch):
    """Only a `Window` can be made smaller by the window: another prompt's refusal reaches its node."""

    def node(state):
        try:
            yield ask(SETTINGS, "generate", Prompt([{"text": "x", "score": 1.0}], lambda ps: [HumanMessage("x")]))
        except LLMError as e:
            return {"error": e.kind}
        return {}

    out, asked = drive(monkeypatch, node, times=1, run_async=False)
    assert out["error"] == "context_length" and len(asked) == 1


def test_a_window_prompt_not_sent_holds_what_the_model_would_be_given(monkeypatch):
    out, asked = drive(monkeypatch, lambda state: reading_node(state, send=False), times=0, run_async=False)
    assert asked == [] and out["text"] == "" and "usage" not in out
    # the window (2000) less the answer's cap (100) and the prompt's fixed part: the node filled that room
    assert 0 < len(out["kept"]) * WORD <= 2000 - 100 and out["notes"] == []
