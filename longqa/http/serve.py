"""`longqa serve`: one replica, an HTTP application that embeds the two graphs and owns their
checkpointer. Run several behind a load balancer with the same Chroma server (CHROMA_HOST) and the
same PostgreSQL (LONGQA_POSTGRES_URI): any replica answers over any library and continues any
thread (README, "Deployment").

    GET  /health                 {"ok": true}
    POST /index  {documents?, texts?, collection?, include?, exclude?, granularities?, context?}
    POST /ask    {question, documents?, texts?, collection?, include?, exclude?, thread_id?, context?}
    GET  /       the page for people, and its reads under /page/ (longqa/http/page/api.py, README "The page")

Every POST names its caller by API key (longqa/http/access.py: 401 without one, 403 outside its grants;
a thread another tenant started is 404) and sends `application/json` (415 otherwise: a browser
cannot post that across sites without asking first). The body is read under a size limit and a
time limit, checked for depth before use, and `context` within the deployment's ceilings
(contracts/ceilings.py: 422 naming the field), inline `texts` within the deployment's limits
(services/text_limits.py: 413 or 422), and one key has at most LONGQA_MAX_INDEX_JOBS index runs under
way (429 past them). The graphs run in worker threads, streamed step by step, so a replica serves many
requests at once and stops a run whose client has gone: between steps, and within one at its next file
or embedding batch (retrieval/cancel.py).
Hand-written: LangGraph's own server keeps threads in its in-memory runtime (`langgraph dev`) or
in its licensed deployment, not in a checkpointer we choose."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from longqa.contracts.ceilings import deployment_ceilings
from longqa.contracts.settings import Settings, SettingsError
from longqa.http.access import HOW_TO_ADD_KEYS, Caller, Denied, authorize, identify, is_loopback, names_loopback
from longqa.http.ask_only import for_caller
from longqa.http.job_slots import Busy, JobSlots
from longqa.http.keys import KeyStore, keys_file
from longqa.http.limits import ServerLimits, question_problem
from longqa.http.page.api import page_routes  # the page at / and its reads (README, "The page")
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
from longqa.services.text_limits import texts_problem

log = logging.getLogger(__name__)


class ClientLeft(Exception):
    """The client closed its connection: its run stops at the next step."""


def _final(graph, payload: dict, config: dict, context: Settings, cancelled: threading.Event) -> dict[str, Any]:
    """Run the graph step by step; stop between steps once the client has gone, and within a step
    at its next file or embedding batch (retrieval/cancel.py)."""
    final: dict[str, Any] = {}
    with cancelled_by(cancelled):
        for values in graph.stream(payload, config=config, context=context, stream_mode="values"):
            final = values
            if cancelled.is_set():
                raise ClientLeft()
    return final


def _ask(body: dict[str, Any], caller: Caller, cancelled: threading.Event) -> dict[str, Any]:
    from longqa.runner.threads import claim_thread, thread_checkpointer

    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BadRequest("'question' must be a non-empty string", 422)
    scope = payload_of(body, {"documents", "texts", "collection", "include", "exclude"})
    thread = body.get("thread_id")
    if thread is not None and (not isinstance(thread, str) or not thread or len(thread) > 256):
        raise BadRequest("'thread_id' must be a string of 1-256 characters", 422)
    if thread:  # a conversation: the checkpointer keeps it, on whichever replica the next turn lands
        saver = thread_checkpointer(body["context"])
        if not caller.owns(claim_thread(saver, thread, caller.thread_owner)):  # another tenant's, or a wider key's
            raise Denied(404, f"no thread {thread[:60]!r}")  # not even its existence
        graph = for_caller(thread_graph(saver), caller, body)
        payload = {"messages": [HumanMessage(question)], **scope}
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
    else:
        graph, payload, config = for_caller(question_graph(), caller, body), {"question": question, **scope}, {}
    return answer_fields(_final(graph, payload, config, body["context"], cancelled))


def _index(body: dict[str, Any], caller: Caller, cancelled: threading.Event) -> dict[str, Any]:
    from longqa.graph.index_graph import graph

    return _final(graph, payload_of(body, INDEX_KEYS - {"context"}), {}, body["context"], cancelled)


def _stopped(path: str, work: asyncio.Future) -> None:
    """A left client's run has ended: how (stopped within a step, between steps, or done anyway)."""
    error = work.exception()
    how = "stopped within its step" if isinstance(error, Cancelled) else "ended" if error is None else "stopped"
    log.warning("%s: the run whose client left has %s", path, how)


async def _until_disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _error(message: str, status: int) -> JSONResponse:
    # the connection closes: a body the refusal left unread is not read (uvicorn would drain it)
    headers = {"Connection": "close"}
    if status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="longqa"'
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _endpoint(
    action: str, run: Callable, allowed: set[str], keys: KeyStore, limits: ServerLimits, deployment: Settings
):
    scrub = PathScrubber(deployment)
    root = deployment.documents_root
    ceilings = deployment_ceilings(deployment)
    jobs = JobSlots(limits.max_index_jobs_per_key) if action == "index" else None

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
            cancelled = threading.Event()
            if jobs:  # held until the run's thread ends, even after its client has gone
                jobs.take(caller)
            work = asyncio.ensure_future(run_in_threadpool(run, body, caller, cancelled))
            if jobs:
                work.add_done_callback(lambda _: jobs.give(caller))
            gone = asyncio.ensure_future(_until_disconnected(request))
            try:
                await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
            if not work.done():
                cancelled.set()  # the thread ends its run after the step under way
                work.add_done_callback(functools.partial(_stopped, request.url.path))  # nobody to tell
                log.warning("%s: the client left; its run stops after the current step", request.url.path)
                return Response(status_code=499)
            result = work.result()
        except (Denied, BadRequest) as e:
            return _error(scrub(str(e)), e.status)
        except Busy as e:
            return _error(str(e), 429)
        except SettingsError as e:  # the keys file or the environment, not the caller
            log.error("%s: %s", request.url.path, e)
            return _error("the server's configuration cannot be read; its log says why", 503)
        except Exception as e:  # the graph reports its own failures; this is the replica's (a database down)
            log.exception("%s failed", request.url.path)
            return _error(scrub(f"{type(e).__name__}: {str(e)[:300]}"), 500)
        return JSONResponse(scrub.result(json.loads(json.dumps(result, default=str))))

    return endpoint


async def health(request: Request) -> JSONResponse:
    """`GET /health`: the replica is up."""
    return JSONResponse({"ok": True})


def build_app(
    keys: KeyStore | None = None, limits: ServerLimits | None = None, deployment: Settings | None = None
) -> Starlette:
    """The replica's application. It runs as a server (its settings' `server`, whatever the
    environment says): files only under LONGQA_DOCUMENTS_ROOT, run settings limited to what a caller
    may choose and the deployment's ceilings, callers named by the keys in LONGQA_KEYS_FILE. The
    deployment's settings are read once, here (`deployment`, else the environment)."""
    deployment = (deployment or Settings()).model_copy(update={"server": True})
    keys = keys or KeyStore(keys_file(deployment))
    keys.configured()  # a damaged keys file stops the start, naming it
    deployment_ceilings(deployment)  # and so does an unusable LONGQA_CEILINGS
    limits = limits or ServerLimits()
    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/ask", _endpoint("ask", _ask, ASK_KEYS, keys, limits, deployment), methods=["POST"]),
        Route("/index", _endpoint("index", _index, INDEX_KEYS, keys, limits, deployment), methods=["POST"]),
    ]
    routes += page_routes(keys, limits, deployment)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        from longqa.runner.threads import close_checkpointers

        close_checkpointers()

    return Starlette(routes=routes, lifespan=lifespan)


def _loopback_bind(host: str) -> bool:
    return host == "localhost" or is_loopback(host) or names_loopback(host)


def serve(host: str, port: int, home: Path | None = None) -> None:
    """Run the replica (its index home `home`, else LONGQA_HOME's); without keys it listens only on a
    loopback address (SettingsError otherwise)."""
    import uvicorn

    from longqa.http.serve_protocol import protocol_with_header_timeout

    deployment = Settings(server=True, **({"home": home} if home else {}))
    keys = KeyStore(keys_file(deployment))
    if not keys.configured() and not _loopback_bind(host):
        raise SettingsError(
            f"refusing to listen on {host}: no API keys are configured ({keys.path} holds none), so anyone "
            f"who reaches the port could read and index every collection; {HOW_TO_ADD_KEYS}. "
            "Without keys, listen on 127.0.0.1 only."
        )
    limits = ServerLimits()
    uvicorn.run(
        build_app(keys, limits, deployment),
        host=host,
        port=port,
        log_level="warning",
        http=protocol_with_header_timeout(limits.header_timeout_s),
        timeout_keep_alive=5,
        # headers still arriving: 16 KiB. h11 checks an unfinished block only, so a whole block read at once passes
        # up to its read buffer (measured: a 60 KiB header got 200, 200 KiB got 400)
        h11_max_incomplete_event_size=16 * 1024,
        server_header=False,
    )
