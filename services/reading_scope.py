"""Whether a run may write the collection it reads. A caller without the `index` grant reads a collection as it was
indexed: a run setting that would chunk it another way (`chunking`, a chunk size it lacks) or files changed since
it was indexed are refused in one line (retrieval/index/library/reading_only.py) instead of re-indexing the
collection, for every tenant, from a key that may not index (an auditor saw an ask-only key republish a collection
at each new `chunking`). `longqa serve` knows its caller (longqa/http/ask_only.py); on the LangGraph server the run's
config carries the authenticated user (`langgraph_auth_user`, from longqa/http/auth.py), read by nodes/run_scope.py,
which the node wrapper (graph/node.py) enters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from longqa.retrieval.index.library.reading_only import reading_only

NOT_INDEXING = (
    "this key may not index: ask with the collection's own chunking and chunk sizes, or have a key with the "
    "index grant index it"
)


def may_write(grants: Iterable[str] | None, state: Mapping[str, Any]) -> bool:
    """False for a run over a named collection by a caller whose grants are known and hold neither `index` nor
    `admin`; True otherwise (no caller known: the command line, a library user)."""
    if grants is None or not state.get("collection"):
        return True
    held = set(grants)
    return "index" in held or "admin" in held


class ReadingGraph:
    """A compiled graph whose runs write no library (`stream`, the one call the servers make)."""

    def __init__(self, graph: Any):
        self.graph = graph

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with reading_only(NOT_INDEXING):
            yield from self.graph.stream(*args, **kwargs)
