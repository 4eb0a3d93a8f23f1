"""The question graph as the LangGraph server serves it (langgraph.json): its context schema is
`RunContext`, the fields a caller may set. Its own module, so a process that never serves (the CLI,
the agent tool) does not compile it."""

from __future__ import annotations

from longqa.contracts.settings import RunContext
from longqa.graph.graph import build_graph

graph = build_graph(RunContext).compile(name="longqa")
