"""Who may do what on the LangGraph server (`langgraph dev`, a LangGraph deployment): LangGraph's own
custom auth (`langgraph_sdk.Auth`, the `auth` entry of langgraph.json) over the same keys, grants
and ceilings as `longqa serve` (longqa/http/access.py, longqa/http/keys.py, contracts/ceilings.py).

- Every request names its caller by API key (401 without one); with no keys configured, only this
  machine's own callers are served (the `local` tenant).
- Threads, and the runs on them, belong to the tenant that created them (`owner` in their
  metadata) and to the reading scope of the key that did (`scope`, `Caller.scope`): every read,
  search, update, delete and run is filtered by them, so another tenant's thread, or one a key with
  other grants started, is not found (404); a key that reads all ('*' documents and collections)
  sees every thread of its tenant.
- A run's input and its command's update are validated first (strict types, 422:
  longqa/http/requests.py, longqa/http/run_inputs.py); then it needs `ask` (question graph) or `index` (index
  graph) on the collection and files they name; its context must be valid and within the
  deployment's ceilings (422 naming the field), its chunk sizes the deployment's, its question no
  longer than LONGQA_MAX_QUESTION_CHARS; a webhook goes only to a host the operator allows (403);
  a key's index runs under way are at most LONGQA_MAX_INDEX_JOBS (429, longqa/http/index_runs.py).
  A thread's state updates are checked the same way before LangGraph sees them
  (longqa/http/state_guard.py), since its auth is shown only their thread's id.
- Assistants (graph configurations, no user data) are readable by every caller; creating, changing
  or deleting one takes `admin`, and its context is checked as a run's. Crons and the store, which
  longqa does not use, are refused."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID, uuid5

from langgraph_sdk import Auth

from longqa.contracts.ceilings import caller_context, deployment_ceilings
from longqa.contracts.settings import SERVER_LOCKED, RunContext, Settings, SettingsError
from longqa.http.access import Caller, Denied, authorize, identify
from longqa.http.index_runs import KEY_FIELD, IndexRuns, index_key, runs_index_graph
from longqa.http.keys import KeyStore, keys_file
from longqa.http.limits import ServerLimits, question_problem
from longqa.http.requests import RequestError, granularities_problem
from longqa.http.run_inputs import run_payloads, webhook_refusal

auth = Auth()
_DEPLOYMENT = Settings()  # the deployment's settings, read once when the server loads this module
_keys = KeyStore(keys_file(_DEPLOYMENT))
_limits = ServerLimits()
_index_runs = IndexRuns(_limits.max_index_jobs_per_key)  # each key's index runs under way (longqa/http/index_runs.py)
_ROOT = _DEPLOYMENT.documents_root
_NAMESPACE_GRAPH = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")  # LangGraph's ids of a graph's own assistant
_ACTION_OF_ASSISTANT = {
    str(uuid5(_NAMESPACE_GRAPH, "longqa")): "ask",
    str(uuid5(_NAMESPACE_GRAPH, "longqa-index")): "index",
}


def _ceilings():
    return deployment_ceilings(_DEPLOYMENT)


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
    """The tenant's threads, and of those, for a key that does not read all, the ones of its own reading scope."""
    caller = _caller(ctx)
    return {"owner": caller.tenant} if caller.reads_all else {"owner": caller.tenant, "scope": caller.scope}


def _mark(ctx: Auth.types.AuthContext, value: dict) -> None:
    """A new thread's (or run's) owner and reading scope, whatever the caller sent."""
    caller = _caller(ctx)
    value.setdefault("metadata", {}).update(owner=caller.tenant, scope=caller.scope)  # in place: the server keeps it


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
    _mark(ctx, value)
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
    if "scope" in metadata and metadata["scope"] != _caller(ctx).scope:
        raise _refuse(403, "a thread's reading scope cannot be changed")
    return _owned(ctx)


@auth.on.threads.create_run
async def run_within_grants(ctx: Auth.types.AuthContext, value: Auth.types.on.threads.create_run.value):
    """A run needs the grant of its graph (both for an assistant an admin made) on what its input names, a question
    within the length limit and a valid context within the ceilings; it belongs to the caller's tenant."""
    caller = _caller(ctx)
    kwargs = value.get("kwargs") or {}
    if kwargs.get("webhook") and (why := webhook_refusal(str(kwargs["webhook"]))):
        raise _refuse(403, why)
    action = _ACTION_OF_ASSISTANT.get(str(value.get("assistant_id")))
    try:  # strict types first (longqa/http/requests.py), then the grants; a command's state update as an input
        payloads = run_payloads(action, kwargs.get("input"), kwargs.get("command"))
    except RequestError as e:
        raise _refuse(e.status, str(e)) from None
    for payload in payloads:
        problem = question_problem(payload, _limits.max_question_chars)
        if problem := problem or granularities_problem(payload.get("granularities"), _ceilings()):
            raise _refuse(422, problem)
    try:  # an assistant an admin made may run either graph: it takes both grants
        for needed in [action] if action else ["ask", "index"]:
            for payload in payloads:
                await asyncio.to_thread(authorize, caller, needed, payload, _ROOT)
    except Denied as e:
        raise _refuse(e.status, str(e)) from None
    configurable = (kwargs.get("config") or {}).get("configurable") or {}
    _checked_context(kwargs.get("context"), provided=bool(configurable.get("__context_provided__", True)))
    _mark(ctx, value)  # a run's own thread (stateless runs) too
    indexes = action == "index" or (action is None and runs_index_graph(value.get("assistant_id")))
    if indexes:  # at most LONGQA_MAX_INDEX_JOBS under way per key, then 429 (longqa/http/index_runs.py)
        key = index_key(caller)
        if busy := _index_runs.claim(key, value.get("run_id")):
            raise _refuse(429, busy)
        value["metadata"][KEY_FIELD] = key
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
