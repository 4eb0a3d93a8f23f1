"""longqa embedded in larger LangChain/LangGraph programs, offline (no server, no network):

- `longqa_tool` driven by a real `create_agent` loop with a fake tool-calling chat model;
- `examples/chat_graph.py`: the whole longqa graph as a subgraph node (small talk vs documents),
  with the parent's run settings reaching the nodes inside;
- the CLI's `--thread` conversations (`longqa.runner.ask.run_question` with the SQLite checkpointer);
- the examples' `main` entry points.

Every answer comes from the scripted model (`model="scripted"`), which is not a language model:
these tests check wiring, not answer quality.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from longqa.contracts.settings import Settings

FACTS = {
    "observatory": "The observatory on Mount Tessaly was founded by the astronomer Orla Venndt in 1911.",
    "cartographer": "The chief cartographer of the Salt Registry is Bastien Okafor.",
    "ferry": "The night ferry Gullwing carries exactly 214 passengers.",
    "vault": "The vault code word of the Salt Registry is PELICAN-7731.",
}
OBSERVATORY_Q = "Who founded the observatory on Mount Tessaly?"
CARTOGRAPHER_Q = "Who is the chief cartographer of the Salt Registry?"

_SUBJECTS = [
    "The council",
    "The harbour office",
    "A survey team",
    "The planning board",
    "An inspector",
    "The works department",
    "The tourism bureau",
    "A citizens panel",
    "The water board",
]
_VERBS = ["reviewed", "approved", "postponed", "discussed", "inspected", "funded", "audited", "repainted"]
_OBJECTS = [
    "the drainage scheme",
    "the school roof",
    "the cycle lanes",
    "the market hall",
    "the tram depot",
    "the allotment gardens",
    "the river steps",
    "the bus shelters",
    "the library annex",
]
_TAILS = [
    "in the eastern ward",
    "before the winter recess",
    "after a long debate",
    "with local volunteers",
    "within the agreed budget",
    "during the spring session",
    "without any objections",
]


def document_text(facts: list[str], sections: int = 10, seed: int = 3) -> str:
    """Deterministic filler (vocabulary disjoint from the questions) with the facts planted apart."""
    rng = random.Random(seed)
    pending = list(facts)
    blocks = ["# Salt Registry yearbook"]
    for i in range(sections):
        sentences = [
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_TAILS)}."
            for _ in range(12)
        ]
        if i % 2 == 1 and pending:
            sentences.insert(5, pending.pop(0))
        blocks.append(f"## Section {i + 1}\n\n" + " ".join(sentences))
    return "\n\n".join(blocks) + "\n"


@pytest.fixture(autouse=True)
def not_a_server(monkeypatch):
    """These are library callers: no server lock, no documents root, no model from the environment."""
    for name in ("LONGQA_SERVER", "LONGQA_DOCUMENTS_ROOT", "LONGQA_MODEL", "LONGQA_STRATEGY", "LONGQA_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One index home for the module, so the document is embedded once per granularity."""
    return tmp_path_factory.mktemp("embedding-home")


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("embedding-docs") / "yearbook.md"
    path.write_text(document_text(list(FACTS.values())), "utf-8")
    return path


def scripted_settings(home: Path, **fields: Any) -> Settings:
    return Settings(model="scripted", home=home, **fields)


# -- a real agent loop around the tool --------------------------------------------------------


class ToolCallingFake(BaseChatModel):
    """A fake chat model for `create_agent`: replies with the given AIMessages in order (the first
    one asks for the tool) and records the messages it was shown on each call."""

    replies: list[AIMessage]
    _seen: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    @property
    def seen(self) -> list[list[BaseMessage]]:
        return self._seen

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self._seen.append(list(messages))
        if len(self._seen) > len(self.replies):
            raise AssertionError(f"the agent called the model {len(self._seen)} times; {len(self.replies)} expected")
        return ChatResult(generations=[ChatGeneration(message=self.replies[len(self._seen) - 1])])


def test_tool_in_a_real_agent_loop(doc, home):
    from langchain.agents import create_agent

    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(default_documents=[str(doc)], settings=scripted_settings(home))
    fake = ToolCallingFake(
        replies=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "ask_documents", "args": {"question": OBSERVATORY_Q}, "id": "call_1", "type": "tool_call"}
                ],
            ),
            AIMessage(content="Orla Venndt founded it (see the cited passage)."),
        ]
    )
    agent = create_agent(fake, tools=[tool])
    result = agent.invoke({"messages": [HumanMessage(OBSERVATORY_Q)]})

    messages = result["messages"]
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    tool_message = tool_messages[0]
    assert tool_message.tool_call_id == "call_1" and tool_message.name == "ask_documents"
    assert tool_message.status != "error", tool_message.content
    content = tool_message.content
    assert content.startswith("Answer: ") and "Orla Venndt" in content, content
    assert f"{doc} chars " in content, content  # a citation line: [E<n>] <source> chars a-b: text
    assert "[E" in content

    artifact = tool_message.artifact
    assert isinstance(artifact, dict)
    assert artifact["status"] == "answered"
    assert "Orla Venndt" in artifact["answer"]
    assert artifact["citations"] and all(c["source"] == str(doc) for c in artifact["citations"])
    assert "scripted" in artifact["model"]
    assert artifact["usage"] and artifact["totals"]["calls"] == len(artifact["usage"])

    # the agent finished: the model saw the tool's result and its final message ends the run
    assert len(fake.seen) == 2
    assert any(isinstance(m, ToolMessage) and "Orla Venndt" in m.content for m in fake.seen[1])
    assert isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls
    assert messages[-1].content.startswith("Orla Venndt founded it")


def test_parallel_tool_calls_on_a_fresh_home(doc, tmp_path):
    """An agent asking three things at once: the tool node runs the calls in parallel threads, each
    a whole graph run on a new home; each answer is its own call's."""
    from langchain.agents import create_agent

    from longqa.runner.agent_tool import longqa_tool

    questions = {
        "call_a": (OBSERVATORY_Q, "Orla Venndt"),
        "call_b": (CARTOGRAPHER_Q, "Bastien Okafor"),
        "call_c": ("How many passengers does the night ferry Gullwing carry?", "214"),
    }
    tool = longqa_tool(default_documents=[str(doc)], settings=scripted_settings(tmp_path / "fresh-home"))
    fake = ToolCallingFake(
        replies=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "ask_documents", "args": {"question": q}, "id": call_id, "type": "tool_call"}
                    for call_id, (q, _) in questions.items()
                ],
            ),
            AIMessage(content="done"),
        ]
    )
    result = create_agent(fake, tools=[tool]).invoke({"messages": [HumanMessage("three questions")]})
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert answers.keys() == questions.keys()
    for call_id, (question, expected) in questions.items():
        message = answers[call_id]
        assert message.status != "error" and message.artifact["status"] == "answered", message.content
        assert expected in message.artifact["answer"]
        others = [e for c, (_, e) in questions.items() if c != call_id]
        assert not any(o in message.artifact["answer"] for o in others)
        assert all(e["query"] == question for e in message.artifact["evidence"])
    assert result["messages"][-1].content == "done"


def test_concurrent_first_runs_share_one_store(tmp_path):
    """Parallel first runs on a new home (parallel tool calls, a server's first requests) must get
    one index store: each used to build its own, with its own embedded Chroma client on the same
    path, and Chroma failed ("Could not connect to tenant default_tenant", "'RustBindingsAPI'
    object has no attribute 'bindings'")."""
    import threading

    from longqa.services.stores import store_for

    settings = scripted_settings(tmp_path / "race-home")
    n = 8
    barrier = threading.Barrier(n)
    stores, errors = [], []

    def first_run() -> None:
        barrier.wait()
        try:
            store = store_for(settings)
            store.client  # noqa: B018 - opening the embedded Chroma client is the racy part
            stores.append(store)
        except Exception as e:  # collected and asserted below
            errors.append(repr(e))

    threads = [threading.Thread(target=first_run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert len(stores) == n and len({id(s) for s in stores}) == 1


def test_tool_documents_argument_overrides_the_default(doc, home, tmp_path):
    from longqa.runner.agent_tool import longqa_tool

    other = tmp_path / "other.md"
    other.write_text(document_text([FACTS["cartographer"]], seed=11), "utf-8")
    tool = longqa_tool(default_documents=[str(doc)], settings=scripted_settings(home), allowed_roots=[str(tmp_path)])
    message = tool.invoke(
        {
            "type": "tool_call",
            "id": "call_9",
            "name": "ask_documents",
            "args": {"question": CARTOGRAPHER_Q, "documents": [str(other)]},
        }
    )
    assert "Bastien Okafor" in message.content
    assert {c["source"] for c in message.artifact["citations"]} == {str(other)}


def test_tool_reports_input_errors_as_content(home):
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(settings=scripted_settings(home))
    message = tool.invoke(
        {"type": "tool_call", "id": "call_2", "name": "ask_documents", "args": {"question": OBSERVATORY_Q}}
    )
    assert message.content.startswith("longqa error: input: no documents")
    assert message.artifact["status"] == "error"


# -- longqa as a subgraph node ---------------------------------------------------------------


def test_chat_graph_small_talk_skips_the_documents(doc, home):
    from examples.chat_graph import chat_graph

    result = chat_graph.invoke(
        {"messages": [HumanMessage("hello")], "documents": [str(doc)]}, context=scripted_settings(home).model_dump()
    )
    assert [m.type for m in result["messages"]] == ["human", "ai"]
    assert result["messages"][-1].content.startswith("Hello!")
    assert "route" not in result and "status" not in result


@pytest.mark.parametrize(("strategy", "analyzed"), [("adaptive-precise", True), ("rag", False)])
def test_chat_graph_documents_path_gets_the_parent_settings(doc, home, strategy, analyzed):
    from examples.chat_graph import chat_graph

    result = chat_graph.invoke(
        {"messages": [HumanMessage(OBSERVATORY_Q)], "documents": [str(doc)]},
        context=scripted_settings(home, strategy=strategy).model_dump(),
    )
    assert result["status"] == "answered"
    route = result["route"]
    assert route[0] == "prepare" and route[-1] == "respond"
    assert ("analyze" in route) is analyzed and ("retrieve_primary" in route) is analyzed
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and final.name == "longqa"
    assert "Orla Venndt" in final.content
    assert "\n\nSources:\n[E" in final.content and str(doc) in final.content
    assert "scripted" in final.content  # the scripted model's answers are labelled


def test_chat_graph_second_turn_sees_the_first(doc, home):
    """A checkpointed parent: the subgraph's prepare sees the earlier exchange as history."""
    from langgraph.checkpoint.memory import InMemorySaver

    from examples.chat_graph import build_chat_graph

    chat = build_chat_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat-1"}}
    context = scripted_settings(home).model_dump()
    chat.invoke({"messages": [HumanMessage(OBSERVATORY_Q)], "documents": [str(doc)]}, config, context=context)
    result = chat.invoke({"messages": [HumanMessage(CARTOGRAPHER_Q)]}, config, context=context)
    assert [m.type for m in result["messages"]] == ["human", "ai", "human", "ai"]
    assert "Bastien Okafor" in result["messages"][-1].content
    assert result["route"].count("prepare") == 1 and result["route"][-1] == "respond"


# -- the CLI's thread (SQLite checkpointer under the home) -----------------------------------


def test_cli_thread_second_turn_sees_the_first(doc, home, tmp_path):
    from longqa.runner.ask import run_question
    from longqa.runner.threads import thread_checkpointer

    thread_home = tmp_path / "thread-home"
    # the scripted analyzer reply fixes the route (one generate call a turn): threads are the subject here
    # (no question budget: the LLM analyzer's call would leave the follow-up's search only three chunks)
    settings = scripted_settings(thread_home, analyzer="llm", question_budget=0)
    first = run_question([str(doc)], OBSERVATORY_Q, settings, thread="t1", progress=None)
    assert first["status"] == "answered" and "Orla Venndt" in first["answer"]
    assert (thread_home / "threads.sqlite").is_file()

    second = run_question([str(doc)], CARTOGRAPHER_Q, settings, thread="t1", progress=None)
    assert second["status"] == "answered" and "Bastien Okafor" in second["answer"]
    # the follow-up is searched together with the previous question
    assert second["evidence"] and all(e["query"].startswith(OBSERVATORY_Q) for e in second["evidence"])
    # one turn's route and usage only: nothing carried over from the first turn
    for turn in (first, second):
        assert turn["route"].count("prepare") == 1 and turn["route"].count("respond") == 1
        assert turn["route"][0] == "prepare" and turn["route"][-1] == "respond"
        assert turn["totals"]["calls"] == len(turn["usage"])
        assert Counter(r["node"] for r in turn["usage"])["generate"] == 1

    # the checkpoint itself: both exchanges, and the first one as the second turn's history
    from longqa.graph.graph import build_graph

    saver = thread_checkpointer(settings)  # the same one the CLI used: one per database in a process
    state = build_graph().compile(checkpointer=saver).get_state({"configurable": {"thread_id": "t1"}}).values
    assert [m.type for m in state["messages"]] == ["human", "ai", "human", "ai"]
    assert state["history"][0] == f"User: {OBSERVATORY_Q}"
    assert state["history"][1].startswith("Assistant: ") and "Orla Venndt" in state["history"][1]
    assert "Sources:" not in state["history"][1]

    # another thread starts from nothing
    other = run_question([str(doc)], CARTOGRAPHER_Q, settings, thread="t2", progress=None)
    assert all(e["query"] == CARTOGRAPHER_Q for e in other["evidence"])
    assert len(other["usage"]) == len(second["usage"])


# -- the examples' entry points --------------------------------------------------------------


def test_examples_print_usage_without_arguments(capsys):
    from examples import agent_with_tool, chat_graph

    assert agent_with_tool.main([]) == 2
    assert "A LangChain agent that calls longqa as a tool" in capsys.readouterr().out
    assert chat_graph.main([]) == 2
    out = capsys.readouterr().out
    assert "longqa as a subgraph node" in out


def test_agent_example_needs_a_model(doc, capsys):
    from examples import agent_with_tool

    assert agent_with_tool.main([str(doc), OBSERVATORY_Q]) == 2
    assert "set LONGQA_MODEL" in capsys.readouterr().err


def test_agent_example_builds_an_agent_around_the_tool(doc, home):
    from examples.agent_with_tool import build_agent

    fake = ToolCallingFake(
        replies=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "ask_documents", "args": {"question": CARTOGRAPHER_Q}, "id": "call_7", "type": "tool_call"}
                ],
            ),
            AIMessage(content="Bastien Okafor."),
        ]
    )
    agent = build_agent(fake, [str(doc)], scripted_settings(home))
    result = agent.invoke({"messages": [{"role": "user", "content": CARTOGRAPHER_Q}]})
    assert fake.seen[0][0].type == "system" and "ask_documents" in fake.seen[0][0].content
    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert "Bastien Okafor" in tool_message.content
    assert result["messages"][-1].content == "Bastien Okafor."


def test_agent_example_keeps_its_thread_where_longqa_keeps_threads(doc, home, tmp_path):
    from examples.agent_with_tool import build_agent
    from longqa.runner.threads import close_checkpointers, thread_checkpointer

    settings = scripted_settings(tmp_path / "agent-home")
    call = {"name": "ask_documents", "args": {"question": CARTOGRAPHER_Q}, "id": "call_8", "type": "tool_call"}
    fake = ToolCallingFake(replies=[AIMessage(content="", tool_calls=[call]), AIMessage(content="Bastien Okafor.")])
    config = {"configurable": {"thread_id": "agent-1"}}
    build_agent(fake, [str(doc)], settings, checkpointer=thread_checkpointer(settings)).invoke(
        {"messages": [{"role": "user", "content": CARTOGRAPHER_Q}]}, config=config
    )
    close_checkpointers()  # as a new process would: nothing of the first run in memory
    again = build_agent(fake, [str(doc)], settings, checkpointer=thread_checkpointer(settings))
    messages = again.get_state(config).values["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    assert (tmp_path / "agent-home" / "threads.sqlite").is_file() and "Bastien Okafor" in messages[2].content
    close_checkpointers()


def test_chat_example_main_answers_with_the_scripted_model(doc, monkeypatch, capsys):
    monkeypatch.setenv("LONGQA_MODEL", "scripted")
    from examples import chat_graph

    assert chat_graph.main([str(doc), OBSERVATORY_Q]) == 0
    out = capsys.readouterr().out
    assert "Orla Venndt" in out and "Sources:" in out and "scripted" in out
