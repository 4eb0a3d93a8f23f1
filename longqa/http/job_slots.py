"""How many index runs one API key may have under way at once on `longqa serve`
(`ServerLimits.max_index_jobs_per_key`, LONGQA_MAX_INDEX_JOBS): one more is refused with 429 at
once, not queued, so a caller cannot stack up minutes of embedding work behind its first job. A key
is known by what it names (tenant, grants, collections, folders: longqa/http/access.py's `Caller`), so
two keys with the very same grants share their slots."""

from __future__ import annotations

import threading
from collections.abc import Hashable


class Busy(Exception):
    """This key already has as many jobs under way as it may."""


class JobSlots:
    """A counter of jobs under way per key, safe between threads and the event loop (no await held)."""

    def __init__(self, per_key: int):
        self.per_key = per_key
        self._running: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def take(self, key: Hashable) -> None:
        """A slot for `key`, given back with `give` when its job ends; `Busy` at once when it has none free."""
        with self._lock:
            if self._running.get(key, 0) >= self.per_key:
                raise Busy(
                    f"this key already has {self.per_key} index job{'s' if self.per_key > 1 else ''} under way "
                    "(LONGQA_MAX_INDEX_JOBS); wait for it to finish, then send this one again"
                )
            self._running[key] = self._running.get(key, 0) + 1

    def give(self, key: Hashable) -> None:
        """Give back a slot `take` gave."""
        with self._lock:
            left = self._running.pop(key, 1) - 1
            if left:
                self._running[key] = left
