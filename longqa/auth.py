"""Who may do what on the LangGraph server (`langgraph dev`, a LangGraph deployment): LangGraph's own
custom auth (`langgraph_sdk.Auth`, the `auth` entry of langgraph.json) over the same keys, grants
and ceilings as `longqa serve` (longqa/access.py, longqa/keys.py, contracts/ceilings.py).

- Every request names its caller by API key (401 without one); with no keys configured, only this
  machine's own callers are served (the `local` tenant).
- Threads, and the runs on them, belong to the tenant that created them (`owner` in their
  metadata): every read, search, update, delete and run is filtered by it, so another tenant's
  thread is not found (404).
- A run needs `ask` (question graph) or `index` (index graph) on the collection its input names and
  on the files it names; its context must be valid and within the deployment's ceilings (422 naming
  the field); its question no longer than LONGQA_MAX_QUESTION_CHARS.
- Assistants (graph configurations, no user data) are readable by every caller; creating, changing
  or deleting one takes `admin`, and its context is checked as a run's. Crons and the store, which
  longqa does not use, are refused."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID, uuid5

from langgraph_sdk import Auth

from longqa.access import Caller, Denied, authorize, identify
from longqa.contracts.ceilings import caller_context
from longqa.contracts.settings import SERVER_LOCKED, RunContext, Settings, SettingsError
from longqa.keys import KeyStore, keys_file
from longqa.limits import ServerLimits, question_problem

auth = Auth()
_DEPLOYMENT = Settings()  # the deployment's settings, read once when the server loads this module
_keys = KeyStore(keys_file(_DEPLOYMENT))
_limits = ServerLimits()
_ROOT = _DEPLOYMENT.documents_root
_NAMESPACE_GRAPH = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")  # LangGraph's ids of a graph's own assistant
_ACTION_OF_ASSISTANT = {
    str(uuid5(_NAMESPACE_GRAPH, "longqa")): "ask",
    str(uuid5(_NAMESPACE_GRAPH, "longqa-index")): "index",
}


def _refuse(status: int, detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=status, detail=detail)


@auth.authenticate
def authenticate(headers: dict[bytes, bytes], scope: dict[str, Any]) -> Auth.types.MinimalUserDict:
    """The caller of a request. Not async: the keys file is reread (when it changed) from disk, so
    LangGraph runs this in a worker thread rather than on its event loop."""
    named = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers.items()}
    client = scope.get("client")
    try:
        caller = identify(_keys, named, client[0] if client else None)
    except Denied as e:
        raise _refuse(e.status, str(e)) from None
    except SettingsError:
        raise _refuse(503, "the server's keys cannot be read; its log says why") from None
    return {
        "identity": caller.tenant,
        "permissions": sorted(caller.grants),
        "collections": sorted(caller.collections),
        "documents": list(caller.documents),
    }


def _caller(ctx: Auth.types.AuthContext) -> Caller:
    user = ctx.user
    return Caller(user.identity, frozenset(ctx.permissions), frozenset(user["collections"]), tuple(user["documents"]))


def _owned(ctx: Auth.types.AuthContext) -> Auth.types.FilterType:
    return {"owner": ctx.user.identity}


def _checked_context(context: Any, provided: bool = True) -> None:
    """422 for a context that is not a caller's to send or is over a ceiling. A context LangGraph
    copied from `config.configurable` keeps only the names of settings (the rest is LangGraph's)."""
    if not isinstance(context, dict) or not context:
        return
    if not provided:
        context = {k: v for k, v in context.items() if k in RunContext.model_fields or k in SERVER_LOCKED}
    try:
        caller_context(context)
    except SettingsError as e:
        raise _refuse(422, f"invalid run context: {e}") from None


@auth.on
async def refuse_the_rest(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Crons, the store and anything not allowed below."""
    return False


@auth.on.threads.create
async def own_new_thread(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create.value):
    """A new thread belongs to the tenant that creates it; the key must hold `ask` or `index`."""
    caller = _caller(ctx)
    if not (caller.can("ask") or caller.can("index")):
        raise _refuse(403, "this key may neither ask nor index")
    value.setdefault("metadata", {})["owner"] = caller.tenant
    return _owned(ctx)  # an existing thread of that id is another's: a conflict, never handed over


@auth.on.threads.read
async def read_own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A caller reads only its tenant's threads."""
    return _owned(ctx)


@auth.on.threads.search
async def search_own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A search finds only the caller's tenant's threads."""
    return _owned(ctx)


@auth.on.threads.delete
async def delete_own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A caller deletes only its tenant's threads."""
    return _owned(ctx)


@auth.on.threads.update
async def update_own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """A caller updates only its tenant's threads and cannot change a thread's owner."""
    metadata = value.get("metadata") or {}
    if "owner" in metadata and metadata["owner"] != ctx.user.identity:
        raise _refuse(403, "a thread's owner cannot be changed")
    return _owned(ctx)


@auth.on.threads.create_run
async def run_within_grants(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create_run.value):
    """A run needs the grant of its graph (both for an assistant an admin made) on what its input names, a question
    within the length limit and a valid context within the ceilings; it belongs to the caller's tenant."""
    caller = _caller(ctx)
    kwargs = value.get("kwargs") or {}
    payload = kwargs.get("input") if isinstance(kwargs.get("input"), dict) else {}
    problem = question_problem(payload, _limits.max_question_chars)
    if problem:
        raise _refuse(422, problem)
    action = _ACTION_OF_ASSISTANT.get(str(value.get("assistant_id")))
    try:  # an assistant an admin made may run either graph: it takes both grants
        for needed in [action] if action else ["ask", "index"]:
            await asyncio.to_thread(authorize, caller, needed, payload, _ROOT)
    except Denied as e:
        raise _refuse(e.status, str(e)) from None
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    _checked_context(kwargs.get("context"), provided=bool(configurable.get("__context_provided__", True)))
    value.setdefault("metadata", {})["owner"] = caller.tenant  # a run's own thread (stateless runs) too
    return _owned(ctx)


@auth.on.assistants.read
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every caller may read assistants (graph configurations hold no user data)."""
    return None


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every caller may search assistants."""
    return None


@auth.on.assistants.create
async def create_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Creating an assistant takes `admin`, and its context is checked as a run's."""
    return _admin_assistant(ctx, value)


@auth.on.assistants.update
async def update_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Changing an assistant takes `admin`, and its context is checked as a run's."""
    return _admin_assistant(ctx, value)


@auth.on.assistants.delete
async def delete_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Deleting an assistant takes `admin`."""
    return _admin_assistant(ctx, value)


def _admin_assistant(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    if not _caller(ctx).can("admin"):
        raise _refuse(403, "only an admin key may create, change or delete assistants")
    _checked_context(value.get("context"))
    _checked_context(((value.get("config") or {}).get("configurable")), provided=False)
    value["metadata"] = {**(value.get("metadata") or {}), "owner": ctx.user.identity}
    return _owned(ctx)
