"""API keys of a longqa server (`longqa serve` and the LangGraph server's auth, longqa/http/auth.py): a
JSON file the operator manages with `longqa keys add / list / remove` (LONGQA_KEYS_FILE, default
LONGQA_HOME/keys.json, written owner-only). Each key names a tenant and what it may do (`ask`,
`index`, `admin`) on which collections, and which files under the documents root it may read.

The file holds no key, only a salted SHA-256 of it: a key is 256 random bits (`secrets`), so a fast
hash cannot be searched back to it, and a slow one (scrypt) would only cost every request. A key
reads `lqa_<id>_<secret>`; the id (not secret) finds its record, the secret is compared in constant
time (`hmac.compare_digest`). Servers reread the file when it changes, so a key added or removed
takes effect without a restart."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from longqa.contracts.deployment import DeploymentSettings
from longqa.contracts.settings import SettingsError
from longqa.retrieval.index.library.manifest import valid_name

Grant = Literal["ask", "index", "admin"]
GRANTS: tuple[str, ...] = Grant.__args__
ANY = "*"
MAX_FILE_BYTES = 4 * 2**20  # a keys file is a few KB; a huge one is not a keys file
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
_TOKEN = re.compile(r"lqa_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")


class KeysError(SettingsError):
    """A keys file or a key request that cannot be used: the message says which and why."""


def keys_file(deployment: DeploymentSettings | None = None) -> Path:
    """Where this deployment's keys live (its `keys_file`, LONGQA_KEYS_FILE, else keys.json under its home)."""
    return (deployment or DeploymentSettings()).keys_path


class Key(BaseModel):
    """One key's record: who holds it and what it may do; the key itself is not kept."""

    id: str = Field(pattern=r"^[0-9a-f]{12}$")
    tenant: str
    grants: list[Grant] = Field(min_length=1)
    collections: list[str] = Field(default_factory=list, description="collection names, or '*' for any")
    documents: list[str] = Field(
        default_factory=list, description="folders or files under the documents root it may read ('*': all)"
    )
    salt: str
    sha256: str
    created: str = ""

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        if not _TENANT.fullmatch(value):
            raise ValueError("a tenant is 1-64 letters, digits, '_', '.', '@' or '-', starting with a letter or digit")
        return value

    @field_validator("collections")
    @classmethod
    def _collections(cls, value: list[str]) -> list[str]:
        for name in value:
            if name != ANY and not valid_name(name):
                raise ValueError(f"{name!r} is not a collection name (letters, digits, '-', '_', '.')")
        return value

    @field_validator("documents")
    @classmethod
    def _documents(cls, value: list[str]) -> list[str]:
        return [normal_prefix(p) for p in value]

    def matches(self, secret: str) -> bool:
        """Whether a presented secret is this key (salted SHA-256, compared in constant time)."""
        digest = hashlib.sha256(bytes.fromhex(self.salt) + secret.encode()).hexdigest()
        return hmac.compare_digest(digest, self.sha256)


def normal_prefix(prefix: str) -> str:
    """A documents grant as a relative POSIX path under the root ('*' stays)."""
    if prefix == ANY:
        return prefix
    parts = [p for p in prefix.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts or prefix.startswith("/"):
        raise ValueError(f"{prefix!r}: a documents grant is a folder or file relative to the documents root, or '*'")
    return "/".join(parts)


class KeyFile(BaseModel):
    """The keys file's content: a version and the stored (hashed) keys."""

    version: Literal[1] = 1
    keys: list[Key] = Field(default_factory=list)


def read_keys(path: Path) -> KeyFile:
    """The keys in `path` (none when it does not exist); a damaged file is an error naming it."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return KeyFile()
    except OSError as e:
        raise KeysError(f"keys file {path}: cannot be read ({e.strerror or type(e).__name__})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise KeysError(f"keys file {path}: over {MAX_FILE_BYTES // 2**20} MiB; not a keys file")
    try:
        return KeyFile.model_validate_json(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise KeysError(f"keys file {path}: {where}: {first['msg']}") from None


def write_keys(path: Path, keys: KeyFile) -> None:
    """Replace the file in one rename, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(keys.model_dump_json(indent=2))
    os.replace(tmp, path)


def add_key(
    path: Path, tenant: str, grants: list[str], collections: list[str], documents: list[str] = ()
) -> tuple[Key, str]:
    """A new key for `tenant`, stored hashed in `path`; returns its record and the key (shown once)."""
    key_id, secret, salt = secrets.token_hex(6), secrets.token_urlsafe(32), secrets.token_bytes(16)
    try:
        record = Key(
            id=key_id,
            tenant=tenant,
            grants=grants,
            collections=collections,
            documents=list(documents),
            salt=salt.hex(),
            sha256=hashlib.sha256(salt + secret.encode()).hexdigest(),
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
    except ValidationError as e:
        problems = (f"{x['loc'][0]}: {str(x['msg']).removeprefix('Value error, ')}" for x in e.errors())
        raise KeysError("; ".join(problems)) from None
    keys = read_keys(path)
    keys.keys.append(record)
    write_keys(path, keys)
    return record, f"lqa_{key_id}_{secret}"


def remove_key(path: Path, key_id: str) -> Key:
    """Revoke the key with this id from the keys file and return it; KeysError when there is none."""
    keys = read_keys(path)
    kept = [k for k in keys.keys if k.id != key_id]
    if len(kept) == len(keys.keys):
        raise KeysError(f"no key with id {key_id!r} in {path}")
    removed = next(k for k in keys.keys if k.id == key_id)
    write_keys(path, KeyFile(keys=kept))
    return removed


class KeyStore:
    """The keys a running server checks against, reread when the file changes (size, mtime)."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None
        self._by_id: dict[str, Key] = {}

    def _current(self) -> dict[str, Key]:
        try:
            st = self.path.stat()
            seen = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            seen = (-1, -1)
        with self._lock:
            if seen != self._seen:
                self._by_id = {k.id: k for k in read_keys(self.path).keys}
                self._seen = seen
            return self._by_id

    def configured(self) -> bool:
        """Whether any key exists (without keys, a server serves loopback callers only)."""
        return bool(self._current())

    def find(self, token: str) -> Key | None:
        """The record of a presented key, or None (unknown, malformed or wrong)."""
        match = _TOKEN.fullmatch(token.strip()) if len(token) < 200 else None
        if not match:
            return None
        record = self._current().get(match.group(1))
        return record if record is not None and record.matches(match.group(2)) else None
