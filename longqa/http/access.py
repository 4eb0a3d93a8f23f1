"""Who a server's caller is and what it may do, the same for `longqa serve` (longqa/http/serve.py) and
the LangGraph server (longqa/http/auth.py).

A caller presents an API key (`Authorization: Bearer <key>` or `X-API-Key: <key>`, longqa/http/keys.py).
A server with no keys configured serves only this machine: a caller from a loopback address that
also names a loopback host (a page that rebinds its own domain to 127.0.0.1 names that domain, so
it is refused) is the `local` tenant with every grant; anyone else gets 401 saying how to add keys.
Grants: `ask` (question runs), `index` (index runs), `admin` (both, and on the LangGraph server
assistants); each on the key's collections ('*': any), reading only the files under the documents
root that the key's `documents` names ('*': all; none: inline texts and collections only)."""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from longqa.http.keys import ANY, Key, KeyStore
from longqa.http.requests import SHOWN, RequestError, paths_of, shown

LOCAL_TENANT = "local"
HOW_TO_ADD_KEYS = (
    "create one with `longqa keys add --tenant NAME --grant ask,index --collections NAME` "
    "(stored hashed in LONGQA_KEYS_FILE, default LONGQA_HOME/keys.json) and send it as "
    "'Authorization: Bearer <key>'"
)


class Denied(Exception):
    """A request refused for who sent it: 401 (no or bad key), 403 (outside its grants) or 404."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Caller:
    """Who sent a request, from its API key: the tenant, its grants, and the collections and document folders it may
    use."""

    tenant: str
    grants: frozenset[str]
    collections: frozenset[str]
    documents: tuple[str, ...]

    @classmethod
    def of(cls, key: Key) -> Caller:
        """The caller an API key names."""
        return cls(key.tenant, frozenset(key.grants), frozenset(key.collections), tuple(key.documents))

    @property
    def reads_all(self) -> bool:
        """Whether the key may read every file and every collection ('*' for both): it sees every thread of its
        tenant."""
        return ANY in self.documents and ANY in self.collections

    @property
    def scope(self) -> str:
        """What the key may read, as a short id: keys with the same documents and collections share threads."""
        grants = json.dumps([sorted(self.documents), sorted(self.collections)])
        return hashlib.sha256(grants.encode()).hexdigest()[:16]

    @property
    def thread_owner(self) -> str:
        """Whom a thread this key starts belongs to: its tenant, and its reading scope unless it reads all."""
        return self.tenant if self.reads_all else f"{self.tenant}/{self.scope}"

    def owns(self, owner: str) -> bool:
        """Whether a thread of this owner is the key's to read and continue: one of its own scope, or any of its
        tenant's for a key that reads all (a narrower key never sees what a wider one read, nor its answers)."""
        return owner == self.thread_owner or (self.reads_all and owner.split("/")[0] == self.tenant)

    def can(self, grant: str) -> bool:
        """Whether the caller holds this grant (`admin` holds every grant)."""
        return grant in self.grants or "admin" in self.grants

    def on_collection(self, name: str) -> bool:
        """Whether the caller may use this collection (`*`: any)."""
        return ANY in self.collections or name in self.collections

    def may_read(self, path: str, root: Path | None) -> bool:
        """Whether the key's documents grant covers `path` (as the caller wrote it), resolved
        under the documents root as the reader resolves it (so `a/../b` is `b`, and a link is
        where it points)."""
        if ANY in self.documents:
            return True
        if not self.documents or root is None:
            return False
        try:
            base = Path(root).expanduser().resolve()
            full = Path(path).expanduser()
            full = (full if full.is_absolute() else base / full).resolve()
            relative = full.relative_to(base).as_posix()
        except (OSError, RuntimeError, ValueError):
            return False  # outside the root, or unresolvable: the reader refuses it too
        return any(relative == p or relative.startswith(p + "/") for p in self.documents)


LOCAL = Caller(LOCAL_TENANT, frozenset({"admin"}), frozenset({ANY}), (ANY,))


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries (`Authorization: Bearer`, else `X-API-Key`), or None."""
    authorization = headers.get("authorization") or ""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return (headers.get("x-api-key") or "").strip() or None


def is_loopback(address: str | None) -> bool:
    """Whether a client address is this machine's own (127.0.0.0/8, ::1; an IPv6 zone is ignored)."""
    try:
        return address is not None and ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def names_loopback(host_header: str | None) -> bool:
    """Whether a Host header names this machine (localhost, 127.x, [::1]), with or without a port."""
    if not host_header:
        return False
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    return host == "localhost" or host.endswith(".localhost") or is_loopback(host)


def identify(store: KeyStore, headers: Mapping[str, str], client_host: str | None) -> Caller:
    """The caller of a request, or Denied(401)."""
    token = presented_key(headers)
    if token is not None:
        key = store.find(token)
        if key is None:
            raise Denied(401, "the API key is not valid (unknown, revoked or mistyped)")
        return Caller.of(key)
    if store.configured():
        raise Denied(401, f"an API key is required: send 'Authorization: Bearer <key>'; {HOW_TO_ADD_KEYS}")
    if is_loopback(client_host) and names_loopback(headers.get("host")):
        return LOCAL
    raise Denied(401, f"this server has no API keys and serves only its own machine; {HOW_TO_ADD_KEYS}")


def authorize(caller: Caller, action: str, payload: Mapping[str, Any], root: Path | None) -> None:
    """Raise Denied(403) unless `caller` may run `action` ('ask' or 'index') on what `payload`
    (a request body, or a LangGraph run's input) names: its collection and its files. A payload of
    the wrong shape (`documents` an object, a number ...) is RequestError (422), never passed over;
    both servers validate bodies first (longqa/http/requests.py), so this is the second line."""
    if not caller.can(action):
        raise Denied(403, f"this key may not {action} (its grants: {', '.join(sorted(caller.grants))})")
    collection = payload.get("collection")
    if collection is not None and not isinstance(collection, str):  # never skipped for its type: refused
        raise RequestError(f"'collection' must be a name (got {type(collection).__name__})")
    if collection and not caller.on_collection(collection):
        raise Denied(403, f"this key may not {action} on collection {collection[:SHOWN]!r}")
    for path in paths_of(payload.get("documents")):
        if not caller.may_read(path, root):
            granted = ", ".join(caller.documents) or "none"
            raise Denied(403, f"this key may not read {shown(path)} (its documents: {granted})")
