"""The libraries made for inline texts that nobody used for a while, deleted (`longqa serve` and the
LangGraph server call it after a run). Above library.py and library_gc.py, whose `delete_library` it
calls on each."""

from __future__ import annotations

from ..store import IndexStore
from .library import Library
from .library_gc import delete_library


def forget_unused(store: IndexStore, older_than_s: float, keep: set[str] = frozenset()) -> int:
    """Delete the libraries made for inline texts that were not used for `older_than_s` seconds (by
    the catalog's record of their last use: with PostgreSQL, any replica's); return how many. Each
    is checked again under its lock, so one used meanwhile stays."""
    removed = 0
    for name in store.catalog.unused(older_than_s):
        if name not in keep:
            removed += delete_library(Library(store, name), unused_for=older_than_s)
    return removed
