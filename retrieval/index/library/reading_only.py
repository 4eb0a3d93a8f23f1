"""Reading only: runs inside `reading_only()` search libraries as they are and write nothing. A
library that is missing, changed since it was indexed, or lacks a chunk size is `ReadingOnly`
instead of updated, and an inline library's last use is not recorded. The warm server's rehearsal
(longqa/warm/rehearsal.py) runs a question this way, so warming up never indexes what nobody asked for.

A context variable, not a process flag: another run in the same process (a question that arrives
while a rehearsal finishes) still updates as always; LangGraph runs nodes in copies of the context
of the run that started them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

READING_ONLY = "reading only: nothing is written"
_reading_only: ContextVar[str | None] = ContextVar("longqa_reading_only", default=None)  # why, within the block


class ReadingOnly(ValueError):
    """A write (an index update) asked for within `reading_only()`: an end the run expects, said in one line
    without a traceback (graph/node.py `failure`)."""

    expected = True


@contextlib.contextmanager
def reading_only(why: str = READING_ONLY) -> Iterator[None]:
    """Within the block, in this thread and the runs it starts: no library is written (`why` says so in the
    refusal)."""
    token = _reading_only.set(why)
    try:
        yield
    finally:
        _reading_only.reset(token)


def is_reading_only() -> bool:
    """Whether this context may not write libraries."""
    return _reading_only.get() is not None


def refuse_writes(library: str) -> None:
    """Raise `ReadingOnly` within `reading_only()` (called where a library would be updated)."""
    why = _reading_only.get()
    if why is not None:
        raise ReadingOnly(f"library {library} would have to be updated first ({why})")
