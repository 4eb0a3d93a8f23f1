"""The agent example end to end over the real wire: `examples/agent_with_tool.py`'s `main` builds a
`create_agent` loop around longqa's tool with `ChatOpenAI` pointed at the OpenAI-compatible stub,
which asks for the tool (a real `tool_calls` reply), then answers the user from the tool's result.
longqa's own graph calls the same stub (without tools) for its generator. The stub's replies are
scripted, not a language model's: this checks the loop, not answer quality. Also the tool's async
path, under the same blocking-call detector `langgraph dev` uses."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from .openai_stub import OpenAIStub, content_text, scripted_reply_fn
from .test_agent_embedding import CARTOGRAPHER_Q, FACTS, document_text

pytestmark = pytest.mark.integration


def agent_turns(body: dict) -> dict | None:
    """The agent's model: ask longqa's tool once, with the user's question."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        return None
    question = next(content_text(m["content"]) for m in body["messages"] if m.get("role") == "user")
    return {"name": body["tools"][0]["function"]["name"], "arguments": {"question": question}}


def replies(messages: list[dict]) -> str:
    """After the tool: the agent quotes the tool's answer line; otherwise longqa's scripted replies."""
    tool = next((content_text(m["content"]) for m in messages if m.get("role") == "tool"), None)
    if tool is None:
        return scripted_reply(messages)
    answer = next(line for line in tool.splitlines() if line.startswith("Answer:"))
    return f"From your documents: {answer.removeprefix('Answer:').strip()}"


scripted_reply = scripted_reply_fn()


def test_the_agent_example_runs_end_to_end_over_the_wire(tmp_path, monkeypatch, capsys):
    from examples import agent_with_tool

    doc = tmp_path / "yearbook.md"
    doc.write_text(document_text(list(FACTS.values())), "utf-8")
    with OpenAIStub(reply_fn=replies, tool_fn=agent_turns) as stub:
        monkeypatch.setenv("LONGQA_MODEL", "openai:stub-model")
        monkeypatch.setenv("LONGQA_BASE_URL", stub.base_url)
        monkeypatch.setenv("LONGQA_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("LONGQA_STRATEGY", "rag")
        monkeypatch.delenv("LONGQA_SERVER", raising=False)
        assert agent_with_tool.main([str(doc), CARTOGRAPHER_Q]) == 0
        bodies = stub.requests
    printed = capsys.readouterr().out
    offered = [b for b in bodies if b.get("tools")]
    # the agent's model: asked with the tool on offer, answered with a tool call, then asked again with its result
    assert len(offered) == 2 and offered[0]["tools"][0]["function"]["name"] == "ask_documents"
    tool_message = next(m for m in offered[1]["messages"] if m.get("role") == "tool")
    assert "Bastien Okafor" in tool_message["content"] and "yearbook.md" in tool_message["content"]
    # longqa's generator went over the same wire, without tools, between the two
    assert any(not b.get("tools") for b in bodies)
    assert printed.strip().startswith("From your documents:") and "Bastien Okafor" in printed


def test_the_tool_has_a_real_async_path_that_never_blocks_the_loop(tmp_path):
    """`ainvoke` runs the graph's `ainvoke` (model calls awaited, other work in worker threads):
    under blockbuster, which `langgraph dev` uses to refuse blocking calls in the event loop,
    embedding a new document and answering raise nothing."""
    blockbuster = pytest.importorskip("blockbuster")
    from longqa.contracts.settings import Settings
    from longqa.runner.agent_tool import longqa_tool

    doc = tmp_path / "yearbook.md"
    doc.write_text(document_text(list(FACTS.values())), "utf-8")
    tool = longqa_tool([str(doc)], Settings(model="scripted", home=tmp_path / "home", strategy="rag"))
    call = {"name": "ask_documents", "args": {"question": CARTOGRAPHER_Q}, "id": "call_1", "type": "tool_call"}

    async def ask() -> object:
        with blockbuster.blockbuster_ctx():
            with pytest.raises(blockbuster.BlockingError):  # the detector is on: a blocking call is caught
                time.sleep(0.001)
            return await tool.ainvoke(call)

    message = asyncio.run(ask())
    assert "Bastien Okafor" in message.content and message.artifact["status"] == "answered"
    assert json.dumps(message.artifact["citations"])  # the artifact is the graph's JSON-able output
