"""The catalog in the Chroma server's records, for a Chroma server without PostgreSQL (as before
the PostgreSQL catalog): a deployment of several replicas should set `LONGQA_POSTGRES_URI`.

`SharedCatalog` keeps its records in one Chroma collection on the server, `longqa-catalog` (each
carries the 1-d placeholder vector [1.0]):
    manifest:<library>                 the manifest JSON; metadata: version, stamp (new per publish)
    pending:<library>                  doc ids whose vectors an unpublished update added
    lock:<library>                     the update lease: owner, expiry (renewed while it is held)
    document:<doc_id>:<piece>          the loaded document (text + paragraphs) as JSON, in pieces
    chunks:<doc_id>:g<size>:<signature> a document's chunking at one size (spans, units, build id)
The lease is Chroma's `add`, which keeps the record already there: two replicas adding the same
lock id both read back the one that was applied first. On one host the file lock still orders
processes; the lease orders hosts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from ...documents import Document
from ..files import file_lock
from .catalog import Held, LocalCatalog, LockLost, Publication, chunks_id

log = logging.getLogger(__name__)

CATALOG = "longqa-catalog"
PLACEHOLDER = [1.0]  # a catalog record's vector: Chroma stores no record without one
PIECE_CHARS = 2_000_000  # a document's JSON is stored in pieces of this many characters
LEASE_S = 30.0  # a lock not renewed for this long was left by a killed replica
RENEW_S = 5.0
WAIT_STEP_S = 0.2


class _Lease:
    """`SharedCatalog`'s `Held`: the lease record, while it names this replica."""

    def __init__(self, catalog: SharedCatalog, name: str):
        self.catalog, self.name = catalog, name
        self.lost = threading.Event()  # set by the renewing thread when it finds the lease gone

    def check(self) -> None:
        """Free between documents: what the renewing thread last found."""
        if self.lost.is_set():
            raise LockLost(f"library {self.name}: the update lease was taken over")

    def confirm(self) -> None:
        """Before publishing: the lease record still names this replica (read now; not atomic)."""
        got = self.catalog.records.get(ids=[f"lock:{self.name}"], include=["metadatas"])
        if not got["ids"] or got["metadatas"][0]["owner"] != self.catalog.owner:
            self.lost.set()
        self.check()


class SharedCatalog(LocalCatalog):
    """The same, as records of the Chroma server's `longqa-catalog` collection; this host's
    `libraries/<name>/` holds only caches (BM25 versions), the retired collections and the file lock."""

    shared = True

    def __init__(self, home: Path, client_of):
        super().__init__(home)
        self._client_of = client_of  # () -> the store's current Chroma client
        self._collection: tuple[object, object] | None = None
        self._lock = threading.Lock()
        self.owner = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    @property
    def records(self):
        """The catalog collection on the server (made on first use)."""
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
        """The manifest record's stamp."""
        got = self.records.get(ids=[f"manifest:{name}"], include=["metadatas"])
        return str(got["metadatas"][0]["stamp"]) if got["ids"] else None

    def read(self, name: str) -> str | None:
        """The manifest record's JSON."""
        got = self.records.get(ids=[f"manifest:{name}"], include=["documents"])
        return got["documents"][0] if got["ids"] else None

    def publish(self, held: Held, name: str, new: Publication) -> object:
        """Upsert the manifest record after checking the lease and the version (a read, then a
        write: Chroma has no conditional write, so this narrows the race without closing it). The
        retired collections and removed documents are dated in this host's files, as on one host."""
        if isinstance(held, _Lease):
            held.confirm()
        got = self.records.get(ids=[f"manifest:{name}"], include=["metadatas"])
        found = int(got["metadatas"][0]["version"]) if got["ids"] else 0
        new.replaces(name, found)
        self._record(name, new.retired, new.removed)
        stamp = f"{new.version}-{uuid.uuid4().hex[:12]}"
        meta = {"kind": "manifest", "library": name, "version": new.version, "stamp": stamp}
        self._put(f"manifest:{name}", new.manifest_json, meta)
        self.clear_pending(held, name)
        return stamp

    def pending(self, name: str) -> set[str]:
        """The pending record's doc ids."""
        got = self.records.get(ids=[f"pending:{name}"], include=["documents"])
        with contextlib.suppress(ValueError, TypeError):
            return set(json.loads(got["documents"][0])) if got["ids"] else set()
        return set()

    def mark_pending(self, held: Held, name: str, doc_ids: set[str]) -> None:
        """Write the pending record."""
        self._put(f"pending:{name}", json.dumps(sorted(doc_ids)), {"kind": "pending", "library": name})

    def clear_pending(self, held: Held, name: str) -> None:
        """Delete the pending record."""
        self.records.delete(ids=[f"pending:{name}"])

    def drop(self, held: Held, name: str) -> None:
        """Delete the manifest and pending records, and this host's caches."""
        self.records.delete(ids=[f"manifest:{name}", f"pending:{name}"])
        super().drop(held, name)

    # -- the update lease -----------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[Held]:
        """The file lock, then the lease record (renewed by a thread while it is held)."""
        with file_lock(self.dir(name) / ".lock"):  # processes of this host queue on the file first
            self._acquire(name)
            stop, lease = threading.Event(), _Lease(self, name)
            renewer = threading.Thread(target=self._renew, args=(lease, stop), daemon=True, name=f"lease-{name}")
            renewer.start()
            try:
                yield lease
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

    def _renew(self, lease: _Lease, stop: threading.Event) -> None:
        name, lock_id = lease.name, f"lock:{lease.name}"
        while not stop.wait(RENEW_S):
            try:
                got = self.records.get(ids=[lock_id], include=["metadatas"])
                if not got["ids"] or got["metadatas"][0]["owner"] != self.owner:
                    log.error("library %s: lost the update lease", name)
                    lease.lost.set()  # the update stops at its next check
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
        """Write its JSON in pieces, piece 0 last."""
        text = document.model_dump_json()
        pieces = [text[i : i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS)] or [""]
        for i in reversed(range(len(pieces))):  # piece 0 last: its presence says the rest is there
            meta = {"kind": "document", "doc_id": document.doc_id, "piece": i, "pieces": len(pieces)}
            self._put(f"document:{document.doc_id}:{i}", pieces[i], meta)

    def get_document(self, doc_id: str) -> Document | None:
        """Read its pieces back."""
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

    def forget_documents(self, doc_ids: list[str], older_than_s: float = 0.0) -> None:
        """Delete their records (this catalog keeps no references: a text another library holds
        goes too; with PostgreSQL it stays while referenced)."""
        if doc_ids:
            self.records.delete(where={"$and": [{"kind": "document"}, {"doc_id": {"$in": doc_ids}}]})

    def has_chunks(self, ids: list[str]) -> set[str]:
        """Which chunking records exist."""
        return set(self.records.get(ids=ids, include=[])["ids"]) if ids else set()

    def put_chunks(self, record_id: str, payload: dict) -> None:
        """Write a chunking record."""
        self._put(record_id, json.dumps(payload), {"kind": "chunks", "doc_id": payload["doc_id"]})

    def get_chunks(self, record_id: str) -> dict | None:
        """A chunking record's payload."""
        got = self.records.get(ids=[record_id], include=["documents"])
        return json.loads(got["documents"][0]) if got["ids"] else None

    def _put(self, record_id: str, text: str, meta: dict) -> None:
        self.records.upsert(ids=[record_id], documents=[text], embeddings=[PLACEHOLDER], metadatas=[meta])


__all__ = ["SharedCatalog", "chunks_id"]
