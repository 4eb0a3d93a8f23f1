"""The one wrapper every node runs in (`as_node`, applied by `build_graph`), so that a node returns
only its own update:
- the node's name goes on the run's `route`;
- a node that raises ends the run with a clear `status: error` naming the node and the failure,
  the usage of every model call it made kept on the ledger (a model node's driver hands them over
  on the exception, llm/model_node.py), and `failed` set (contracts/failure.py `fail`, the same
  update a node returns to end the run), which every router asks (`ended`) to go to `respond`;
- a model node's calls get the run's deadline from the driver itself, and its prompts are sized by
  the model server's own count where it can give one;
- the turn's first node (`starts_turn`) also resets every working field of the state, derived from
  its schema (contracts/state.py `turn_start`): a thread's turn starts clean, and a new field is
  reset without being listed; and it starts the run's clock (`deadline_at`, `deadline_s` from now),
  which the model-node driver gives every call; it updates the library, so on the LangGraph server
  it runs in a thread that stops within its step when the run is cancelled (nodes/stoppable.py);
- on the LangGraph server, a caller without the `index` grant runs every node reading only over the collection
  it names (nodes/run_scope.py, services/reading_scope.py).
An invalid run setting (the caller's or the environment's mistake) is one line, without a traceback;
any other failure is logged in full."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Overwrite

from longqa.contracts.budget import counted_by
from longqa.contracts.failure import ended, fail
from longqa.contracts.settings import Settings, SettingsError, settings_of
from longqa.nodes.run_scope import run_scope
from longqa.nodes.stoppable import stoppable

__all__ = ["as_node", "ended", "failure"]

log = logging.getLogger(__name__)

Node = Callable[..., dict] | RunnableLambda


def failure(name: str, e: Exception) -> dict:
    """The update of a node that raised: the run ends with the reason and what it spent."""
    if isinstance(e, SettingsError):
        log.warning("%s: invalid run settings: %s", name, e)
        message = f"settings: {e}"
    elif getattr(e, "expected", False):  # an end the run expects (retrieval/cancel.py: its client left): no traceback
        log.warning("%s: %s", name, e)
        message = f"{name}: {e}"
    else:
        log.exception("%s failed", name, exc_info=e)
        message = f"{name}: {type(e).__name__}: {str(e)[:300]}"
    spent = getattr(e, "spent", None)
    return fail(name, message, usage=spent) if spent else fail(name, message)


def as_node(name: str, node: Node, starts_turn: dict[str, Any] | None = None) -> Node:
    """`node` as the graph runs it: routed, guarded, and (with `starts_turn`, the reset of every
    working field) the start of a clean turn."""

    def done(update: dict) -> dict:
        update = {**update, "route": [name]}
        if starts_turn is None:
            return update
        # the reset, then the node's own values; a reduced list the node writes replaces the last turn's
        return starts_turn | {
            k: Overwrite(v) if isinstance(starts_turn.get(k), Overwrite) else v for k, v in update.items()
        }

    if isinstance(node, RunnableLambda):  # a model node: its driver, both ways (llm/model_node.py)
        sync, awaited = node.func, node.afunc

        # its prompts are sized by the model's own count where its server can give one (llm/budget.py)
        def run(state: Any) -> dict:
            try:
                with counted_by(settings_of(get_runtime())), run_scope(state):
                    return done(sync(state))
            except Exception as e:
                return done(failure(name, e))

        async def arun(state: Any) -> dict:
            try:
                with counted_by(settings_of(get_runtime())), run_scope(state):
                    return done(await awaited(state))
            except Exception as e:
                return done(failure(name, e))

        return RunnableLambda(run, afunc=arun, name=name)

    @functools.wraps(node)
    def plain(state: Any, runtime: Runtime[Settings]) -> dict:
        try:
            clock = {} if starts_turn is None else {"deadline_at": time.time() + settings_of(runtime).deadline_s}
            with run_scope(state):  # a LangGraph-server caller who may not index reads its collection as it is
                return done({**clock, **node(state, runtime)})
        except Exception as e:
            return done(failure(name, e))

    return plain if starts_turn is None else stoppable(name, plain)
