"""`longqa serve`: one replica, an HTTP application that embeds the two graphs and owns their
checkpointer. Run several behind a load balancer with the same Chroma server (CHROMA_HOST) and the
same PostgreSQL (LONGQA_POSTGRES_URI): any replica answers over any library and continues any
thread (README, "Deployment").

    GET  /health                 {"ok": true, "replica": ...}
    POST /index  {documents?, texts?, collection?, include?, exclude?, granularities?, context?}
    POST /ask    {question, documents?, texts?, collection?, include?, exclude?, thread_id?, context?}

`context` holds run settings a caller may choose (the question graph's context schema); the
deployment's own (index home, Chroma server, documents root, database, endpoint) come from the
environment and cannot be sent (HTTP 422 names the key). The graphs run in worker threads: a
replica serves many requests at once. Hand-written: LangGraph's own server keeps threads in its
in-memory runtime (`langgraph dev`) or in its licensed deployment, not in a checkpointer we choose."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.messages import HumanMessage
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from longqa.ask import answer_fields
from longqa.contracts.settings import SERVER_LOCKED, RunContext, Settings, UnknownSetting, check_names

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024 * 1024
ASK_KEYS = {"question", "documents", "texts", "collection", "include", "exclude", "thread_id", "context"}
INDEX_KEYS = {"documents", "texts", "collection", "include", "exclude", "granularities", "context"}


class BadRequest(ValueError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


async def _body(request: Request, allowed: set[str]) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise BadRequest(f"request body over {MAX_BODY // 2**20} MiB", 413)
    try:
        body = json.loads(raw or b"{}")
    except ValueError as e:
        raise BadRequest(f"the body is not JSON ({e})") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(map(repr, unknown))}; expected some of {sorted(allowed)}", 422)
    context = body.get("context") or {}
    if not isinstance(context, dict):
        raise BadRequest("'context' must be an object of run settings", 422)
    try:
        check_names(context, RunContext.model_fields, locked=SERVER_LOCKED)
    except UnknownSetting as e:
        raise BadRequest(str(e), 422) from None
    return body


def _payload(body: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k in keys and v not in (None, [], "")}


def _ask(body: dict[str, Any]) -> dict[str, Any]:
    from longqa.threads import thread_checkpointer

    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadRequest("'question' must be a non-empty string", 422)
    scope = _payload(body, {"documents", "texts", "collection", "include", "exclude"})
    thread = body.get("thread_id")
    if thread is not None and (not isinstance(thread, str) or not thread or len(thread) > 256):
        raise BadRequest("'thread_id' must be a string of 1-256 characters", 422)
    if thread:  # a conversation: the checkpointer keeps it, on whichever replica the next turn lands
        graph = _thread_graph(thread_checkpointer(Settings()))
        payload = {"messages": [HumanMessage(question)], **scope}
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    else:
        graph, payload, config = _question_graph(), {"question": question, **scope}, {}
    final = graph.invoke(payload, config=config, context=body.get("context") or {})
    return answer_fields(final)


@functools.cache
def _thread_graph(saver):
    from longqa.graph.graph import build_graph

    return build_graph().compile(checkpointer=saver)


def _question_graph():
    from longqa.graph.graph import graph

    return graph


def _index(body: dict[str, Any]) -> dict[str, Any]:
    from longqa.graph.index_graph import graph

    payload = _payload(body, INDEX_KEYS - {"context"})
    return graph.invoke(payload, context=body.get("context") or {})


def _endpoint(run, allowed: set[str]):
    async def endpoint(request: Request) -> JSONResponse:
        try:
            body = await _body(request, allowed)
            result = await run_in_threadpool(run, body)
        except BadRequest as e:
            return JSONResponse({"error": str(e)}, status_code=e.status)
        except Exception as e:  # the graph reports its own failures; this is the replica's (a database down)
            log.exception("%s failed", request.url.path)
            return JSONResponse({"error": f"{type(e).__name__}: {str(e)[:300]}"}, status_code=500)
        return JSONResponse(json.loads(json.dumps(result, default=str)))

    return endpoint


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True, "replica": f"{socket.gethostname()}:{os.getpid()}"})


def build_app() -> Starlette:
    """The replica's application. It runs as a server (LONGQA_SERVER=1): files only under
    LONGQA_DOCUMENTS_ROOT, and run settings limited to what a caller may choose."""
    os.environ["LONGQA_SERVER"] = "1"
    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/ask", _endpoint(_ask, ASK_KEYS), methods=["POST"]),
        Route("/index", _endpoint(_index, INDEX_KEYS), methods=["POST"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        from longqa.threads import close_checkpointers

        close_checkpointers()

    return Starlette(routes=routes, lifespan=lifespan)


def serve(host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(), host=host, port=port, log_level="warning")
