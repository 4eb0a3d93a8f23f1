"""longqa as a tool for chat agents: `ask_documents(question, documents)` runs the whole graph and
returns the answer with its citations (content) and the structured output (artifact)."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph


class AskDocuments(BaseModel):
    """The tool's arguments as an agent sends them: the question, and optionally which documents to read."""

    question: str = Field(description="the question to answer from the documents")
    documents: list[str] | None = Field(
        default=None,
        description="paths of the documents or folders to read (a folder: every document in it); "
        "omit to use the tool's default documents",
    )


def format_result(result: dict[str, Any]) -> str:
    """The tool's reply to the agent: the answer (or, without a model, the passages) and each citation's source, span
    and first 300 characters; the error when the run failed."""
    status = result.get("status")
    if status == "error":
        return f"longqa error: {result.get('error')}"
    lines = []
    if status == "evidence-only":
        lines.append("No LLM is configured for longqa; these are the most relevant passages:")
    else:
        lines.append(f"Answer: {result.get('answer')}")
    for c in result.get("citations") or []:
        snippet = " ".join(c["text"].split())[:300]
        lines.append(f"[{c['id']}] {c['source']} chars {c['start']}-{c['end']}: {snippet}")
    return "\n".join(lines)


def longqa_tool(
    default_documents: list[str] | None = None, settings: Settings | None = None, name: str = "ask_documents"
) -> BaseTool:
    """A tool an agent can call; `default_documents` are read when a call names none. The run's
    settings are the given ones (default: from the environment)."""
    context = (settings or Settings()).model_dump()

    def ask_documents(question: str, documents: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        paths = documents or default_documents or []
        result = graph.invoke({"question": question, "documents": paths}, context=context)
        return format_result(result), result

    async def aask_documents(question: str, documents: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        """The async path (agents run with `ainvoke`/`astream`): the graph's own `ainvoke`, whose model
        calls are awaited and whose other work (embedding, searching) runs in worker threads, so the
        event loop never blocks."""
        paths = documents or default_documents or []
        result = await graph.ainvoke({"question": question, "documents": paths}, context=context)
        return format_result(result), result

    return StructuredTool.from_function(
        func=ask_documents,
        coroutine=aask_documents,
        name=name,
        args_schema=AskDocuments,
        response_format="content_and_artifact",
        description=(
            "Answer a question from long documents (reports, papers, books) with citations. "
            "Give the question in full, self-contained."
        ),
    )
