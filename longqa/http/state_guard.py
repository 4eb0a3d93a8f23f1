"""ASGI middleware before the LangGraph server (langgraph.json `http.app`, longqa/http/server_app.py): a
thread's state update (`POST /threads/{id}/state`) and a new thread's `supersteps` (`POST /threads`)
are checked as a run's input is: strict types (422, longqa/http/requests.py), then the caller's grants on
every file and collection they would put in the thread (403, longqa/http/access.py). LangGraph's custom
auth is shown only the thread's id for these, not the values, so the check is here. Hand-written:
plain ASGI, buffering only these bodies, within the server's body limit."""

from __future__ import annotations

import asyncio
import json
import re

from starlette.types import ASGIApp, Receive, Scope, Send

from longqa.contracts.settings import Settings, SettingsError
from longqa.http.access import Denied, authorize, identify
from longqa.http.asgi_body import read_body, refuse, replaying
from longqa.http.keys import KeyStore, keys_file
from longqa.http.limits import ServerLimits
from longqa.http.requests import RequestError
from longqa.http.run_inputs import state_payloads

_STATE_PATH = re.compile(r"^/threads(?:/[^/]+/state)?/?$")  # POST /threads, POST /threads/{id}/state


class StateUpdateGuard:
    """Refuses a state update that names what the caller's key may not read; passes everything else on."""

    def __init__(self, app: ASGIApp):
        self.app = app
        deployment = Settings()
        self.root = deployment.documents_root
        self.keys = KeyStore(keys_file(deployment))
        self.limit = ServerLimits().max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _STATE_PATH.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        raw = await read_body(receive, self.limit)
        if raw is None:
            await refuse(send, 413, f"request body over {self.limit // 2**20} MiB")
            return
        refusal = await asyncio.to_thread(self._refusal, scope, raw)  # the keys file and the paths are read
        if refusal:
            await refuse(send, *refusal)
            return
        await self.app(scope, replaying(raw, receive), send)

    def _refusal(self, scope: Scope, raw: bytes) -> tuple[int, str] | None:
        """(status, why) for an update the caller may not make, else None (LangGraph answers the rest)."""
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            return None  # not JSON, or too deep: LangGraph's own validation answers it
        try:
            payloads = state_payloads(scope["path"].rstrip("/") == "/threads", body)
            if not payloads:
                return None
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            client = scope.get("client")
            caller = identify(self.keys, headers, client[0] if client else None)
            action = "ask" if caller.can("ask") else "index"
            for payload in payloads:
                authorize(caller, action, payload, self.root)
        except RequestError as e:
            return e.status, str(e)
        except Denied as e:
            return e.status, str(e)
        except SettingsError:
            return 503, "the server's keys cannot be read; its log says why"
        return None
