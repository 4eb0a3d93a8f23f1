"""/ask and /index for the page, streamed: the same body, key, grants, limits and ceilings as
longqa/http/serve.py's endpoints (its own reading, parsing and checks are called, in the same order),
but the response is NDJSON, one event a line, as the graph works:

    {"type": "step", "node": "retrieve", "trace": ["..."]}      a node finished (the SDK's `updates`)
    {"type": "progress", "node", "step", "done", "total", "message"}   a long step (the SDK's `custom`)
    {"type": "result", "result": {...}}                          what /ask or /index would answer
    {"type": "error", "error": "..."}                            the replica failed (a database down)

A refusal (401, 403, 404, 413, 415, 422 ...) comes before the stream starts, as a plain JSON error
with its status; so does a second index run of a key that has one under way (429, LONGQA_MAX_INDEX_JOBS,
counted apart from /index's). The page closing the stream stops the run, within its step at the next
file or embedding batch (retrieval/cancel.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import Overwrite
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from longqa.contracts.ceilings import deployment_ceilings
from longqa.contracts.settings import Settings, SettingsError
from longqa.http.access import Caller, Denied, authorize, identify
from longqa.http.ask_only import for_caller
from longqa.http.job_slots import Busy, JobSlots
from longqa.http.keys import KeyStore
from longqa.http.limits import ServerLimits, question_problem
from longqa.http.page.headers import page_headers
from longqa.http.scrub import PathScrubber
from longqa.http.serve_input import (
    ASK_KEYS,
    INDEX_KEYS,
    BadRequest,
    parse_body,
    payload_of,
    question_graph,
    read_body,
    thread_graph,
)
from longqa.retrieval.cancel import Cancelled, cancelled_by
from longqa.runner.ask import answer_fields

log = logging.getLogger(__name__)
MODES = ["updates", "custom", "values"]
MAX_TRACE_LINES = 20  # per step: a step's trace is for watching, the result holds the rest
INDEX_OUTPUT = ("doc_ids", "collection", "chunks", "version", "changes", "skipped", "error")


class _Slot:
    """An index job's slot, given back once: by the run's thread when it ends, or, when the response
    never started its stream (the page left first), after the response."""

    def __init__(self, release: Callable[[], None]):
        self.release, self.started, self.given = release, False, False
        self._lock = threading.Lock()

    def give(self) -> None:
        """Give the slot back (the second call does nothing)."""
        with self._lock:
            if self.given:
                return
            self.given = True
        self.release()

    async def unless_started(self) -> None:
        """The response's background task: give the slot back if no run thread was started to."""
        if not self.started:
            self.give()


class _Stopped(Exception):
    """The page closed the stream: the run ends after the step under way."""


def _trace(update: Any) -> list[str]:
    trace = update.get("trace", []) if isinstance(update, dict) else []
    lines = trace.value if isinstance(trace, Overwrite) else trace  # a turn's first lines
    return [str(line)[:500] for line in (lines or [])[:MAX_TRACE_LINES]]


def _ask_run(body: dict[str, Any], caller: Caller) -> tuple[Any, dict, dict, Callable[[dict], dict]]:
    """The graph, input and config /ask would run (a thread claimed for the caller's tenant, as /ask does)."""
    from longqa.runner.threads import claim_thread, thread_checkpointer

    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadRequest("'question' must be a non-empty string", 422)
    scope = payload_of(body, {"documents", "texts", "collection", "include", "exclude"})
    thread = body.get("thread_id")
    if thread is not None and (not isinstance(thread, str) or not thread or len(thread) > 256):
        raise BadRequest("'thread_id' must be a string of 1-256 characters", 422)
    if not thread:
        return for_caller(question_graph(), caller, body), {"question": question, **scope}, {}, answer_fields
    saver = thread_checkpointer(body["context"])
    if not caller.owns(claim_thread(saver, thread, caller.thread_owner)):  # another tenant's, or a wider key's
        raise Denied(404, f"no thread {thread[:60]!r}")  # not even its existence
    payload = {"messages": [HumanMessage(question)], **scope}
    graph = for_caller(thread_graph(saver), caller, body)
    return graph, payload, {"configurable": {"thread_id": thread}}, answer_fields


def _index_run(body: dict[str, Any], caller: Caller) -> tuple[Any, dict, dict, Callable[[dict], dict]]:
    from longqa.graph.index_graph import graph

    payload = payload_of(body, INDEX_KEYS - {"context"})
    return graph, payload, {}, lambda final: {k: final.get(k) for k in INDEX_OUTPUT}


def _events(run: tuple, context: Settings, stopped: threading.Event, put: Callable[[dict], None]) -> None:
    """Run the graph in this (worker) thread, putting each event; the last one is the result. Once
    the page has gone the run stops between steps, and within one at its next file or embedding batch."""
    graph, payload, config, output = run
    final: dict[str, Any] = {}
    with cancelled_by(stopped):
        for mode, chunk in graph.stream(payload, config=config, context=context, stream_mode=MODES):
            if stopped.is_set():
                raise _Stopped()
            if mode == "values":
                final = chunk
            elif mode == "custom" and isinstance(chunk, dict):
                put({"type": "progress", **{k: chunk.get(k) for k in ("node", "step", "done", "total", "message")}})
            elif mode == "updates" and isinstance(chunk, dict):
                for node, update in chunk.items():
                    put({"type": "step", "node": str(node), "trace": _trace(update)})
    put({"type": "result", "result": output(final)})


def _line(event: dict, scrub) -> bytes:
    if event.get("type") == "result":
        event = {"type": "result", "result": scrub.result(event["result"])}
    text = json.dumps(event, default=str)
    return (scrub(text) + "\n").encode()


async def _stream(run: tuple, context: Settings, scrub, slot: _Slot) -> AsyncIterator[bytes]:
    slot.started = True
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict | None] = asyncio.Queue()
    stopped = threading.Event()

    def put(event: dict | None) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    def work() -> None:
        try:
            _events(run, context, stopped, put)
        except (_Stopped, Cancelled):
            log.warning("page run stopped: the page went away")
        except Exception as e:  # the graph reports its own failures; this is the replica's
            log.exception("page run failed")
            put({"type": "error", "error": f"{type(e).__name__}: {str(e)[:300]}"})
        finally:
            slot.give()  # an index job's slot is given back when its thread ends, not when the page leaves
            put(None)

    worker = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while (event := await queue.get()) is not None:
            yield _line(event, scrub)
    finally:
        stopped.set()  # the page went away (or the run ended): the thread stops after its step
        worker.add_done_callback(lambda done: done.exception())


def stream_endpoint(action: str, keys: KeyStore, limits: ServerLimits, deployment: Settings, jobs: JobSlots):
    """POST /page/api/<action>: /ask or /index's checks, then the run streamed as NDJSON events. An
    index run holds one of the key's `jobs` slots (shared with the page's uploads) until its thread ends."""
    from longqa.services.text_limits import texts_problem

    allowed = ASK_KEYS if action == "ask" else INDEX_KEYS
    prepare = _ask_run if action == "ask" else _index_run
    scrub, ceilings, root = PathScrubber(deployment), deployment_ceilings(deployment), deployment.documents_root

    async def endpoint(request: Request) -> Response:
        try:
            caller = identify(keys, request.headers, request.client.host if request.client else None)
            # parsed off the event loop: a large body never stalls the other callers
            body = await run_in_threadpool(parse_body, await read_body(request, limits), allowed, deployment, ceilings)
            problem = question_problem(body, limits.max_question_chars)
            if problem:
                raise BadRequest(problem, 422)
            if texts := texts_problem(body.get("texts"), deployment):
                raise BadRequest(texts.message, texts.status)
            await run_in_threadpool(authorize, caller, action, body, root)
            run = await run_in_threadpool(prepare, body, caller)
            if action == "index":
                jobs.take(caller)
            slot = _Slot((lambda: jobs.give(caller)) if action == "index" else (lambda: None))
        except (Denied, BadRequest) as e:
            return _refused(scrub(str(e)), e.status)
        except Busy as e:
            return _refused(str(e), 429)
        except SettingsError as e:
            log.error("%s: %s", request.url.path, e)
            return _refused("the server's configuration cannot be read; its log says why", 503)
        except Exception as e:  # the replica's own failure before the run (a database down), as /ask says it
            log.exception("%s failed", request.url.path)
            return _refused(scrub(f"{type(e).__name__}: {str(e)[:300]}"), 500)
        headers = page_headers({"X-Accel-Buffering": "no"})
        return StreamingResponse(
            _stream(run, body["context"], scrub, slot),
            media_type="application/x-ndjson",
            headers=headers,
            background=BackgroundTask(slot.unless_started),
        )

    return endpoint


def _refused(message: str, status: int) -> JSONResponse:
    headers = page_headers({"Connection": "close"})
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="longqa"'
    return JSONResponse({"error": message}, status_code=status, headers=headers)
