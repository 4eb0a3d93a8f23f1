"""No server path in a response, on both servers: the documents root and the index home are replaced
in what a caller reads (a document named relative to the root, the home as `<index home>`).
`longqa serve` scrubs every string of its JSON answers (`PathScrubber.result`: `trace`, `error`,
`skipped`, any field); the LangGraph server's responses pass through `PathScrubMiddleware`
(langgraph.json `http.app`, longqa/http/server_app.py), which does the same to the bytes of every
response body, streamed ones included. Hand-written: a byte replacement over ASGI messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from longqa.contracts.settings import Settings


class PathScrubber:
    """Errors name documents relative to the documents root and never show the server's paths."""

    def __init__(self, settings: Settings):
        self.paths: list[tuple[str, str]] = []
        for path, shown in ((settings.documents_root, ""), (settings.home, "<index home>/")):
            if path is not None:
                for form in {str(Path(path).expanduser()), str(Path(path).expanduser().resolve())}:
                    self.paths.append((form.rstrip("/") + "/", shown))
                    self.paths.append((form.rstrip("/"), shown.rstrip("/") or "."))

    def __call__(self, text: str) -> str:
        for path, shown in self.paths:
            text = text.replace(path, shown)
        return text

    def data(self, raw: bytes) -> bytes:
        """A response body's bytes with the server's paths replaced (UTF-8 JSON holds a path as written)."""
        for path, shown in self.paths:
            raw = raw.replace(path.encode(), shown.encode())
        return raw

    def result(self, result: Any) -> Any:
        """Every string of a response (`trace`, `error`, `skipped`, keys too), scrubbed; walked without recursion."""
        top: list[Any] = [result]
        stack: list[tuple[Any, Any]] = [(top, 0)]
        while stack:
            holder, key = stack.pop()
            value = holder[key]
            if isinstance(value, str):
                holder[key] = self(value)
            elif isinstance(value, dict):
                renamed = {self(k) if isinstance(k, str) else k: v for k, v in value.items()}
                value.clear()
                value.update(renamed)
                stack.extend((value, k) for k in value)
            elif isinstance(value, list):
                stack.extend((value, i) for i in range(len(value)))
        return top[0]


class PathScrubMiddleware:
    """ASGI middleware: every HTTP response body with the server's paths replaced. A body sent whole
    gets its Content-Length told again; a streamed one (server-sent events) is scrubbed chunk by
    chunk (a path split across two chunks is not: LangGraph sends one event per chunk)."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.scrub = PathScrubber(Settings())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.scrub.paths:
            await self.app(scope, receive, send)
            return
        start: Message | None = None

        async def scrubbed(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message  # sent with the first body, once its length is known
                return
            if message["type"] == "http.response.body":
                body = self.scrub.data(message.get("body", b""))
                if start is not None:
                    await send(_with_length(start, len(body)) if not message.get("more_body") else _unsized(start))
                    start = None
                await send({**message, "body": body})
                return
            await send(message)

        await self.app(scope, receive, scrubbed)
        if start is not None:  # a response with no body message
            await send(start)


def _with_length(start: Message, length: int) -> Message:
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    return {**start, "headers": [*headers, (b"content-length", str(length).encode())]}


def _unsized(start: Message) -> Message:
    """A streamed response's start without a Content-Length (its chunks may shrink)."""
    return {**start, "headers": [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]}
