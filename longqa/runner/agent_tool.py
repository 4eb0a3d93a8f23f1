"""longqa as a tool for chat agents: `ask_documents(question, documents)` runs the whole graph and
returns the answer with its citations (content) and the structured output (artifact).

The model reads only what the tool's builder allowed (longqa/runner/tool_scope.py): the paths it may
name lie inside `allowed_roots` or the default documents, checked after `..` and links are resolved,
and hold at most `max_files` files. A call ends at its settings' `deadline_s`, indexing included: the
graph's own deadline bounds only model calls, so the tool runs the graph under a cancellation event
(retrieval/cancel.py) that a timer sets, and returns at the deadline. Every failure, a refusal or a
bad argument included, is one line of content starting "longqa error:" (never an exception)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph
from longqa.retrieval.cancel import cancelled_by
from longqa.runner.tool_scope import ScopeRefused, ToolScope, WalkStopped

DEFAULT_MAX_FILES = 1000  # files the paths one call names may hold (the builder's default documents excepted)
STOP_GRACE_S = 2.0  # after the deadline, how long a call waits for its run to stop at its next check

Reply = tuple[str, dict[str, Any]]


def _one_path(value: Any) -> Any:
    """One path as a string is a list of one (as the graph's `documents` input takes it)."""
    return [value] if isinstance(value, str) else value


class AskDocuments(BaseModel):
    """The tool's arguments as an agent sends them: the question, and optionally which documents to read."""

    question: str = Field(description="the question to answer from the documents")
    documents: Annotated[list[str] | None, BeforeValidator(_one_path)] = Field(
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


def _failed(message: str, **fields: Any) -> Reply:
    result = {"status": "error", "error": message, **fields}
    return format_result(result), result


_EXPECTED = {"question": "a string", "documents": "a list of paths (strings) or one path"}


def argument_error(e: ValidationError) -> str:
    """A tool call's bad arguments as the one line the model reads (the tool's `handle_validation_error`)."""
    error = e.errors()[0]
    loc = error.get("loc") or ()
    name = str(loc[0]) if loc else "arguments"
    if error.get("type") == "missing":
        return f"longqa error: input: '{name}' is missing"
    value = error.get("input")
    got = "null" if value is None else type(value).__name__
    at = f" at position {loc[-1]}" if len(loc) > 1 and isinstance(loc[-1], int) else ""
    return f"longqa error: input: '{name}' must be {_EXPECTED.get(name, 'valid')} (got {got}{at})"


class _Call:
    """One call of the tool: its paths checked, then the graph run, all within `deadline_s`."""

    def __init__(self, scope: ToolScope, context: dict[str, Any], deadline_s: float) -> None:
        self.scope, self.context, self.deadline_s = scope, context, deadline_s
        self.stop = threading.Event()  # set at the deadline: the run's indexing stops at its next check
        self.last: dict[str, Any] = {}

    def expired(self) -> Reply:
        route = list(self.last.get("route") or [])
        stopped_in_prepare = route[-1:] == ["prepare"] and self.last.get("status") == "error"
        if "prepare" in route and not stopped_in_prepare:
            where, hint = "while answering", "ask a narrower question or raise deadline_s"
        else:
            where, hint = "while reading and indexing the documents", "name fewer documents or raise deadline_s"
        message = f"deadline: the run passed its deadline (deadline_s={self.deadline_s:g} s) {where}; stopped ({hint})"
        return _failed(message, route=route)

    def checked(self, documents: list[str] | None) -> list[str] | Reply:
        """The paths to read, or the reply that refuses them (a path outside the scope, too many files)."""
        try:
            return self.scope.paths_for(documents, self.stop)
        except ScopeRefused as e:
            return _failed(f"input: {e}")
        except WalkStopped:
            return self.expired()

    def work(self, question: str, documents: list[str] | None) -> Reply:
        """The sync run (in a worker thread): stopped within a step by the event, between steps here."""
        paths = self.checked(documents)
        if isinstance(paths, tuple):
            return paths
        with cancelled_by(self.stop):
            payload = {"question": question, "documents": paths}
            for values in graph.stream(payload, context=self.context, stream_mode="values"):
                self.last = values
                if self.stop.is_set():
                    return self.expired()
        return format_result(self.last), self.last

    def run(self, question: str, documents: list[str] | None) -> Reply:
        """`work` in a thread (with the caller's context: its callbacks, its run), waited for until the deadline."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["reply"] = self.work(question, documents)
            except BaseException as e:  # re-raised in the caller's thread
                box["error"] = e

        worker = threading.Thread(target=contextvars.copy_context().run, args=(target,), daemon=True)
        worker.name = "longqa-tool"
        worker.start()
        worker.join(self.deadline_s)
        if worker.is_alive():
            self.stop.set()
            worker.join(STOP_GRACE_S)  # most runs stop at once; a file being read is not waited for
            return self.expired()
        if "error" in box:
            raise box["error"]
        return box["reply"]

    async def arun(self, question: str, documents: list[str] | None) -> Reply:
        """The async run: the graph's `astream` (model calls awaited, other work in worker threads); at the
        deadline it is cancelled, which stops the prepare step's thread at its next check (nodes/stoppable.py)."""
        timer = asyncio.timeout(self.deadline_s)
        try:
            async with timer:
                paths = await asyncio.to_thread(self.checked, documents)
                if isinstance(paths, tuple):
                    return paths
                payload = {"question": question, "documents": paths}
                with cancelled_by(self.stop):  # the steps run in threads besides prepare's stop at the deadline
                    async for values in graph.astream(payload, context=self.context, stream_mode="values"):
                        self.last = values
                return format_result(self.last), self.last
        except TimeoutError:
            if not timer.expired():
                raise
        self.stop.set()  # a folder count still running in its thread stops too
        return self.expired()


def longqa_tool(
    default_documents: list[str] | None = None,
    settings: Settings | None = None,
    name: str = "ask_documents",
    *,
    allowed_roots: Sequence[str | Path] | None = None,
    max_files: int | None = DEFAULT_MAX_FILES,
) -> BaseTool:
    """A tool an agent can call; `default_documents` are read when a call names none. The run's
    settings are the given ones (default: from the environment).

    The model may name only files and folders inside `default_documents` or `allowed_roots` (with
    neither: inside the settings' `documents_root`, if set; else nothing); a path is resolved (`..`,
    links) before the check. The paths one call names may hold at most `max_files` files (None: no
    limit; the default documents themselves are not counted). A call ends at `deadline_s`."""
    settings = settings or Settings()
    context = settings.model_dump()
    defaults = tuple(default_documents or ())
    roots = tuple(str(r) for r in allowed_roots or ()) + defaults
    if not roots and settings.documents_root is not None:
        roots = (str(settings.documents_root),)
    scope = ToolScope(defaults, roots, settings.documents_root, max_files)

    def ask_documents(question: str, documents: list[str] | None = None) -> Reply:
        return _Call(scope, context, settings.deadline_s).run(question, documents)

    async def aask_documents(question: str, documents: list[str] | None = None) -> Reply:
        """The async path (agents run with `ainvoke`/`astream`): the graph's own `astream`, whose model
        calls are awaited and whose other work (embedding, searching) runs in worker threads, so the
        event loop never blocks."""
        return await _Call(scope, context, settings.deadline_s).arun(question, documents)

    return StructuredTool.from_function(
        func=ask_documents,
        coroutine=aask_documents,
        name=name,
        args_schema=AskDocuments,
        response_format="content_and_artifact",
        handle_validation_error=argument_error,
        description=(
            "Answer a question from long documents (reports, papers, books) with citations. "
            "Give the question in full, self-contained."
        ),
    )
