"""ASGI middleware before the LangGraph server (langgraph.json `http.app`, longqa/http/server_app.py): its
own descriptions of itself are behind a key. `/info`, `/docs` and `/openapi.json` (what Studio and an
SDK client read to connect) need a valid key (401 without one, as every API route does), `/metrics`
(the whole server's counts, every tenant's) an `admin` key (403); `/ok` stays open for load balancers.
With no keys configured, only this machine's own callers pass (longqa/http/access.py). Hand-written: plain
ASGI, reading only the request's headers."""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Receive, Scope, Send

from longqa.contracts.settings import Settings, SettingsError
from longqa.http.access import Caller, Denied, identify
from longqa.http.keys import KeyStore, keys_file

BEHIND_A_KEY = {"/info", "/docs", "/openapi.json", "/metrics"}
ADMIN_ONLY = {"/metrics"}


class MetaRoutesGuard:
    """Refuses the server's meta routes to a caller without a key (or, for `/metrics`, without `admin`)."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.keys = KeyStore(keys_file(Settings()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") or "/"
        if scope["type"] != "http" or path not in BEHIND_A_KEY:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        try:  # the keys file is reread from disk when it changed: off the event loop
            caller: Caller = await asyncio.to_thread(identify, self.keys, headers, client[0] if client else None)
            if path in ADMIN_ONLY and not caller.can("admin"):
                raise Denied(403, f"{path} takes an admin key")
        except Denied as e:
            await _answer(send, e.status, str(e))
            return
        except SettingsError:
            await _answer(send, 503, "the server's keys cannot be read; its log says why")
            return
        await self.app(scope, receive, send)


async def _answer(send: Send, status: int, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
