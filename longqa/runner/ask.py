"""The question graph run in-process: compiled once per process and checkpointer, streamed node by node
with its progress lines (`run_question`, for `longqa ask` and the warm server's rehearsal), and the output
face a caller reads (`answer_fields`, also `longqa serve`'s). The CLI prints the answer block
(longqa/cli/answer.py)."""

from __future__ import annotations

import functools
import sys
from typing import Any, TextIO

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Overwrite

from longqa.contracts.settings import Settings
from longqa.contracts.state import OutputState
from longqa.graph.graph import build_graph, graph
from longqa.runner.threads import thread_checkpointer


@functools.lru_cache(maxsize=8)
def compiled_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    """The question graph compiled once per process and checkpointer (a process's checkpointers are
    themselves one per database, longqa/runner/threads.py): compiling costs ~40 ms, a warm question less."""
    return graph if checkpointer is None else build_graph().compile(checkpointer=checkpointer, name="longqa")


def run_question(
    paths: list[str],
    question: str,
    settings: Settings,
    thread: str | None = None,
    progress: TextIO | None = sys.stderr,
    scope: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Stream one question through the graph; return the final output state. `scope` adds the
    input's `collection`, `include` and `exclude`."""
    config: dict[str, Any] = {}
    if thread:
        compiled = compiled_graph(thread_checkpointer(settings))
        config = {"configurable": {"thread_id": thread}}
        payload: dict[str, Any] = {"messages": [HumanMessage(question)], "documents": paths}
    else:
        compiled = compiled_graph()
        payload = {"question": question, "documents": paths}
    payload.update({k: v for k, v in (scope or {}).items() if v})
    context = settings.model_dump(exclude_none=False)
    final: dict[str, Any] = {}
    modes = ["updates", "values", "custom"]
    for mode, chunk in compiled.stream(payload, config=config, context=context, stream_mode=modes):
        if mode == "values":
            final = chunk
        elif mode == "custom":  # progress of long steps (embedding, model calls): the events an SDK client sees
            if progress is not None and isinstance(chunk, dict) and chunk.get("message"):
                print(f"  ... {chunk['message']}", file=progress)
        elif progress is not None:
            for node, update in chunk.items():
                trace = (update or {}).get("trace", []) if isinstance(update, dict) else []
                for line in trace.value if isinstance(trace, Overwrite) else trace:  # a turn's first lines
                    print(f"  [{node}] {line}", file=progress)
    return answer_fields(final)


def answer_fields(final: dict[str, Any]) -> dict[str, Any]:
    """The graph's output face, but the chat message (a caller prints or sends its own answer block)."""
    return {k: final.get(k) for k in OutputState.__annotations__ if k != "messages"}
