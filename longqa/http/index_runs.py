"""How many runs of the index graph one API key may have under way at once on the LangGraph server
(`langgraph dev`), as `longqa serve` allows (LONGQA_MAX_INDEX_JOBS, longqa/http/job_slots.py): one more
is refused with 429 when it is created, whether waited (`runs/wait`, `runs/stream`) or a background
run, and another key is not held up. The auth handler (longqa/http/auth.py) marks each index run with its
key (`index_key` in the run's metadata) and counts that key's runs LangGraph itself still has as
`pending` or `running`, so a run ends for this count exactly when LangGraph ends it (done, failed,
cancelled, its client gone) and nothing has to give a slot back. Its run records are read from the
in-memory runtime `langgraph dev` runs on (`langgraph_runtime_inmem`): LangGraph's API lists runs per
thread only. Hand-written: LangGraph has no per-user limit on runs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from typing import Any

from longqa.http.access import Caller

KEY_FIELD = "index_key"  # the run metadata naming the key that started an index run
_IN_FLIGHT = ("pending", "running")
_CLAIM_S = 10.0  # how long a claimed run counts until LangGraph stores it (one it refused after auth: at most this)
_LOOK_S = 0.02  # how often a claim looks for its stored run


def index_key(caller: Caller) -> str:
    """A short id of the key (what it names, as longqa/http/job_slots.py counts: keys with the very same grants
    share)."""
    named = json.dumps([caller.tenant, sorted(caller.grants), sorted(caller.collections), sorted(caller.documents)])
    return hashlib.sha256(named.encode()).hexdigest()[:16]


def _stored(kind: str) -> list[dict[str, Any]]:
    try:
        from langgraph_runtime_inmem.database import GLOBAL_STORE  # noqa: PLC0415 (only on the server)
    except ImportError:  # another runtime: only this process's own claims count
        return []
    return list(GLOBAL_STORE.get(kind) or [])


def _stored_runs() -> list[dict[str, Any]]:
    return _stored("runs")


def runs_index_graph(assistant_id: object) -> bool:
    """Whether an assistant (one an admin made: the graphs' own are known by their ids) runs the index graph."""
    return any(
        str(a.get("assistant_id")) == str(assistant_id) and a.get("graph_id") == "longqa-index"
        for a in _stored("assistants")
    )


class IndexRuns:
    """The index runs under way per key: LangGraph's own records, plus the runs claimed here that
    it has not stored yet (the auth handler runs before the run is stored)."""

    def __init__(self, per_key: int):
        self.per_key = per_key
        self._claims: dict[str, tuple[str, float]] = {}  # run id -> (key, when claimed)
        self._lock = threading.Lock()

    def claim(self, key: str, run_id: object) -> str | None:
        """Count one more index run of `key` (run `run_id`), or say why it may not start (then nothing is counted)."""
        with self._lock:
            now, stored = time.monotonic(), _stored_runs()
            self._settle({str(run.get("run_id")) for run in stored}, now)
            running = sum(
                1
                for run in stored
                if run.get("status") in _IN_FLIGHT and (run.get("metadata") or {}).get(KEY_FIELD) == key
            )
            running += sum(1 for k, _ in self._claims.values() if k == key)
            if running >= self.per_key:
                jobs = f"{self.per_key} index job{'s' if self.per_key > 1 else ''}"
                return (
                    f"this key already has {jobs} under way (LONGQA_MAX_INDEX_JOBS); "
                    "wait for it to finish, then send this one again"
                )
            claim = str(run_id) if run_id else f"unnamed-{now}"
            self._claims[claim] = (key, now)
        self._look_later()  # a run stored and ended (a stateless run is deleted) between two claims is let go
        return None

    def _settle(self, known: set[str], now: float) -> None:
        """Let go of the claims LangGraph has stored (they count through its records now) or never will."""
        self._claims = {r: c for r, c in self._claims.items() if r not in known and now - c[1] < _CLAIM_S}

    def _look_later(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_later(_LOOK_S, self._look)

    def _look(self) -> None:
        with self._lock:
            self._settle({str(run.get("run_id")) for run in _stored_runs()}, time.monotonic())
            if not self._claims:
                return
        self._look_later()
