"""A library: many documents searched as one index per chunk size.

Per chunk size ("part"), a library is one Chroma collection holding every unit vector of every
member, with its document id as metadata (a question over part of the library filters on it), and
one BM25 over all members' chunks (bm25s, persisted, the library's IDF). A warm question costs one
vector query and one sparse-matrix product, whatever the number of documents.

The manifest says what the library holds: source key (a file's resolved path, or an inline text's
id) → document id (content hash), with a version number. An update (`Library.update`) runs under the
catalog's update lock, so two processes (or replicas) updating one library queue instead of mixing:
  1. files whose size and mtime are unchanged are not read; only new content is chunked and
     embedded (parts are cached by content: a rename or a second library never embeds twice);
  2. the new members' vectors (named as pending first) are added, a new BM25 written beside the old;
  3. the new manifest is published, a compare-and-set on the version it started from: this is the
     moment the version moves (a writer that lost its lock, or found a newer version, publishes
     nothing and removes what it added: library_gc.py);
  4. removed documents' vectors and replaced collections are kept for a grace period (a reader may
     hold the manifest listing them); the index path deletes them later (library_gc.py), never a question.
A reader reads the manifest once per search and keeps to the documents it lists: one complete version
(an update killed before step 3 leaves the previous one). A question over unchanged files is a reader.
The manifest, the lock and the pending marks live in the store's catalog (catalog.py); a
replica checks a shared manifest's stamp at most once per `SHARED_RECHECK_S` and builds the BM25 of a
version it has not seen from the members' chunkings (its cache, named by the version and a nonce).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Iterable, Sequence

import numpy as np

from ...documents import Document
from ...read.loaders import DocumentError
from ..embed import embedder_identity as identity
from ..store import IndexStore
from . import library_dense
from . import manifest as manifests
from .batch_embed import prepare_part
from .catalog import Held, LockLost, Publication, StalePublish
from .library_bm25 import LibraryBM25
from .library_dense import save_version
from .library_gc import Writes, abandon, clear_after_publish, clear_leftovers, collect_expired, delete_library
from .library_vectors import VectorBatch
from .manifest import LIBRARY_FORMAT, Entry, Event, Manifest, Member, Part, Progress, Skipped, Update, valid_name
from .reading_only import refuse_writes

log = logging.getLogger(__name__)

SHARED_RECHECK_S = 1.0  # with a Chroma server: how stale a replica's view of a manifest may be
_published: set[tuple] = set()  # (library directory, stamp) of versions this process wrote

Key = tuple[str, int]  # (doc_id, chunk index)


class LibraryChanged(RuntimeError):
    """A collection named by the manifest a reader holds was deleted (the reader held it past the
    grace period, or it was deleted by hand): the run ends with this message; asked again, it reads
    the current version."""


class Library:
    """A named library in a store. Safe to share between threads; updates are serialised across
    processes and replicas by the catalog's update lock."""

    def __init__(self, store: IndexStore, name: str):
        if not valid_name(name):
            raise ValueError(f"library name {name!r}: use letters, digits, '-', '_' or '.' (at most 128)")
        self.store, self.name = store, name
        self.catalog = store.catalog  # a Catalog (catalog.py)
        self.dir = self.catalog.dir(name)  # this host's caches (and, without a server, the manifest)
        self._lock = threading.Lock()  # the caches below
        self._update_lock = threading.Lock()  # one update at a time in this process (the file lock: across)
        self._verified: set[tuple[str, int]] = set()  # (part version, client generation) found whole
        self._read_cache: tuple[object, float, Manifest] | None = None  # (stamp, checked at, manifest)
        self._bm25: dict[str, LibraryBM25] = {}  # by directory name: one version per chunk size
        self._units: dict[str, library_dense.UnitMap] = {}  # by the same name
        self._vector_cache = library_dense.VectorCache()  # vectors fetched for exact searches
        self._embedder_ok: set[int] = set()  # versions whose embedder is this process's
        self._collections: dict[int, tuple[int, object]] = {}  # (the store's client generation, handle)
        self._unreadable: dict[str, tuple[tuple[int, int], Skipped]] = {}  # key → (stat, why) a file was skipped
        self._held: Held | None = None  # the update lock, while this process's update holds it
        self._writes = Writes()  # what the update in progress wrote to Chroma

    # -- reading -----------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.catalog.stamp(self.name) is not None

    def manifest(self) -> Manifest:
        """The last complete version (an empty one before the first update). One stat when unchanged;
        with a Chroma server, one small lookup per `SHARED_RECHECK_S`."""
        cached, now = self._read_cache, time.monotonic()
        if cached is not None and self.catalog.shared and now - cached[1] < SHARED_RECHECK_S:
            return cached[2]
        stamp = self.catalog.stamp(self.name)
        if stamp is None:
            return Manifest(name=self.name)
        if cached is not None and cached[0] == stamp:
            self._read_cache = (stamp, now, cached[2])
            return cached[2]
        if not self.catalog.shared and (str(self.dir), stamp) not in _published:  # another process wrote it
            self.store.see_writes_since(stamp[0])
        text = self.catalog.read(self.name)
        if text is None:  # deleted since the stamp was read
            return Manifest(name=self.name)
        manifest = Manifest.model_validate_json(text)
        self._read_cache = (stamp, now, manifest)
        return manifest

    def bm25(self, part: Part, manifest: Manifest | None = None) -> LibraryBM25:
        """The part's BM25 (of `manifest`, by default the current one), loaded once per version (the
        previous version of its size is dropped). A replica that has not seen this version builds it
        from the members' chunkings."""
        with self._lock:
            index = self._bm25.get(part.bm25)
        if index is None:
            if not (self.dir / part.bm25).exists() and self.catalog.shared:
                g = int(part.bm25.split("-v")[0][1:])
                doc_ids = (manifest or self.manifest()).doc_ids()
                units = [self.store.unit_hashes(d, g) for d in doc_ids]
                save_version(self.dir, part.bm25, doc_ids, [self.store.tokens(d, g) for d in doc_ids], units)
                for old in self.dir.glob(f"g{g}-v*"):  # this cache's older versions of the size
                    if old.name != part.bm25:
                        shutil.rmtree(old, ignore_errors=True)
            index = LibraryBM25.load(self.dir / part.bm25)
            size = part.bm25.split("-v")[0]
            with self._lock:
                for name in [n for n in self._bm25 if n.split("-v")[0] == size]:
                    del self._bm25[name]
                self._bm25[part.bm25] = index
        return index

    def collection_name(self, granularity: int, build: int | None = None) -> str:
        """The collection of the current version's part at `granularity`, or (with `build`) the name
        a part built at that version gets. Chroma names allow 3-512 of [a-zA-Z0-9._-]: a hash keeps
        any library name within that."""
        if build is None:
            return self.manifest().parts[granularity].collection
        return f"longqa-lib-{hashlib.sha256(self.name.encode()).hexdigest()[:24]}-g{granularity}-b{build}"

    def collection(self, granularity: int, name: str | None = None, create: bool = True):
        """The current part's collection at `granularity` (or the one named), created if absent; a
        reader (`create=False`) never makes one: a collection gone under it is `LibraryChanged`."""
        name = name or self.collection_name(granularity)
        client = self.store.client
        current = self.store.client_generation
        with self._lock:
            generation, collection = self._collections.get(name, (None, None))
        if collection is None or generation != current:
            if not create:
                from chromadb.errors import NotFoundError

                try:
                    collection = client.get_collection(name, embedding_function=None)
                except NotFoundError:
                    raise LibraryChanged(f"library {self.name}: its collection {name} is gone; ask again") from None
            else:
                collection = client.get_or_create_collection(
                    name,
                    metadata={"library": self.name, "granularity": granularity},
                    configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=None,
                )
            with self._lock:
                self._collections[name] = (current, collection)
        return collection

    def vectors_missing(self, granularity: int, part: Part) -> bool:
        """Fewer vectors than the part needs (a Chroma server wiped or replaced, a collection deleted by
        hand or by another host); checked once per version and client."""
        key = (part.bm25, self.store.client_generation)
        with self._lock:
            if key in self._verified:
                return False
        from chromadb.errors import NotFoundError

        try:  # a reader never creates a collection: a gone one (or one deleted under a kept handle) is missing vectors
            missing = self.collection(granularity, part.collection, create=False).count() < part.stored
        except (LibraryChanged, NotFoundError):
            self._collections.pop(part.collection, None)  # a stale handle: dropped
            missing = True
        if missing:
            log.warning("library %s lost vectors at g=%s; adding them again", self.name, granularity)
        else:
            with self._lock:
                self._verified.add(key)
        return missing

    def dense_top(
        self, part_size: int, part: Part, vector: np.ndarray, depth: int, allowed: set[str], subset: bool
    ) -> dict[Key, float]:
        """(doc_id, chunk) -> cosine of the `depth` best chunks of `allowed` documents (library_dense.py)."""
        collection = self.collection(part_size, part.collection, create=False)
        return library_dense.dense_top(collection, self.units(part), self._vector_cache, vector, depth, allowed, subset)

    def check_embedder(self, manifest: Manifest) -> None:
        """Raise `EmbedderMismatch` where another embedder made the vectors (index/embed/embedder_identity.py)."""
        if manifest.embedder is not None and manifest.version not in self._embedder_ok:
            if identity.check(self.name, manifest.embedder, self.store.embedder, self.catalog.shared):
                self._embedder_ok.add(manifest.version)

    def units(self, part: Part, manifest: Manifest | None = None) -> library_dense.UnitMap:
        """The part's unit map (which chunks each stored vector stands for), loaded once per version."""
        with self._lock:
            units = self._units.get(part.bm25)
        if units is None:
            self.bm25(part, manifest)  # a replica that has not seen this version builds its directory
            units = library_dense.UnitMap.load(self.dir / part.bm25)
            with self._lock:  # one version per chunk size, as the BM25s
                size = part.bm25.split("-v")[0]
                self._units = {k: v for k, v in self._units.items() if k.split("-v")[0] != size} | {part.bm25: units}
        return units

    # -- writing -----------------------------------------------------------------------------
    def update(
        self,
        members: Sequence[Member] | None,
        granularities: Iterable[int] = (),
        dense: bool = True,
        remove_missing: bool = True,
        progress: Progress | None = None,
        collect: bool = True,
        reembed: bool = False,
    ) -> Update:
        """Make the library hold `members` (None: keep the members it has) and be searchable at
        `granularities` besides the chunk sizes it has; `dense=False` builds a new part BM25-only.
        Publishes a new version only when something changed, and clears what a killed update left;
        with `collect` (the index path; a question passes False) also what outlived its grace. Another embedder's
        library: refused when shared (`EmbedderMismatch`), else, or with `reembed`, re-embedded into a new version."""
        refuse_writes(self.name)  # within `reading_only()` (reading_only.py): `ReadingOnly`, no update
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._update_lock:
            self._writes = Writes()
            try:
                with self.catalog.lock(self.name) as held:
                    self._held = held
                    update = self._update(members, set(granularities), dense, remove_missing, progress, reembed)
                    if collect:
                        collect_expired(self, held, self._read_under_lock())
                    return update
            except (LockLost, StalePublish) as e:  # another replica holds the lock, or published, now
                log.warning("library %s: %s; removing what this update added", self.name, e)
                abandon(self, self._writes)
                raise
            finally:
                self._held = None

    def unchanged(self, members: Sequence[Member], granularities: Iterable[int], dense: bool = True) -> Update | None:
        """For a reader (a question): the update that would change nothing, decided from the
        published manifest and the members' stats alone — no lock, no file read, no clean-up — or
        None when something may have changed (then call `update`)."""
        old = self.manifest()
        with self._lock:
            unreadable = dict(self._unreadable)
        update = manifests.unchanged_update(old, members, set(granularities), dense, self.store.signature(), unreadable)
        if update is None or any(p.dense and self.vectors_missing(g, p) for g, p in old.parts.items()):
            return None
        return update

    def _update(self, members, granularities, dense, remove_missing, progress, reembed=False) -> Update:
        old = self._read_under_lock()
        if not reembed and identity.to_check(old, self.store.signature()["embedder"], dense):  # raises where it may not
            reembed = not identity.check(self.name, old.embedder, self.store.embedder, self.catalog.shared)
        if old.version == 0:  # new, or deleted by another replica since: no handle from before is valid
            self.forget_caches()
        update = Update(version=old.version)
        documents, loaded = self._members(old, members, remove_missing, update, progress)
        old_ids, new_ids = old.doc_ids(), list(dict.fromkeys(e.doc_id for _, e in sorted(documents.items())))
        members_changed = old_ids != new_ids
        parts: dict[int, Part] = {}
        signature = self.store.signature()
        clear_leftovers(self, old, self._held)
        if set(new_ids) - set(old_ids):  # named before their vectors are added: a killed update's are cleared
            self.catalog.mark_pending(self._held, self.name, set(new_ids) - set(old_ids))
        for g in sorted(set(old.parts) | granularities):
            part = old.parts.get(g)
            rebuild = part is None or part.signature != signature or reembed
            want_dense = dense if part is None else part.dense or (dense and g in granularities)
            if part is not None and part.dense and self.vectors_missing(g, part):
                part = part.model_copy(update={"dense": False})  # refill from the cached vectors
            if not rebuild and not members_changed and (part.dense or not want_dense):
                parts[g] = part
                continue
            # new, or built with other settings: every member, from scratch, into a new collection
            # (readers of the current version keep theirs until this one is published)
            name = self.collection_name(g, old.version + 1) if rebuild else part.collection
            if rebuild:
                self._writes.created.add(name)
            if not want_dense:
                vectors_for = []
            elif rebuild or not part.dense:
                vectors_for = new_ids
            else:
                vectors_for = [d for d in new_ids if d not in old_ids]
            names = {e.doc_id: e.source for e in documents.values()}  # as this update names them
            parts[g] = self._part(
                g, name, new_ids, vectors_for, want_dense, old.version + 1, loaded, names, update, progress
            )
        if not members_changed and parts == old.parts and documents == old.documents:
            return update
        gone = sorted(set(old_ids) - set(new_ids))
        manifest = Manifest(name=self.name, version=old.version + 1, documents=documents, parts=parts, removed=gone)
        manifest.embedder = identity.record_of(self.store.embedder) if any(p.dense for p in parts.values()) else None
        retired = [p.collection for g, p in old.parts.items() if g in parts and parts[g].collection != p.collection]
        self.store.share(new_ids)  # every text the manifest names is in a shared catalog before it is published
        text = manifest.model_dump_json(indent=1)
        new = Publication(text, manifest.version, old.version, new_ids, retired, gone)
        stamp = self.catalog.publish(self._held, self.name, new)
        _published.add((str(self.dir), stamp))  # the version moved: a compare-and-set on `old.version`
        self._read_cache = None
        update.version, update.published = manifest.version, True
        clear_after_publish(self, manifest, old)
        return update

    def _read_under_lock(self) -> Manifest:
        text = self.catalog.read(self.name)
        manifest = Manifest.model_validate_json(text) if text is not None else Manifest(name=self.name)
        if manifest.format != LIBRARY_FORMAT:  # rebuilt into new collections: the publish retires the old ones
            log.info("library %s has format %s; rebuilding", self.name, manifest.format)
            old = {g: p.model_copy(update={"signature": {}, "dense": False}) for g, p in manifest.parts.items()}
            return Manifest(name=self.name, version=manifest.version, documents=manifest.documents, parts=old)
        return manifest

    def _members(self, old: Manifest, members, remove_missing, update: Update, progress):
        """The new member entries (reading only files whose stat changed) and the documents loaded."""
        documents: dict[str, Entry] = {} if members is not None and remove_missing else dict(old.documents)
        loaded: dict[str, Document] = {}
        total = len(members or [])
        for i, m in enumerate(members or [], 1):
            prev = old.documents.get(m.key)
            if prev is not None and m.stat is not None and (prev.size, prev.mtime_ns) == m.stat:
                documents[m.key] = prev
                update.unchanged.append(prev.source)
            else:
                self._held.check()  # reading a file may take long: the lock's session is kept alive
                try:
                    document = m.load()
                except DocumentError as e:
                    update.skipped.append(Skipped(m.source, e.reason))
                    if m.stat is not None:  # unreadable as it stands: a reader need not try it again
                        with self._lock:
                            self._unreadable[m.key] = (m.stat, update.skipped[-1])
                    documents.pop(m.key, None)
                    continue
                self.store.remember(document, share=False)  # shared with the others before publishing
                size, mtime = m.stat or (None, None)
                documents[m.key] = Entry(
                    doc_id=document.doc_id, source=m.source, size=size, mtime_ns=mtime, n_words=document.n_words
                )
                loaded[document.doc_id] = document
                if prev is None:
                    update.added.append(m.source)
                elif prev.doc_id != document.doc_id:
                    update.changed.append(m.source)
                else:
                    update.unchanged.append(m.source)
            if progress and (i % 50 == 0 or i == total):
                progress(Event("reading", f"read {i}/{total} files", i, total))
        update.removed = [e.source for k, e in sorted(old.documents.items()) if k not in documents]
        return documents, loaded

    def _part(self, g, name, doc_ids, vectors_for, dense, version, loaded, names, update: Update, progress) -> Part:
        """Add the vectors of `vectors_for` to the collection `name` and write a BM25 over every
        member of `doc_ids`."""
        batch = VectorBatch(self.collection(g, name) if dense else None)
        n_units, n_chunks, max_units = 0, 0, 1
        adding = set(vectors_for)
        tokens, units = [], []
        if dense:  # the new members' units embedded together, length-sorted across documents
            embedding = [d for d in doc_ids if d in adding]
            prepare_part(self.store, embedding, loaded, g, self._checking(progress), update, names)
        for i, doc_id in enumerate(doc_ids, 1):
            need_vectors = doc_id in adding
            if need_vectors or not self.store.is_indexed(doc_id, g):
                document = loaded.get(doc_id) or self.store.document(doc_id)
                self._held.check()  # a writer that lost its lock stops here (and tells the server it lives)
                report = self._embedding_progress(progress, names.get(doc_id, document.source), g)
                built = self.store.build(document, g, report, need_vectors)
                update.embedded += built.embedded
                update.chunked += int(built.chunked)
                index = built.index
                if need_vectors:
                    self._writes.added.setdefault(name, set()).add(doc_id)  # before: a partial add is cleared too
                    batch.add(index, self.store.unit_hashes(doc_id, g))  # copied: in large batches; embedded: at once
                    if built.embedded:
                        batch.flush()
                tokens.append(index.tokens)
                n_units += index.n_units
                max_units = max(max_units, index.max_units)
            else:
                tokens.append(self.store.tokens(doc_id, g))
                meta = self.store.chunk_manifest(doc_id, g)
                n_units += meta["n_units"]
                max_units = max(max_units, meta["max_units"])
            n_chunks += len(tokens[-1])
            units.append(self.store.unit_hashes(doc_id, g))
            if progress and need_vectors:
                progress(Event("indexing", f"indexed {i}/{len(doc_ids)} documents (g={g})", i, len(doc_ids)))
        batch.flush()
        bm25_name = f"g{g}-v{version}-{uuid.uuid4().hex[:8]}"  # never a name another build of it had
        save_version(self.dir, bm25_name, doc_ids, tokens, units)
        self.store.share(doc_ids, g)  # with a Chroma server: every replica can read what it names
        return Part(
            bm25=bm25_name,
            collection=name,
            dense=dense,
            n_chunks=n_chunks,
            n_units=n_units,
            max_units=max_units,
            n_vectors=library_dense.distinct(units),
            signature=self.store.signature(),
        )

    def _checking(self, progress: Progress | None) -> Progress:
        """`progress` with the lock checked at each report (a long embedding keeps its session alive)."""
        held = self._held

        def report(event: Event) -> None:
            held.check()
            if progress is not None:
                progress(event)

        return report

    def _embedding_progress(self, progress: Progress | None, source: str, g: int):
        """Each embedding batch checks the lock (a long document keeps its session alive) and reports."""
        message, checking = "embedding {}/{} chunks of " + f"{source} (g={g})", self._checking(progress)
        return lambda done, total: checking(Event("embedding", message.format(done, total), done, total, source))

    def touch(self) -> None:
        """Record in the catalog that this library, made for inline texts, was used now (`forget_unused`)."""
        self.catalog.touch(self.name)

    def delete(self) -> None:
        """Remove the library: its collections and its catalog entries (the documents' cached parts stay)."""
        delete_library(self)

    def forget_caches(self) -> None:
        """Drop this process's handles, BM25 indexes and manifest of the library."""
        with self._lock:
            self._collections.clear()
            self._bm25.clear()
            self._units.clear()
            self._read_cache = None
