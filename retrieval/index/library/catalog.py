"""Where a library's manifest, its update lock, its pending marks and (with replicas) the documents'
texts live, behind one interface (`Catalog`, a Protocol), so that any replica can search any library:

- `LocalCatalog`: one host, no server. `libraries/<name>/manifest.json` (replaced with one rename),
  `pending.json`, `retired.json`, `removed.json`, `used-at` and an flock on `.lock`.
- `PostgresCatalog` (catalog_postgres.py): whenever `LONGQA_POSTGRES_URI` is set with a
  Chroma server. Tables, an advisory lock, a compare-and-set publish; Chroma holds vectors only.
- `SharedCatalog` (catalog_chroma.py): a Chroma server without PostgreSQL, as before. Its lease is a record
  renewed by a thread and compared with this host's clock; a deployment of several replicas should
  set `LONGQA_POSTGRES_URI` (README, "Deployment").

Which one a store uses: `make_catalog` (catalog_choice.py), above the three.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ...documents import Document
from ..files import atomic_write, file_lock

log = logging.getLogger(__name__)

USED_MARK = "used-at"  # a library made for inline texts: when it was last used (files catalogs)
RETIRED, REMOVED = "retired.json", "removed.json"  # name -> when a publish retired or removed it


class LockLost(RuntimeError):
    """The update lock is no longer this holder's (its connection died or was ended, its lease was
    taken over): the update stops and publishes nothing."""


class StalePublish(RuntimeError):
    """A publish found another version than the one its update started from (a stale writer):
    nothing was published."""


@dataclass(frozen=True)
class Publication:
    """A library's new version for `Catalog.publish`: its manifest's JSON (`version`, naming the
    texts `members`), the version published when its update started (`expected`), the
    collections it `retired` and the documents it `removed`."""

    manifest_json: str
    version: int
    expected: int
    members: list[str]
    retired: list[str]
    removed: Sequence[str] = ()

    def replaces(self, name: str, found: int) -> None:
        """Raise `StalePublish` unless the version published now (`found`) is the one its update
        started from."""
        if found != self.expected:
            raise StalePublish(
                f"library {name}: version {found} is published, this update started from {self.expected}"
            )


class Held(Protocol):
    """A library's update lock while its holder works under it."""

    def check(self) -> None:
        """Raise `LockLost` when the lock is no longer this holder's (cheap: a holder calls it
        between documents, which also tells the server that the holder is alive)."""


@runtime_checkable
class Catalog(Protocol):
    """Where a library's manifest, update lock, pending marks and retired collections live.
    Every write takes the `Held` lock it is made under."""

    shared: bool  # several hosts read it: a replica rechecks a manifest at most once per SHARED_RECHECK_S

    def dir(self, name: str) -> Path:
        """This host's directory of the library (its caches; for `LocalCatalog` its manifest too)."""
        ...

    def stamp(self, name: str) -> object | None:
        """What changes when a new version is published (None: no manifest). Cheap: readers poll it."""
        ...

    def read(self, name: str) -> str | None:
        """The published manifest's JSON (None: none)."""
        ...

    def lock(self, name: str) -> AbstractContextManager[Held]:
        """Hold the library's update lock for the block, waiting while another holder has it."""
        ...

    def publish(self, held: Held, name: str, new: Publication) -> object:
        """Make `new.manifest_json` (version `new.version`, naming the texts `new.members`) the
        published one if the published version is still `new.expected`, else raise `StalePublish` and
        change nothing. The same step clears the pending marks and records the collections it
        `new.retired` and the documents it `new.removed` (their vectors deleted by the index path once
        no reader can hold the manifest that lists them). Returns the new stamp."""
        ...

    def pending(self, name: str) -> set[str]:
        """Doc ids whose vectors an update added before it published (cleared if it was killed)."""
        ...

    def mark_pending(self, held: Held, name: str, doc_ids: set[str]) -> None:
        """Record `doc_ids` as pending, before their vectors are added."""
        ...

    def clear_pending(self, held: Held, name: str) -> None:
        """Forget the pending marks (their vectors were deleted or published)."""
        ...

    def retired(self, name: str, older_than_s: float) -> list[str]:
        """Collections a publish replaced at least `older_than_s` seconds ago."""
        ...

    def forget_retired(self, held: Held, name: str, collections: list[str]) -> None:
        """Forget retired collections that were deleted."""
        ...

    def removed(self, name: str, older_than_s: float) -> list[str]:
        """Documents a publish removed at least `older_than_s` seconds ago whose vectors may remain."""
        ...

    def forget_removed(self, held: Held, name: str, doc_ids: list[str]) -> None:
        """Forget removed documents whose vectors were deleted (or that are members again)."""
        ...

    def touch(self, name: str) -> None:
        """Record that a library made for inline texts was used now (cheap: no lock)."""
        ...

    def unused(self, older_than_s: float) -> list[str]:
        """Libraries recorded by `touch` whose last use is at least `older_than_s` seconds old."""
        ...

    def drop(self, held: Held, name: str) -> None:
        """Remove the library's manifest, marks and references (its caches on this host too)."""
        ...


class TextCatalog(Catalog, Protocol):
    """A catalog replicas share also holds every document's text and chunkings, keyed by content
    hash, so a replica reads what another indexed."""

    def has_documents(self, doc_ids: list[str]) -> set[str]:
        """Which of these documents it holds, whole."""
        ...

    def put_document(self, document: Document) -> None:
        """Store a document's text (and paragraphs) under its content hash."""
        ...

    def get_document(self, doc_id: str) -> Document | None:
        """The document with this content hash (None: not held)."""
        ...

    def forget_documents(self, doc_ids: list[str], older_than_s: float = 0.0) -> None:
        """Drop these texts and their chunkings where nothing references them any more."""
        ...

    def has_chunks(self, ids: list[str]) -> set[str]:
        """Which of these chunking ids (`chunks_id`) it holds."""
        ...

    def put_chunks(self, record_id: str, payload: dict) -> None:
        """Store a chunking (its manifest and spans) under its id."""
        ...

    def get_chunks(self, record_id: str) -> dict | None:
        """The chunking with this id (None: not held)."""
        ...


def chunks_id(doc_id: str, granularity: int, signature: dict) -> str:
    """A chunking's id: the document's content hash, its size and the settings it was made with."""
    digest = hashlib.sha256(json.dumps(signature, sort_keys=True).encode()).hexdigest()[:16]
    return f"chunks:{doc_id}:g{granularity}:{digest}"


class _Flock:
    """The file lock's `Held`: it lasts as long as its process, which is the only one to publish."""

    def check(self) -> None:
        """Nothing can take an flock from a living process."""


class LocalCatalog:
    """A library's manifest, pending marks, retired collections and lock as files under
    `home/libraries/<name>/` (one host, no server)."""

    shared = False

    def __init__(self, home: Path):
        self.home = home

    def dir(self, name: str) -> Path:
        """The library's directory on this host."""
        return self.home / "libraries" / name

    def stamp(self, name: str) -> tuple[int, int, int] | None:
        """The manifest file's (mtime_ns, size, inode); None: no manifest."""
        try:
            st = (self.dir(name) / "manifest.json").stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def read(self, name: str) -> str | None:
        """The manifest file's text."""
        try:
            return (self.dir(name) / "manifest.json").read_text("utf-8")
        except FileNotFoundError:
            return None

    def publish(self, held: Held, name: str, new: Publication) -> object:
        """Replace the manifest with one rename (the flock is held: the version read under it is
        the current one, checked again all the same); the retired collections and removed documents
        are recorded first (a record of a document still listed is harmless: the collector skips members)."""
        current = self.read(name)
        found = json.loads(current).get("version", 0) if current else 0
        new.replaces(name, found)
        self._record(name, new.retired, new.removed)
        atomic_write(self.dir(name) / "manifest.json", new.manifest_json)
        self.clear_pending(held, name)
        return self.stamp(name)

    def pending(self, name: str) -> set[str]:
        """`pending.json`'s doc ids."""
        with contextlib.suppress(ValueError, OSError):
            return set(json.loads((self.dir(name) / "pending.json").read_text("utf-8")))
        return set()

    def mark_pending(self, held: Held, name: str, doc_ids: set[str]) -> None:
        """Write `pending.json`."""
        atomic_write(self.dir(name) / "pending.json", json.dumps(sorted(doc_ids)))

    def clear_pending(self, held: Held, name: str) -> None:
        """Remove `pending.json`."""
        (self.dir(name) / "pending.json").unlink(missing_ok=True)

    def retired(self, name: str, older_than_s: float) -> list[str]:
        """`retired.json`'s collections retired at least `older_than_s` ago (one host: one clock)."""
        return self._older(name, RETIRED, older_than_s)

    def forget_retired(self, held: Held, name: str, collections: list[str]) -> None:
        """Take them out of `retired.json`."""
        self._forget(name, RETIRED, collections)

    def removed(self, name: str, older_than_s: float) -> list[str]:
        """`removed.json`'s documents removed at least `older_than_s` ago."""
        return self._older(name, REMOVED, older_than_s)

    def forget_removed(self, held: Held, name: str, doc_ids: list[str]) -> None:
        """Take them out of `removed.json`."""
        self._forget(name, REMOVED, doc_ids)

    def touch(self, name: str) -> None:
        """Write the time to `used-at` (this host's file: one host, one clock)."""
        self.dir(name).mkdir(parents=True, exist_ok=True)
        (self.dir(name) / USED_MARK).write_text(str(time.time()), "utf-8")

    def unused(self, older_than_s: float) -> list[str]:
        """The libraries whose `used-at` is at least `older_than_s` old."""
        found = []
        for mark in sorted((self.home / "libraries").glob(f"*/{USED_MARK}")):
            with contextlib.suppress(OSError, ValueError):
                if time.time() - float(mark.read_text("utf-8")) >= older_than_s:
                    found.append(mark.parent.name)
        return found

    def _record(self, name: str, retired: Sequence[str], removed: Sequence[str]) -> None:
        """Date the collections a publish retired and the documents it removed (now)."""
        for file, names in ((RETIRED, retired), (REMOVED, removed)):
            if names:
                self._put_dated(name, file, {**self._dated(name, file), **dict.fromkeys(names, time.time())})

    def _older(self, name: str, file: str, older_than_s: float) -> list[str]:
        now = time.time()
        return sorted(c for c, at in self._dated(name, file).items() if now - at >= older_than_s)

    def _forget(self, name: str, file: str, names: list[str]) -> None:
        gone = set(names)
        self._put_dated(name, file, {c: at for c, at in self._dated(name, file).items() if c not in gone})

    def _dated(self, name: str, file: str) -> dict[str, float]:
        with contextlib.suppress(ValueError, OSError):
            return dict(json.loads((self.dir(name) / file).read_text("utf-8")))
        return {}

    def _put_dated(self, name: str, file: str, dated: dict[str, float]) -> None:
        atomic_write(self.dir(name) / file, json.dumps(dated))

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[Held]:
        """An flock on `.lock`: processes of this host queue on it."""
        with file_lock(self.dir(name) / ".lock"):
            yield _Flock()

    def drop(self, held: Held, name: str) -> None:
        """The manifest and marks go (the caller holds the lock; its directory's caches go with it)."""
        for entry in self.dir(name).iterdir() if self.dir(name).exists() else []:
            if entry.name != ".lock":
                _remove(entry)


def _remove(entry: Path) -> None:
    import shutil

    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
