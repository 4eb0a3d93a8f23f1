"""A LangChain agent that calls longqa as a tool.

    python examples/agent_with_tool.py samples/harbor_annual_report.md "Which shipyard built the dredger Marrowdeep?"

Needs LONGQA_MODEL (e.g. openai:gpt-4o-mini) for the agent's own model; longqa's graph uses the
same settings. With LONGQA_THREAD set, the agent's conversation is kept where longqa keeps threads
(PostgreSQL with LONGQA_POSTGRES_URI, else SQLite under the index home), so a later run continues it.
"""

from __future__ import annotations

import os
import sys

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel

from longqa.contracts.settings import Settings
from longqa.llm.models import chat_model
from longqa.runner.agent_tool import longqa_tool
from longqa.runner.threads import thread_checkpointer


def build_agent(model: BaseChatModel, documents: list[str], settings: Settings | None = None, checkpointer=None):
    tool = longqa_tool(default_documents=documents, settings=settings)
    return create_agent(
        model,
        tools=[tool],
        checkpointer=checkpointer,
        system_prompt=(
            "You answer questions about the user's documents. Use the ask_documents tool for every factual "
            "question and cite its sources."
        ),
    )


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    settings = Settings()
    if not settings.has_llm:
        print("set LONGQA_MODEL (and LONGQA_BASE_URL for a local server) to run the agent", file=sys.stderr)
        return 2
    thread = os.environ.get("LONGQA_THREAD")
    saver = thread_checkpointer(settings) if thread else None
    agent = build_agent(chat_model(settings), argv[:-1], settings, checkpointer=saver)
    config = {"configurable": {"thread_id": thread}} if thread else {}
    result = agent.invoke({"messages": [{"role": "user", "content": argv[-1]}]}, config=config)
    print(result["messages"][-1].content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
