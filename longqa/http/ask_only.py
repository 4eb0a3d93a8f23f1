"""`longqa serve`'s question runs for a caller who may not index the collection it names: reading only
(services/reading_scope.py says why)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from longqa.http.access import Caller
from longqa.services.reading_scope import ReadingGraph, may_write


def for_caller(graph: Any, caller: Caller, body: Mapping[str, Any]) -> Any:
    """The graph a question runs on: as it is, or reading only where the caller may not index its collection."""
    return graph if may_write(caller.grants, body) else ReadingGraph(graph)
