"""On the LangGraph server, a run its caller waits for (`runs/wait`, `runs/stream`) is cancelled
when the caller disconnects, unless the caller asked otherwise. LangGraph's own default is
`on_disconnect: "continue"`: a client that gives up leaves the run working for nobody (issue 45).
The run guard (longqa/http/server_app.py) fills in `"cancel"` where the body does not say; a caller that
wants a run to outlive its connection sends `"continue"`, or creates a background run (`runs`, which
no disconnect ends). LangGraph then cancels the run's task; a node's own thread stops at its next
file or embedding batch (graph/node.py `stoppable`, nodes/index_documents.py, retrieval/cancel.py)."""

from __future__ import annotations

import json
import re
from typing import Any

_WAITED = re.compile(r"^(?:/threads/[^/]+)?/runs/(?:wait|stream)/?$")  # the run creations a client waits on


def cancel_on_disconnect(path: str, body: Any, raw: bytes) -> bytes:
    """The body to pass on: with `"on_disconnect": "cancel"` added to a waited run that does not say."""
    if not _WAITED.match(path) or not isinstance(body, dict) or "on_disconnect" in body:
        return raw
    return json.dumps({**body, "on_disconnect": "cancel"}).encode()
