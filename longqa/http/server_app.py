"""What longqa adds to LangGraph's server (langgraph.json `http.app`):
- a thread pool sized for the nodes' own work (`node_thread_pool`, the app's lifespan);
- a guard on run settings. LangGraph's server drops every context key its schema does not list,
  silently, so a mistyped `"modle"` would quietly make a run evidence-only. This middleware refuses
  such a request with HTTP 422 naming the key and the nearest valid one, a deployment-locked key
  (`home`, `base_url`, ...) naming it as locked, and a bad value or one over the deployment's
  ceiling naming the field (the run would otherwise fail only once it started). Hand-written: no
  library validates LangGraph run bodies; it is plain ASGI and buffers only run-creating bodies.
  Who may run what is longqa/http/auth.py's (LangGraph's custom auth). The same guard refuses inline
  `texts` over the deployment's limits (413 or 422, services/text_limits.py) and makes a waited run
  (`runs/wait`, `runs/stream`) end when its caller disconnects unless the body says otherwise
  (longqa/http/disconnect.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from longqa.contracts.ceilings import caller_context
from longqa.contracts.settings import SERVER_LOCKED, RunContext, Settings, SettingsError
from longqa.http.asgi_body import read_body, refuse, replaying
from longqa.http.disconnect import cancel_on_disconnect
from longqa.http.limits import MAX_JSON_DEPTH, ServerLimits
from longqa.http.meta_guard import MetaRoutesGuard
from longqa.http.scrub import PathScrubMiddleware
from longqa.http.state_guard import StateUpdateGuard
from longqa.services.text_limits import run_texts_problem

log = logging.getLogger(__name__)

# POST /runs, /runs/wait, /runs/stream, /runs/batch, /threads/{id}/runs[/wait|/stream], /runs/crons ...
_RUN_PATH = re.compile(r"^(?:/threads/[^/]+)?/runs(?:/wait|/stream|/batch|/crons)?/?$")
MAX_BODY = ServerLimits().max_body_bytes


def context_problem(body: Any) -> str | None:
    """Why a run body's context cannot be used, or None: a name that is not a caller's setting, a
    value that is not valid, or one over the deployment's ceiling (contracts/ceilings.py). Settings
    sent in `config.configurable` (LangGraph's older way, which it copies into the context) are
    checked as well. A batch is a list of bodies."""
    for item in body if isinstance(body, list) else [body]:
        if not isinstance(item, dict):
            continue
        context = item.get("context")
        configurable = (item.get("config") or {}).get("configurable") if isinstance(item.get("config"), dict) else None
        if isinstance(configurable, dict) and not context:
            context = {k: v for k, v in configurable.items() if k in RunContext.model_fields or k in SERVER_LOCKED}
        if context is not None:
            try:
                caller_context(context)
            except SettingsError as e:
                return str(e)
    return None


class RunContextGuard:
    """ASGI middleware before LangGraph's server: a run-creating POST is buffered (413 over the body limit, 400
    nested too deep) and refused with 422 when its context is not usable; the rest passes through."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _RUN_PATH.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive, MAX_BODY)
        if raw is None:
            await refuse(send, 413, f"request body over {MAX_BODY // 2**20} MiB")
            return
        try:
            body = json.loads(raw or b"{}")
            problem = context_problem(body)
        except RecursionError:
            await refuse(send, 400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
            return
        except (ValueError, UnicodeDecodeError):
            body, problem = None, None  # not JSON: the server's own validation answers it
        if problem:
            await refuse(send, 422, f"invalid run context: {problem}")
            return
        if texts := run_texts_problem(body):  # inline texts over the deployment's limits: 413 or 422
            await refuse(send, texts.status, texts.message)
            return
        raw, scope = _waited_runs_cancel(scope, body, raw)
        await self.app(scope, replaying(raw, receive), send)


def _waited_runs_cancel(scope: Scope, body: Any, raw: bytes) -> tuple[bytes, Scope]:
    """A run its caller waits for is cancelled when the caller leaves, unless it says otherwise
    (longqa/http/disconnect.py); the body's length told again when it changed."""
    sent = cancel_on_disconnect(scope["path"], body, raw)
    if sent is raw:
        return raw, scope
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
    return sent, {**scope, "headers": [*headers, (b"content-length", str(len(sent)).encode())]}


@contextlib.asynccontextmanager
async def node_thread_pool(_app: Starlette) -> AsyncIterator[None]:
    """The thread pool for the nodes' own work on this server: LangGraph runs a sync node, and a
    model node's own stretches (llm/model_node.py), in its event loop's default executor, Python's
    min(32, cpus + 4) threads (6 on 2 cores), shared by every run. Model calls are awaited and hold
    no thread, but a run waiting for another run's index build, or searching, does. 0 keeps
    Python's default; bench/server_concurrency.py measures both."""
    threads = Settings().node_threads
    if not threads:
        yield
        return
    # the loop shuts its default executor down when it closes; not here, where the server's own
    # shutdown (after this) still hands work to it
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=threads, thread_name_prefix="longqa-node")
    )
    log.info("longqa: %d threads for graph nodes (LONGQA_NODE_THREADS)", threads)
    yield


app = Starlette(lifespan=node_thread_pool)
app.add_middleware(RunContextGuard)
app.add_middleware(StateUpdateGuard)  # a thread's state updates meet the caller's grants (longqa/http/state_guard.py)
app.add_middleware(PathScrubMiddleware)  # no server path in any response (longqa/http/scrub.py)
app.add_middleware(MetaRoutesGuard)  # /info, /docs, /openapi.json, /metrics behind a key (longqa/http/meta_guard.py)
