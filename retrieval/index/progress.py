"""Progress of long steps over LangGraph's custom stream (`stream_mode="custom"`): an SDK client,
Studio and the CLI see "prepare: embedding 120/217 chunks of report.md (g=150)" while it happens.

Each event is a dict: node, step, done, total, message. Outside a graph run (a plain function call)
there is no stream and nothing is sent."""

from __future__ import annotations

import time
from collections.abc import Callable

from langgraph.config import get_stream_writer

from ..cancel import check_cancelled
from .library.manifest import Event

EVERY_S = 0.5  # at most two events a second per step, plus the first and the last


def emit(node: str, step: str, message: str, done: int | None = None, total: int | None = None) -> None:
    """One progress event on the run's custom stream (a no-op outside a run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # not inside a graph run
        return
    writer({"node": node, "step": step, "done": done, "total": total, "message": f"{node}: {message}"})


def library_progress(node: str) -> Callable[[Event], None]:
    """A progress callback for `Library.update` (reading files, embedding each document, indexing):
    throttled per step and document. Each event is also where a run whose client has gone stops
    (retrieval/cancel.py)."""
    last: dict[tuple[str, str], float] = {}

    def report(event: Event) -> None:
        check_cancelled()
        now, key = time.monotonic(), (event.step, event.source)
        if event.done in (0, event.total) or now - last.get(key, 0.0) >= EVERY_S:
            last[key] = now
            emit(node, event.step, event.message, event.done, event.total)

    return report
