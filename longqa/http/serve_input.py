"""What `longqa serve` takes in before a run starts, the same for its JSON endpoints (longqa/http/serve.py) and
the page's streamed ones and uploads (longqa/http/page/): a POST body read within the size and time limits,
parsed, checked for depth and strict types and its `context` resolved within the ceilings (`BadRequest`
otherwise, with its status), the payload a run gets and the question graph it runs on."""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

from starlette.requests import Request

from longqa.contracts.ceilings import Ceilings, caller_context
from longqa.contracts.settings import Settings, SettingsError
from longqa.http.limits import ServerLimits, json_shape_problem
from longqa.http.requests import AskRequest, IndexRequest, RequestError, granularities_problem, parsed

ASK_KEYS = set(AskRequest.model_fields)
INDEX_KEYS = set(IndexRequest.model_fields)


class BadRequest(ValueError):
    """A request refused before it runs, with its HTTP status (400 unless named: 408, 413, 415 ...)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


async def read_body(request: Request, limits: ServerLimits) -> bytes:
    """The body, read as it arrives: refused as soon as it passes the limit (or declares it will),
    and when the client takes longer than the body timeout to send it."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise BadRequest(f"send the body as application/json (got {media or 'no content type'!r})", 415)
    limit = limits.max_body_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body over {limit // 2**20} MiB", 413)
    body = bytearray()
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise BadRequest(f"request body over {limit // 2**20} MiB", 413)
    except TimeoutError:
        raise BadRequest(f"the body took longer than {limits.body_timeout_s:g} s to arrive", 408) from None
    return bytes(body)


def parse_body(raw: bytes, allowed: set[str], deployment: Settings, ceilings: Ceilings) -> dict[str, Any]:
    """The body as a dict, its `context` resolved into the run's Settings: the caller's choices
    within the ceilings, the deployment's own values for the rest (validated here, once per run)."""
    if problem := json_shape_problem(raw):  # its nesting too: the parser never recurses past MAX_JSON_DEPTH
        raise BadRequest(problem)
    try:
        body = json.loads(raw or b"{}", parse_constant=_no_constant)
    except ValueError as e:
        raise BadRequest(f"the body is not JSON ({str(e)[:200]})") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        shown = ", ".join(repr(k[:60]) for k in unknown[:5])
        raise BadRequest(f"unknown field(s) {shown}; expected some of {sorted(allowed)}", 422)
    try:  # strict types before any grant is checked (longqa/http/requests.py)
        body = parsed(IndexRequest if allowed == INDEX_KEYS else AskRequest, body)
    except RequestError as e:
        raise BadRequest(str(e), 422) from None
    if problem := granularities_problem(body.get("granularities"), ceilings):
        raise BadRequest(problem, 422)
    try:
        chosen = caller_context(body.get("context"), ceilings).model_dump(exclude_unset=True)
    except SettingsError as e:
        raise BadRequest(f"invalid run context: {e}", 422) from None
    body["context"] = deployment.model_copy(update=chosen)
    return body


def payload_of(body: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    """The fields of `body` named in `keys` that say something (not None, [] or "")."""
    return {k: v for k, v in body.items() if k in keys and v not in (None, [], "")}


@functools.cache
def thread_graph(saver):
    """The question graph compiled with a thread's checkpointer, once per checkpointer."""
    from longqa.graph.graph import build_graph

    return build_graph().compile(checkpointer=saver)


def question_graph():
    """The question graph without threads (compiled once, by longqa/graph/graph.py)."""
    from longqa.graph.graph import graph

    return graph
