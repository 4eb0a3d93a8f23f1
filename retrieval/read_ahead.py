"""A library update's files read ahead of its loop, several at once (issue #32). A `BoundedReader`
keeps `READ_WORKERS` reader processes, but an update that asked for one file at a time kept only one
of them busy; here each reads a file while the others are read."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from .bounded import READ_WORKERS
from .documents import Document
from .manifest import Member


class ReadAhead:
    """Within the block, `load(member)` gives each member's document (or raises its `DocumentError`).
    The `parallel` members (read in reader processes) are read from the start, in their order,
    `threads` at a time; the others are read when asked, in the caller's thread (a reader in this
    process may not be safe to run twice at once). Leaving the block cancels the reads not begun; one
    in progress ends in its thread, within the reader's time ceiling."""

    def __init__(self, members: Sequence[Member], threads: int = READ_WORKERS):
        self._ahead = [m for m in members if m.parallel]
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._reads: dict[int, Future[Document]] = {}

    def __enter__(self) -> ReadAhead:
        if len(self._ahead) > 1 and self._threads > 1:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="longqa-read")
            self._reads = {id(m): self._pool.submit(m.load) for m in self._ahead}
        return self

    def load(self, member: Member) -> Document:
        read = self._reads.pop(id(member), None)
        return read.result() if read is not None else member.load()

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
