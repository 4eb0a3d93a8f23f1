"""A sync step that may run for minutes (a library update over many files or inline texts) as the
graph runs it: under `invoke` (the CLI, `longqa serve`, which stop a run themselves) in the caller's
thread; awaited (the LangGraph server) in a worker thread that stops within the step once the run is
cancelled, as when its waiting client disconnects (longqa/http/disconnect.py): the task's cancellation
sets the step's event, and its work raises `Cancelled` at its next file or embedding batch
(retrieval/cancel.py) instead of running on for nobody."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime, get_runtime

from longqa.retrieval.cancel import Cancelled, cancelled_by

log = logging.getLogger(__name__)


def stoppable(name: str, step: Callable[[Any, Runtime], Any]) -> RunnableLambda:
    """`step(state, runtime)` as a node both ways: run as it is under `invoke`, stopped within the step when
    its awaited run is cancelled."""

    def run(state: Any) -> Any:
        return step(state, get_runtime())

    async def arun(state: Any) -> Any:
        runtime, cancelled = get_runtime(), threading.Event()

        def work() -> Any:
            try:
                with cancelled_by(cancelled):
                    return step(state, runtime)
            except Cancelled:
                log.warning("%s: its run was cancelled; stopped within the step", name)
                raise

        try:
            return await asyncio.to_thread(work)
        except asyncio.CancelledError:
            cancelled.set()  # the thread's work raises `Cancelled` at its next check, and the thread ends
            raise

    return RunnableLambda(run, afunc=arun, name=name)
