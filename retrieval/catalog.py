"""Where a library's manifest, its update lock and the documents' parts live, so that any replica
can search any library: on this host's disk (embedded Chroma), or in the Chroma server every
replica shares.

`LocalCatalog` keeps the layout one process or host has always used: `libraries/<name>/manifest.json`
(replaced with one rename), `pending.json`, and an flock on `.lock`.

`SharedCatalog` keeps them as records of one Chroma collection on the server, `longqa-catalog`
(Chroma is the only shared engine a replica needs to search; its records need a vector, so each
carries the 1-d placeholder [1.0]):
    manifest:<library>                 the manifest JSON; metadata: version, stamp (new per publish)
    pending:<library>                  doc ids whose vectors an unpublished update added
    lock:<library>                     the update lease: owner, expiry (renewed while it is held)
    document:<doc_id>:<piece>          the loaded document (text + paragraphs) as JSON, in pieces
    chunks:<doc_id>:g<size>:<signature> a document's chunking at one size (spans, units, build id)
The lease is Chroma's `add`, which keeps the record already there: two replicas adding the same
lock id both read back the one that was applied first. A holder renews it every few seconds; the
lease of a replica that was killed expires, and the next update clears what that one left. On one
host the file lock still orders processes; the lease orders hosts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from .documents import Document
from .files import atomic_write, file_lock

log = logging.getLogger(__name__)

CATALOG = "longqa-catalog"
PLACEHOLDER = [1.0]  # a catalog record's vector: Chroma stores no record without one
PIECE_CHARS = 2_000_000  # a document's JSON is stored in pieces of this many characters
LEASE_S = 30.0  # a lock not renewed for this long was left by a killed replica
RENEW_S = 5.0
WAIT_STEP_S = 0.2


class Catalog(Protocol):
    """What a library asks of where its manifest, pending marks and update lock live (`LocalCatalog`,
    `SharedCatalog`)."""

    shared: bool  # True: the records are on the Chroma server every replica shares

    def dir(self, name: str) -> Path:
        """This host's directory of a library (its caches)."""
        ...

    def stamp(self, name: str) -> object | None:
        """What changes when a new version is published (None: no manifest)."""
        ...

    def read(self, name: str) -> str | None:
        """The library's published manifest JSON (None: never published)."""
        ...

    def publish(self, name: str, manifest_json: str, version: int) -> object:
        """Make this manifest the published version; returns its stamp."""
        ...

    def pending(self, name: str) -> set[str]:
        """The doc ids whose vectors an unpublished update added."""
        ...

    def mark_pending(self, name: str, doc_ids: set[str]) -> None:
        """Record the doc ids an update is adding, before it adds their vectors."""
        ...

    def clear_pending(self, name: str) -> None:
        """Forget the pending marks."""
        ...

    def lock(self, name: str) -> AbstractContextManager[None]:
        """Hold the library's update lock (across processes and, when shared, replicas) for the block."""
        ...

    def drop(self, name: str) -> None:
        """The library's manifest and marks go (the caller holds the lock)."""
        ...


class LocalCatalog:
    """A library's manifest, pending marks and lock as files under `home/libraries/<name>/`."""

    shared = False

    def __init__(self, home: Path):
        self.home = home

    def dir(self, name: str) -> Path:
        """This host's directory of a library (its caches; here also its manifest, marks and lock file)."""
        return self.home / "libraries" / name

    def stamp(self, name: str) -> tuple[int, int, int] | None:
        """What changes when a new version is published (None: no manifest)."""
        try:
            st = (self.dir(name) / "manifest.json").stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def read(self, name: str) -> str | None:
        """The library's published manifest JSON (None: never published)."""
        try:
            return (self.dir(name) / "manifest.json").read_text("utf-8")
        except FileNotFoundError:
            return None

    def publish(self, name: str, manifest_json: str, version: int) -> object:
        """Replace the manifest in one rename; returns its new stamp."""
        atomic_write(self.dir(name) / "manifest.json", manifest_json)
        return self.stamp(name)

    def pending(self, name: str) -> set[str]:
        """The doc ids whose vectors an unpublished update added (empty when none or unreadable)."""
        with contextlib.suppress(ValueError, OSError):
            return set(json.loads((self.dir(name) / "pending.json").read_text("utf-8")))
        return set()

    def mark_pending(self, name: str, doc_ids: set[str]) -> None:
        """Record the doc ids an update is adding, so a crashed update's vectors can be cleared later."""
        atomic_write(self.dir(name) / "pending.json", json.dumps(sorted(doc_ids)))

    def clear_pending(self, name: str) -> None:
        """Forget the pending marks (the update published, or its leftovers were cleared)."""
        (self.dir(name) / "pending.json").unlink(missing_ok=True)

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold the library's update lock (an flock on `.lock`) for the block."""
        with file_lock(self.dir(name) / ".lock"):
            yield

    def drop(self, name: str) -> None:
        """The manifest and marks go (the caller holds the lock; its directory's caches go with it)."""
        for entry in self.dir(name).iterdir() if self.dir(name).exists() else []:
            if entry.name != ".lock":
                _remove(entry)


class SharedCatalog(LocalCatalog):
    """The same, as records of the Chroma server's `longqa-catalog` collection; this host's
    `libraries/<name>/` holds only caches (BM25 versions) and the file lock."""

    shared = True

    def __init__(self, home: Path, client_of):
        super().__init__(home)
        self._client_of = client_of  # () -> the store's current Chroma client
        self._collection: tuple[object, object] | None = None
        self._lock = threading.Lock()
        self.owner = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    @property
    def records(self):
        """The server's catalog collection, opened again when the store has made a new client."""
        client = self._client_of()
        with self._lock:
            if self._collection is None or self._collection[0] is not client:
                handle = client.get_or_create_collection(
                    CATALOG, metadata={"longqa": "catalog"}, embedding_function=None
                )
                self._collection = (client, handle)
            return self._collection[1]

    # -- manifests ------------------------------------------------------------------------------
    def stamp(self, name: str) -> str | None:
        """The published manifest's stamp (new per publish; None: no manifest)."""
        got = self.records.get(ids=[f"manifest:{name}"], include=["metadatas"])
        return str(got["metadatas"][0]["stamp"]) if got["ids"] else None

    def read(self, name: str) -> str | None:
        """The library's published manifest JSON from the server (None: never published)."""
        got = self.records.get(ids=[f"manifest:{name}"], include=["documents"])
        return got["documents"][0] if got["ids"] else None

    def publish(self, name: str, manifest_json: str, version: int) -> object:
        """Write the manifest record with a new stamp, which it returns."""
        stamp = f"{version}-{uuid.uuid4().hex[:12]}"
        self._put(
            f"manifest:{name}", manifest_json, {"kind": "manifest", "library": name, "version": version, "stamp": stamp}
        )
        return stamp

    def pending(self, name: str) -> set[str]:
        """The doc ids an unpublished update added, from the `pending:` record (empty when none)."""
        got = self.records.get(ids=[f"pending:{name}"], include=["documents"])
        with contextlib.suppress(ValueError, TypeError):
            return set(json.loads(got["documents"][0])) if got["ids"] else set()
        return set()

    def mark_pending(self, name: str, doc_ids: set[str]) -> None:
        """Record the doc ids an update is adding in the `pending:` record."""
        self._put(f"pending:{name}", json.dumps(sorted(doc_ids)), {"kind": "pending", "library": name})

    def clear_pending(self, name: str) -> None:
        """Delete the `pending:` record."""
        self.records.delete(ids=[f"pending:{name}"])

    def drop(self, name: str) -> None:
        """The manifest and pending records go, and this host's files as `LocalCatalog.drop` (the caller holds the
        lock)."""
        self.records.delete(ids=[f"manifest:{name}", f"pending:{name}"])
        super().drop(name)

    # -- the update lease -----------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold the library's update lease for the block: the host's file lock first, then the lease in the catalog,
        renewed by a thread until the block ends."""
        with super().lock(name):  # processes of this host queue on the file first
            self._acquire(name)
            stop = threading.Event()
            renewer = threading.Thread(target=self._renew, args=(name, stop), daemon=True, name=f"lease-{name}")
            renewer.start()
            try:
                yield
            finally:
                stop.set()
                renewer.join()
                self.records.delete(ids=[f"lock:{name}"], where={"owner": self.owner})

    def _acquire(self, name: str) -> None:
        lock_id, tries = f"lock:{name}", 0
        while True:
            meta = {"kind": "lock", "library": name, "owner": self.owner, "expires": time.time() + LEASE_S}
            self.records.add(ids=[lock_id], embeddings=[PLACEHOLDER], metadatas=[meta])  # kept only if absent
            got = self.records.get(ids=[lock_id], include=["metadatas"])
            if got["ids"]:
                held = got["metadatas"][0]
                if held["owner"] == self.owner:
                    return
                if float(held["expires"]) < time.time():  # its holder died: only that lease is removed
                    log.warning("library %s: lease of %s expired; taking it over", name, held["owner"])
                    self.records.delete(ids=[lock_id], where={"owner": held["owner"]})
                    continue
            tries += 1
            if tries % 150 == 1:  # every 30 s
                log.info("library %s: waiting for the update of another replica", name)
            time.sleep(WAIT_STEP_S)

    def _renew(self, name: str, stop: threading.Event) -> None:
        lock_id = f"lock:{name}"
        while not stop.wait(RENEW_S):
            try:
                got = self.records.get(ids=[lock_id], include=["metadatas"])
                if not got["ids"] or got["metadatas"][0]["owner"] != self.owner:
                    log.error("library %s: lost the update lease", name)
                    return
                meta = {**got["metadatas"][0], "expires": time.time() + LEASE_S}
                self.records.update(ids=[lock_id], metadatas=[meta])
            except Exception:  # a blip of the server: the next renewal tries again (the lease has 30 s)
                log.warning("library %s: renewing the lease failed", name, exc_info=True)

    # -- documents and their chunkings ----------------------------------------------------------
    def has_documents(self, doc_ids: list[str]) -> set[str]:
        """Which of these documents the catalog holds (complete: every piece is written before
        the first, which is the one looked up)."""
        got = self.records.get(ids=[f"document:{d}:0" for d in doc_ids], include=[])
        return {i.split(":")[1] for i in got["ids"]}

    def put_document(self, document: Document) -> None:
        """Store a loaded document as JSON records of at most PIECE_CHARS characters, piece 0 written last."""
        text = document.model_dump_json()
        pieces = [text[i : i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS)] or [""]
        for i in reversed(range(len(pieces))):  # piece 0 last: its presence says the rest is there
            meta = {"kind": "document", "doc_id": document.doc_id, "piece": i, "pieces": len(pieces)}
            self._put(f"document:{document.doc_id}:{i}", pieces[i], meta)

    def get_document(self, doc_id: str) -> Document | None:
        """A document another replica stored, its pieces joined (None: the catalog does not hold it)."""
        first = self.records.get(ids=[f"document:{doc_id}:0"], include=["documents", "metadatas"])
        if not first["ids"]:
            return None
        n = int(first["metadatas"][0]["pieces"])
        text = first["documents"][0]
        if n > 1:
            rest = self.records.get(ids=[f"document:{doc_id}:{i}" for i in range(1, n)], include=["documents"])
            by_id = dict(zip(rest["ids"], rest["documents"], strict=True))
            text += "".join(by_id[f"document:{doc_id}:{i}"] for i in range(1, n))
        return Document.model_validate_json(text)

    def forget_documents(self, doc_ids: list[str]) -> None:
        """Delete these documents' records (their chunking records stay)."""
        if doc_ids:
            self.records.delete(where={"$and": [{"kind": "document"}, {"doc_id": {"$in": doc_ids}}]})

    @staticmethod
    def chunks_id(doc_id: str, granularity: int, signature: dict) -> str:
        """The record id of a document's chunking at one size under the store's chunking settings."""
        digest = hashlib.sha256(json.dumps(signature, sort_keys=True).encode()).hexdigest()[:16]
        return f"chunks:{doc_id}:g{granularity}:{digest}"

    def has_chunks(self, ids: list[str]) -> set[str]:
        """Which of these chunking record ids the catalog holds."""
        return set(self.records.get(ids=ids, include=[])["ids"]) if ids else set()

    def put_chunks(self, record_id: str, payload: dict) -> None:
        """Store one chunking record (its spans and manifest) under its id."""
        self._put(record_id, json.dumps(payload), {"kind": "chunks", "doc_id": payload["doc_id"]})

    def get_chunks(self, record_id: str) -> dict | None:
        """A chunking record another replica stored (None: not there)."""
        got = self.records.get(ids=[record_id], include=["documents"])
        return json.loads(got["documents"][0]) if got["ids"] else None

    def _put(self, record_id: str, text: str, meta: dict) -> None:
        self.records.upsert(ids=[record_id], documents=[text], embeddings=[PLACEHOLDER], metadatas=[meta])


def _remove(entry: Path) -> None:
    import shutil

    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
