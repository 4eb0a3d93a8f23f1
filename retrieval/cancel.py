"""A run's work stops when its caller has gone. A server marks the run's context with an event
(`cancelled_by`) and sets it when the client disconnects; long loops below the graph (reading
files, embedding documents: `Library.update`'s progress, retrieval/index/progress.py) call
`check_cancelled` and raise `Cancelled`, so a step that would take minutes stops at its next file or
batch instead of running on for nobody. A context variable, not an argument: LangGraph copies the
context into the threads it runs nodes in, and no node or library signature has to carry it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

_event: ContextVar[threading.Event | None] = ContextVar("longqa_cancelled", default=None)


class Cancelled(Exception):
    """The caller of this run has gone: its work stopped where it was checked."""

    expected = True  # the node wrapper (graph/node.py) ends the run with it and logs no traceback


@contextlib.contextmanager
def cancelled_by(event: threading.Event) -> Iterator[None]:
    """Within this block (and the threads LangGraph starts from it), work stops once `event` is set."""
    token = _event.set(event)
    try:
        yield
    finally:
        _event.reset(token)


def check_cancelled() -> None:
    """Raise `Cancelled` when this run's caller has gone; a no-op outside `cancelled_by`."""
    event = _event.get()
    if event is not None and event.is_set():
        raise Cancelled("the client went away; the run was stopped")
