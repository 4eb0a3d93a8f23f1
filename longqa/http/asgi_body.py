"""What the LangGraph server's guards (longqa/http/server_app.py, longqa/http/state_guard.py) do with a request
body before LangGraph sees it: read it whole within the body limit, refuse a request with a JSON `detail`, and pass
the body on as if it had not been read. Hand-written: Starlette's Request reads a body once, and these are raw ASGI
middleware in front of LangGraph's own app."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from starlette.types import Message, Receive, Send


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's whole body, or None once it passes `limit` bytes (the rest is not read)."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
        if size > limit:
            return None
    return b"".join(chunks)


async def refuse(send: Send, status: int, detail: str) -> None:
    """Answer `status` with `{"detail": detail}` and close the connection."""
    payload = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})


def replaying(raw: bytes, receive: Receive) -> Callable[[], Awaitable[Message]]:
    """A `receive` that gives the app `raw` (the body already read) first, then what the client sends next."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay
