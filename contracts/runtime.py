"""Runtime helpers every node uses: the run's settings (the runtime context, or the environment
defaults), the error guard of retrieval-side nodes, and the process-wide caches of index stores
(one per index location) and searchers (one per set of documents)."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime
from pydantic import ValidationError

from longqa.contracts.settings import RunContext, Settings, SettingsError, running_as_server
from longqa.retrieval import IndexSettings, IndexStore, Searcher
from longqa.retrieval.library import Library

log = logging.getLogger(__name__)
_lock = threading.Lock()
_store_lock = threading.Lock()


def guarded(name: str, node: Callable[..., Any]) -> Callable[..., Any]:
    """Run a retrieval-side node so that an infrastructure failure (Chroma server down, disk full,
    a corrupt index) ends the run with a clear error in its output instead of a stack trace.
    LLM failures are handled inside the LLM nodes, which degrade instead. A model node (a generator,
    llm/model_node.py) is guarded around its own work; its model calls pass through."""

    if inspect.isgeneratorfunction(node):

        @functools.wraps(node)
        def steps(state, runtime: Runtime[Settings]):
            try:
                return (yield from node(state, runtime))
            except Exception as e:
                return _failure(name, e)

        return steps

    @functools.wraps(node)
    def run(state, runtime: Runtime[Settings]) -> dict:
        try:
            return node(state, runtime)
        except Exception as e:
            return _failure(name, e)

    return run


def guard(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`guarded` as a decorator."""
    return functools.partial(guarded, name)


def _failure(name: str, e: Exception) -> dict:
    if isinstance(e, SettingsError):  # the caller's or the environment's mistake: one line, no traceback
        log.warning("%s: invalid run settings: %s", name, e)
        message = f"settings: {e}"
    else:  # any backend failure ends the run the same honest way; logged in full
        log.exception("%s failed", name, exc_info=e)
        message = f"{name}: {type(e).__name__}: {str(e)[:300]}"
    return {"error": message, "status": "error", "route": [name], "trace": [message]}


class InvalidSettings(SettingsError):
    """A run's context that names an unknown or locked setting, or a bad value."""


def settings_of(runtime: Runtime[Settings] | None) -> Settings:
    """The run's settings; on a server (LONGQA_SERVER=1) the deployment keeps its own index
    location, Chroma server, documents root, base URL and key variable whatever the caller sends."""
    context = getattr(runtime, "context", None)
    if isinstance(context, dict):  # a caller that bypassed the schema's coercion (the server passes a dict)
        try:
            context = (RunContext if running_as_server() else Settings)(**context)
        except ValidationError as e:
            raise InvalidSettings(
                "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in e.errors())
            ) from None
    if isinstance(context, RunContext):
        context = Settings(**context.model_dump(exclude_unset=True))  # what the caller chose, the rest by default
    settings = context if isinstance(context, Settings) else Settings()
    return settings.for_server() if running_as_server() else settings


def store_for(settings: Settings) -> IndexStore:
    """The one store per index location. Locked: `functools.cache` does not stop concurrent runs
    (a server's first runs) from each building a store, and so each an embedded Chroma client on
    the same path, which races inside chromadb ("'RustBindingsAPI' object has no attribute 'bindings'")."""
    with _store_lock:
        return _store(settings.index_settings())


@functools.cache
def _store(index: IndexSettings) -> IndexStore:
    return IndexStore(index)


def searcher_for(settings: Settings, library: str, doc_ids: Sequence[str]) -> Searcher:
    """A searcher over `library`, or the `doc_ids` of it (all of them: no filter)."""
    store = store_for(settings)
    with _lock:
        return _searcher(store, library, tuple(sorted(doc_ids)))


@functools.lru_cache(maxsize=64)
def _searcher(store: IndexStore, name: str, doc_ids: tuple[str, ...]) -> Searcher:
    library = library_for(store, name)
    whole = tuple(sorted(library.manifest().doc_ids())) == doc_ids
    return Searcher(store, library=library, doc_ids=None if whole else doc_ids)


@functools.lru_cache(maxsize=256)
def library_for(store: IndexStore, name: str) -> Library:
    """One Library object per library in this process, so its caches (manifest, BM25) are shared."""
    return Library(store, name)
