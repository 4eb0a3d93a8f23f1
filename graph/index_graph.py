"""A second, one-node graph for servers: index documents (and name them as a collection) ahead of
questions, so the first question on a large document does not pay for its embedding."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from longqa.contracts.settings import RunContext, Settings
from longqa.nodes.index_documents import IndexInput, IndexOutput, index_node


class IndexState(IndexInput, IndexOutput):
    """The index graph's state: its input and output faces together."""

    pass


def build_index_graph(context: type[Settings] | type[RunContext] = Settings) -> StateGraph:
    """The index graph before compiling: START -> index_documents -> END, with this context schema."""
    builder = StateGraph(IndexState, input_schema=IndexInput, output_schema=IndexOutput, context_schema=context)
    builder.add_node("index_documents", index_node())
    builder.add_edge(START, "index_documents")
    builder.add_edge("index_documents", END)
    return builder


graph = build_index_graph().compile(name="longqa-index")
server_graph = build_index_graph(RunContext).compile(name="longqa-index")  # langgraph.json
