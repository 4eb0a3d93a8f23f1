"""The scope every node of a LangGraph-server run works in: reading only over the collection it names, where its
authenticated caller (the run config's `langgraph_auth_user`, from longqa/http/auth.py) may not index it
(services/reading_scope.py says why; graph/node.py enters it)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from longqa.retrieval.index.library.reading_only import reading_only
from longqa.services.reading_scope import NOT_INDEXING, may_write


def _server_grants() -> list[str] | None:
    """The grants of the LangGraph server's authenticated caller of this run, or None outside such a run."""
    try:
        from langgraph.config import get_config

        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a runnable's context
        return None
    user = configurable.get("langgraph_auth_user")
    if user is None:
        return None
    permissions = configurable.get("langgraph_auth_permissions")
    if permissions is None:
        permissions = user.get("permissions") if hasattr(user, "get") else getattr(user, "permissions", None)
    return list(permissions or [])


def run_scope(state: Mapping[str, Any]) -> contextlib.AbstractContextManager[None]:
    """Reading only for a LangGraph-server run by a caller who may not index the collection it names."""
    if isinstance(state, Mapping) and not may_write(_server_grants(), state):
        return reading_only(NOT_INDEXING)
    return contextlib.nullcontext()
