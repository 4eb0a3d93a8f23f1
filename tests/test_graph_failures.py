"""Infrastructure failures (the vector store, the disk) end a run with a clear error in its output."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest

from longqa.retrieval import Searcher


@pytest.mark.parametrize("strategy", ["adaptive-precise", "rag", "longrag"])
def test_a_failing_search_ends_the_run_with_a_clear_error(run_graph, monkeypatch, strategy):
    def broken(self, *args, **kwargs):
        raise ConnectionError("Chroma server at 127.0.0.1:9 refused the connection")

    monkeypatch.setattr(Searcher, "search", broken)
    out = run_graph("Who manages the northern terminal?", strategy=strategy)
    assert out["status"] == "error"
    assert "ConnectionError" in out["error"] and "refused the connection" in out["error"]
    assert out["route"][-1] == "respond"
    assert out["messages"][-1].content.startswith("Error:")


def test_a_failing_store_at_prepare_is_reported_not_raised(run_graph, monkeypatch):
    from longqa.retrieval.index.library.library import Library

    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Library, "update", full_disk)  # prepare brings the library up to date
    monkeypatch.setattr(Library, "unchanged", lambda self, *args, **kwargs: None)  # as if a file had changed
    out = run_graph("Who manages the northern terminal?")
    assert out["status"] == "error"
    assert out["route"] == ["prepare", "respond"]
    assert "No space left on device" in out["error"]


def test_an_unknown_strategy_in_the_input_ends_the_run_in_one_line(run_graph, report):
    """Seen on the LangGraph server: an input's "strategy": "bogus" ran as an unknown plan, answered, ungrounded."""
    out = run_graph("Who manages the northern terminal?", inputs={"texts": [report], "strategy": "bogus"})
    assert out["status"] == "error" and out["route"] == ["prepare", "respond"]
    assert out["error"].startswith("input: strategy: one of rag, lc, self-route") and "'bogus'" in out["error"]


def test_a_missing_api_key_is_an_error_in_the_output_not_a_crash(run_graph, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = run_graph(
        "Who manages the northern terminal?",
        model="openai:gpt-4o-mini",
        base_url=None,
        analyzer="local",
        strategy="rag",
    )
    assert out["status"] == "error"
    assert "generate: model could not be set up" in out["error"]
    assert "api_key" in out["error"].lower() or "credentials" in out["error"].lower()


@pytest.mark.parametrize("via", ["invoke", "ainvoke"])
def test_a_failing_search_in_the_long_context_reader_ends_the_run_with_a_clear_error(
    graph_home, report, monkeypatch, via
):
    """The long-context node is a model node (a generator) guarded around its own work: a search
    that fails while it selects what fits the window ends the run the same clear way, on both paths."""
    import asyncio

    from longqa.graph.graph import graph

    def broken(self, *args, **kwargs):
        raise ConnectionError("Chroma server at 127.0.0.1:9 refused the connection")

    inputs = {"question": "Who manages the northern terminal?", "texts": [report]}
    # a window smaller than the report: the reader must search for what fits
    context = {"model": "scripted", "home": str(graph_home), "strategy": "lc", "context_window": 2048}
    graph.invoke(inputs, context={**context, "model": None})  # indexed before the search breaks
    monkeypatch.setattr(Searcher, "search", broken)
    out = (
        graph.invoke(inputs, context=context)
        if via == "invoke"
        else asyncio.run(graph.ainvoke(inputs, context=context))
    )
    assert out["status"] == "error", out.get("answer")
    assert out["error"].startswith("long_context: ConnectionError") and "refused the connection" in out["error"]
    assert out["route"][-2:] == ["long_context", "respond"]


# -- the node wrapper (graph/node.py) -----------------------------------------------------------


@pytest.mark.parametrize("via", ["invoke", "ainvoke"])
def test_a_node_that_raises_after_its_model_call_ends_the_run_with_that_call_on_the_ledger(run_graph, monkeypatch, via):
    """The generator's own code fails after the model answered: the run ends at once (no self_route,
    no fallback), the error names the node, and the call it paid for stays on the ledger."""
    import asyncio

    from longqa.graph.graph import graph
    from longqa.nodes import generate as generate_module

    def broken(*args, **kwargs):
        raise ValueError("reply parser broke")

    monkeypatch.setattr(generate_module, "read_answer", broken)
    if via == "invoke":
        out = run_graph("Who manages the northern terminal?", strategy="rag")
    else:
        invoke = graph.ainvoke

        def awaited(state, config=None, **kwargs):
            return asyncio.run(invoke(state, config, **kwargs))

        monkeypatch.setattr(graph, "invoke", awaited)
        out = run_graph("Who manages the northern terminal?", strategy="rag")
    assert out["status"] == "error"
    assert out["error"] == "generate: ValueError: reply parser broke"
    assert out["route"][-2:] == ["generate", "respond"]
    assert [r["node"] for r in out["usage"]] == ["generate"] and out["usage"][0]["outcome"] == "ok"
    assert out["totals"]["calls"] == 1 and out["totals"]["input_tokens"] > 0


def test_every_working_field_of_the_state_starts_each_turn_clean():
    """Nothing but the caller's input face is carried into a thread's next turn, and a field added
    to the state is reset without being listed anywhere."""
    from typing import get_type_hints

    from langgraph.types import Overwrite

    from longqa.contracts.state import InputState, State, turn_start

    reset = turn_start(State)
    assert set(reset) == set(get_type_hints(State)) - set(get_type_hints(InputState))
    assert reset["route"] == Overwrite([]) and reset["usage"] == Overwrite([]) and reset["hits"] == Overwrite([])
    assert reset["hops"] == 0 and reset["fallback"] is False and reset["plan"] == {} and reset["answer"] is None

    class Grown(State, total=False):
        notes: Annotated[list[str], operator.add]
        verdict_of_the_day: str | None
        rounds: int

    grown = turn_start(Grown)
    assert grown["notes"] == Overwrite([]) and grown["verdict_of_the_day"] is None and grown["rounds"] == 0
