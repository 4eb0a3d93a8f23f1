"""longqa as a subgraph node inside a larger chat graph.

The parent graph keeps the conversation (`messages`) and the user's documents; its `documents`
node is the compiled longqa graph itself, so it shares `messages` (the last human message is the
question; longqa appends its answer as an AI message) and receives the parent's run settings
(`context`) unchanged.

    python examples/chat_graph.py samples/harbor_annual_report.md "Which shipyard built the dredger Marrowdeep?"
"""

from __future__ import annotations

import sys
from typing import Literal

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph as longqa_graph


class ChatState(MessagesState, total=False):
    documents: list[str]
    status: str
    route: list[str]


def greet_or_ask(state: ChatState) -> Literal["documents", "small_talk"]:
    last = state["messages"][-1].content.strip().lower()
    return "small_talk" if last in ("hi", "hello", "thanks", "thank you") else "documents"


def small_talk(state: ChatState) -> dict:
    return {"messages": [AIMessage("Hello! Ask me anything about your documents.")]}


def build_chat_graph() -> StateGraph:
    builder = StateGraph(ChatState, context_schema=Settings)
    builder.add_node("documents", longqa_graph)  # the whole longqa graph as one node
    builder.add_node("small_talk", small_talk)
    builder.add_conditional_edges(START, greet_or_ask, ["documents", "small_talk"])
    builder.add_edge("documents", END)
    builder.add_edge("small_talk", END)
    return builder


chat_graph = build_chat_graph().compile(name="chat-with-documents")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    result = chat_graph.invoke(
        {"messages": [HumanMessage(argv[-1])], "documents": argv[:-1]}, context=Settings().model_dump()
    )
    print(result["messages"][-1].content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
