"""The graph's faces: evidence-only runs without a model, the usage ledger, sync and async
invocation, chat input and output, and threads kept by a checkpointer."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver

import longqa.nodes as nodes_package
from longqa.graph.graph import build_graph
from longqa.llm.scripted import LABEL, ScriptedChatModel

KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
BRIDGE_Q = "How long is the Verrin Bridge?"
LLM_NODES = {"analyze", "split_question", "reason_step", "extract", "cot", "filter", "generate", "long_context"}
KIND_TO_NODE = {
    "analyzer": "analyze",
    "splitter": "split_question",
    "reasoner": "reason_step",
    "extractor": "extract",
    "cot": "cot",
    "filter": "filter",
    "generator": "generate",
    "long_context": "long_context",
}


def analyzer_reply(qtype: str, evidence: str = "yes", pattern: str = "same") -> str:
    return json.dumps({"question-type": qtype, "info-type": pattern, "containing": evidence})


# -- no LLM: evidence only ----------------------------------------------------------------------


def test_without_a_model_the_run_is_evidence_only(run_graph):
    out = run_graph(KEEPER_Q, model=None, analyzer="auto")
    assert out["route"] == [
        "prepare",
        "retrieve_primary",
        "analyze",
        "organize",
        "retrieve",
        "process_context",
        "respond",
    ]
    assert out["answer"] is None
    assert out["status"] == "evidence-only"
    assert out["error"] is None
    assert out["evidence"] and out["citations"] == out["evidence"]
    assert out["usage"] == []
    assert out["totals"]["calls"] == 0 and out["totals"]["cost"] == 0
    assert out["analysis"]["backend"] == "local-trained"
    assert out["model"] is None
    message = out["messages"][-1]
    assert isinstance(message, AIMessage)
    assert message.content.startswith("Evidence only (no LLM configured)")
    assert "Sources:" in message.content and "no answer was generated" in message.content
    assert any("Amelie Kortsen" in e["text"] for e in out["evidence"])


def test_without_a_model_split_becomes_direct(run_graph):
    out = run_graph(
        "Which bridge is longer, the Verrin Bridge or the Osterby Bridge?", model=None, strategy="adaptive-precise"
    )
    assert out["plan"]["workflow"] == "direct"
    assert out["route"][-4:] == ["organize", "retrieve", "process_context", "respond"]
    assert out["status"] == "evidence-only" and out["answer"] is None and out["citations"]
    assert out["shown"] == [], "no model read anything"


def test_without_a_model_lc_returns_the_context_it_would_read(run_graph, graph_home):
    out = run_graph(KEEPER_Q, model=None, strategy="lc")
    assert out["plan"]["workflow"] == "long_context"
    assert out["route"][-3:] == ["organize", "long_context", "respond"]
    assert out["status"] == "evidence-only" and out["answer"] is None and not out["usage"]
    assert out["shown"] == [], "no model read anything"
    (span,) = out["evidence"]  # the sample fits the default window: the whole document, unread
    assert span["id"] == "L1" and span["start"] == 0 and span["end"] == len(span["text"])
    assert out["citations"] == out["evidence"]


def test_analyzer_llm_without_a_model_uses_the_local_analyzer(run_graph):
    out = run_graph(KEEPER_Q, model=None, analyzer="llm")
    assert out["analysis"]["backend"] == "local-trained"
    assert "no model is configured" in out["analysis"]["note"]
    assert out["status"] == "evidence-only"


# -- shown: what the model read -------------------------------------------------------------------


def test_shown_holds_the_passages_the_filter_kept_as_the_generator_saw_them(run_graph, scripted):
    prompts: list[str] = []

    def generator(text: str) -> str:
        prompts.append(text)
        return "Amelie Kortsen\nSources: E1"

    def keep_the_keeper(text: str) -> str:
        article = text.split("Given an article:", 1)[1].split("\nQuestion:", 1)[0]
        return json.dumps({"status": "keeper" in article.lower()})

    name, _ = scripted({"filter": keep_the_keeper, "generator": generator})
    out = run_graph(KEEPER_Q, model=name, strategy="longrag")
    kept = [e for e in out["evidence"] if "keeper" in e["text"].lower()]
    assert 0 < len(kept) < len(out["evidence"]), "the filter dropped some passages"
    generated = [s for s in out["shown"] if s["reader"] == "generate"]
    assert [{k: v for k, v in s.items() if k != "reader"} for s in generated] == kept
    # every call that read the passages says so: the CoT read them all, each filter call its own, the
    # extractor the paragraphs of those kept
    assert {s["reader"] for s in out["shown"]} == {"cot", "filter", "extract", "generate"}
    assert sorted(s["id"] for s in out["shown"] if s["reader"] == "filter") == sorted(e["id"] for e in out["evidence"])
    (prompt,) = prompts
    for passage in out["evidence"]:
        assert (passage["text"] in prompt) == (passage in kept)


def test_shown_after_a_fallback_holds_both_readings(run_graph, scripted):
    name, _ = scripted({"generator": "unanswerable", "long_context": "Amelie Kortsen"})
    out = run_graph(KEEPER_Q, model=name, strategy="self-route")
    assert out["route"][-3:] == ["self_route", "long_context", "respond"]
    readers = [s["reader"] for s in out["shown"]]
    assert readers == ["generate"] * len(out["evidence"]) + ["long_context"]
    whole = out["shown"][-1]
    assert (whole["id"], whole["start"], whole["end"]) == ("L1", 0, len(whole["text"]))
    assert out["answer"] == "Amelie Kortsen"


# -- accounting ---------------------------------------------------------------------------------


def test_every_llm_call_leaves_a_usage_record(run_graph, scripted):
    name, model = scripted({"analyzer": analyzer_reply("extractive")})
    out = run_graph(KEEPER_Q, model=name, filter_mode="per-chunk", question_budget=0, extractive_reading="filtered")
    usage, totals = out["usage"], out["totals"]
    assert len(usage) == len(model.calls) > 3
    assert Counter(r["node"] for r in usage) == Counter(KIND_TO_NODE[k] for k in model.calls)
    assert Counter(r["node"] for r in usage) == Counter(n for n in out["route"] if n in LLM_NODES)
    for record in usage:
        assert record["model"] == name
        assert record["estimated"] is True  # the scripted model reports no usage_metadata
        assert record["input_tokens"] > 0 and record["output_tokens"] > 0
    assert totals["calls"] == len(usage)
    assert totals["input_tokens"] == sum(r["input_tokens"] for r in usage)
    assert totals["output_tokens"] == sum(r["output_tokens"] for r in usage)
    assert totals["cost"] == totals["input_tokens"] + 4 * totals["output_tokens"]
    assert totals["estimated"] is True


class MeteredModel(ScriptedChatModel):
    """The scripted replies, with the provider-style usage_metadata a real model returns."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        generation = result.generations[0]
        generation.message = AIMessage(
            content=generation.message.content,
            usage_metadata={"input_tokens": 123, "output_tokens": 7, "total_tokens": 130},
        )
        return result


def test_reported_usage_is_taken_as_is(run_graph, scripted):
    name, model = scripted(model=MeteredModel(replies={"analyzer": analyzer_reply("multi-bridge")}))
    out = run_graph(KEEPER_Q, model=name)
    assert out["status"] == "answered"
    n = len(model.calls)
    assert n == len(out["usage"]) >= 3
    assert all((r["input_tokens"], r["output_tokens"], r["estimated"]) == (123, 7, False) for r in out["usage"])
    assert out["totals"] == {
        **out["totals"],
        "calls": n,
        "input_tokens": 123 * n,
        "output_tokens": 7 * n,
        "cost": 123 * n + 4 * 7 * n,
        "estimated": False,
    }


# -- sync and async -----------------------------------------------------------------------------


MODEL_NODES = {
    "analyze",
    "split_question",
    "reason_step",
    "extract",
    "cot",
    "filter",
    "generate",
    "long_context",
    "ground",
    "calculate",
}


def test_every_node_runs_sync_or_awaits_only_the_model():
    """Under ainvoke, a plain node runs in LangGraph's executor (a worker thread); a model node
    (llm/model_node.py) runs its own work in worker threads and awaits only its model calls, and
    `prepare` runs in a worker thread that stops when its run is cancelled. So none blocks the
    event loop, and none is an `async def` of its own."""
    nodes = build_graph().nodes
    assert {"prepare", "retrieve", "filter", "generate", "long_context", "respond"} <= set(nodes)
    for name, spec in nodes.items():
        runnable = spec.runnable
        if name in MODEL_NODES:
            assert isinstance(runnable, RunnableLambda), name
            assert runnable.func.__module__ == "longqa.graph.node", name  # the one wrapper (graph/node.py)
            assert inspect.iscoroutinefunction(runnable.afunc), name
            driver = inspect.getclosurevars(runnable.func).nonlocals["sync"]  # the model node's call driver
            assert driver.__module__ == "longqa.llm.model_node", name
            steps = inspect.getclosurevars(driver).nonlocals["node"]  # the node's own code
            assert inspect.isgeneratorfunction(steps) and steps.__module__.startswith("longqa.nodes."), name
            continue
        if name == "prepare":  # the turn's first step: awaited, in a worker thread it can stop (nodes/stoppable.py)
            assert isinstance(runnable, RunnableLambda) and inspect.iscoroutinefunction(runnable.afunc), name
            plain = inspect.getclosurevars(runnable.afunc).nonlocals["step"]
            assert "to_thread" in inspect.getsource(runnable.afunc), name
            assert plain.__wrapped__.__module__ == "longqa.nodes.prepare", name
            continue
        func = runnable.func
        assert inspect.isfunction(func) and not inspect.iscoroutinefunction(func), name
        assert func.__module__.startswith("longqa.nodes."), name
        assert "run_in_executor" in repr(runnable.afunc), name
    # and nothing in nodes/ is async
    for path in sorted(Path(nodes_package.__file__).parent.glob("*.py")):
        module = importlib.import_module(f"longqa.nodes.{path.stem}")
        for name, func in inspect.getmembers(module, inspect.isfunction):
            if func.__module__ == module.__name__:
                assert not inspect.iscoroutinefunction(func), f"{module.__name__}.{name}"


@pytest.mark.parametrize("strategy", ["adaptive-precise", "longrag"])
def test_ainvoke_matches_invoke(graph_home, report, strategy):
    from longqa.graph.graph import graph

    inputs = {"question": KEEPER_Q, "texts": [report]}
    context = {"model": "scripted", "home": str(graph_home), "strategy": strategy}
    sync = graph.invoke(inputs, context=context)

    async def run():
        return await graph.ainvoke(inputs, context=context)

    asynchronous = asyncio.run(run())
    for key in ("route", "answer", "status", "plan", "analysis", "citations"):
        assert asynchronous[key] == sync[key], key
    assert sync["status"] == "answered"
    assert [r["node"] for r in asynchronous["usage"]] == [r["node"] for r in sync["usage"]]


# -- chat input ---------------------------------------------------------------------------------


def test_chat_input_answers_the_last_human_message(graph_home, report):
    graph = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat"}}
    inputs = {
        "question": "What is the ferry signal code?",  # stale: the human message wins
        "messages": [HumanMessage("An earlier remark."), AIMessage("An earlier reply."), HumanMessage(KEEPER_Q)],
        "texts": [report],
    }
    out = graph.invoke(inputs, config, context={"model": "scripted", "home": str(graph_home)})
    assert graph.get_state(config).values["question"] == KEEPER_Q
    assert out["status"] == "answered"
    assert "Amelie Kortsen" in out["answer"]
    assert len(out["messages"]) == 4
    last = out["messages"][-1]
    assert isinstance(last, AIMessage)
    assert out["answer"] in last.content
    assert f"[{LABEL}]" in last.content
    assert "\n\nSources:\n[E" in last.content
    assert out["model"] == f"scripted - {LABEL}"


# -- threads ------------------------------------------------------------------------------------


def test_a_thread_starts_each_turn_afresh(graph_home, report):
    graph = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "turns"}}
    context = {
        "model": "scripted",
        "home": str(graph_home),
        "strategy": "adaptive-precise",
        "filter_mode": "per-chunk",
        "extractive_reading": "filtered",
        "question_budget": 0,
    }
    first = graph.invoke({"messages": [HumanMessage(KEEPER_Q)], "texts": [report]}, config, context=context)
    first_state = graph.get_state(config).values
    second = graph.invoke({"messages": [HumanMessage(BRIDGE_Q)]}, config, context=context)  # same documents
    second_state = graph.get_state(config).values

    assert first["status"] == second["status"] == "answered"
    assert "842" in second["answer"]
    # route, usage and trace are this turn's only
    n = len(second["evidence"])
    assert second["route"] == [
        "prepare",
        "retrieve_primary",
        "analyze",
        "organize",
        "retrieve",
        "process_context",
        "cot",
        *["filter"] * n,
        "generate",
        "ground",
        "self_route",
        "respond",
    ]
    # the default analyzer is the local one: analyze makes no LLM call
    assert (
        len(second["usage"]) == second["totals"]["calls"] == sum(n in LLM_NODES - {"analyze"} for n in second["route"])
    )
    assert second["trace"][0].startswith("prepare:") and sum(t.startswith("prepare:") for t in second["trace"]) == 1
    # hits and verdicts are this turn's only (a follow-up is searched with the question before it)
    assert {h["query"] for h in first_state["hits"]} == {KEEPER_Q}
    assert second_state["hits"]
    assert {h["query"] for h in second_state["hits"]} == {second_state.get("search_query", BRIDGE_Q)}
    assert BRIDGE_Q in second_state.get("search_query", BRIDGE_Q)
    assert len(second_state["verdicts"]) == n
    assert second_state["question"] == BRIDGE_Q
    # the conversation itself accumulates
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]


def test_an_error_turn_does_not_stick_to_the_thread(graph_home, report):
    graph = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "error-then-evidence"}}
    context = {"model": "scripted", "home": str(graph_home)}
    failed = graph.invoke({"texts": [report]}, config, context=context)  # no question
    assert failed["status"] == "error"
    out = graph.invoke({"question": KEEPER_Q}, config, context={**context, "model": None})
    assert out["error"] is None
    assert out["status"] == "evidence-only"
    out = graph.invoke({"question": KEEPER_Q}, config, context=context)
    assert out["status"] == "answered"


def test_retrieve_reports_embedding_progress_per_document(tmp_path):
    """A granularity not indexed yet is built by `retrieve`; its embedding is reported on the custom
    stream under the documents' own names, to the end."""
    from longqa.graph.graph import graph

    docs = []
    for name, fact in (("atlas.md", "The Verrin Bridge spans 842 metres."), ("log.md", "Agnes Morrow kept the light.")):
        path = tmp_path / name
        path.write_text(f"# {name}\n\n" + "\n\n".join(f"Paragraph {i} of {name}. {fact}" for i in range(40)), "utf-8")
        docs.append(str(path))
    context = {"home": str(tmp_path / "home"), "strategy": "rag"}  # 512-token chunks: prepare indexed 150
    events = [
        e
        for e in graph.stream(
            {"question": "How long is the Verrin Bridge?", "documents": docs}, context=context, stream_mode="custom"
        )  # fmt: skip
        if e["node"] == "retrieve" and e["step"] == "embedding"
    ]
    # the new documents are embedded together (retrieval/index/library/batch_embed.py): the message names each of
    # them by the path the caller gave, to the end
    finished = [e["message"] for e in events if e["done"] == e["total"] > 0]
    assert finished and all(doc in finished[-1] for doc in docs), events
