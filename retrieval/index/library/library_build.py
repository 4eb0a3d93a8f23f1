"""One library built by many workers (issue 49): `longqa index-together` on one host or several.

Every worker is given the same members (files on a shared volume) and joins the build of the next
version through PostgreSQL (retrieval/index/library/build_queue.py): it claims batches of pending documents with
`FOR UPDATE SKIP LOCKED`, reads, chunks and embeds them (through its embedder: an endpoint fleet, or
the bundled model), shares their texts and chunkings in the catalog and adds their vectors to the
build's own collections on the Chroma server, then marks them done. Record ids are the unit texts'
hashes and Chroma's `add` keeps a record already there, so a batch taken over from a killed worker
(its claim expired) adds nothing twice. When no item is pending or claimed, a worker takes the
library's update lock and publishes the version once, by the catalog's compare-and-set on the
version the build started from; the others see it published and stop. Questions read the previous
version until then. A build always writes new collections for every member (not an in-place update)."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...read.loaders import DocumentError
from ..embed import embedder_identity as identity
from ..store import IndexStore
from . import library_dense
from .batch_embed import embed_together
from .build_queue import LEASE_S, BuildQueue, Item
from .catalog import Publication
from .catalog_postgres import PostgresCatalog
from .library import Library
from .library_vectors import VectorBatch
from .manifest import Entry, Manifest, Member, Part

POLL_S = 0.5  # how often a worker with nothing to claim looks again while others finish


@dataclass
class WorkerReport:
    """What one worker did: documents it embedded and added, skipped, and whether it published."""

    owner: str
    version: int
    documents: int = 0
    skipped: list[str] = field(default_factory=list)
    published: bool = False
    coordination_s: float = 0.0  # time spent claiming, waiting and publishing (not reading or embedding)


def worker_name() -> str:
    """This worker's name in the claims: host, process and a nonce."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def build_together(
    store: IndexStore,
    name: str,
    members: Sequence[Member],
    granularities: Sequence[int] = (150,),
    batch: int = 8,
    progress: Callable[[str], None] | None = None,
    lease_s: float = LEASE_S,
) -> WorkerReport:
    """Work on the library's next version with whatever other workers run the same build, until it
    is published (by this worker or another), claiming `batch` documents at a time (a claim not renewed
    for `lease_s` is another worker's); ValueError without the shared catalog."""
    if not isinstance(store.catalog, PostgresCatalog) or not store.settings.chroma_host:
        raise ValueError("building with many workers needs the shared catalog: CHROMA_HOST and LONGQA_POSTGRES_URI")
    library = Library(store, name)
    version = library.manifest().version + 1
    report = WorkerReport(worker_name(), version)
    queue = BuildQueue(store.catalog, name, f"v{version}", report.owner, lease_s)
    t0 = time.perf_counter()
    queue.join([Item(m.key, m.source) for m in members], store.signature()["embedder"])
    by_key = {m.key: m for m in members}
    collections = {g: library.collection(g, library.collection_name(g, version)) for g in granularities}
    report.coordination_s += time.perf_counter() - t0
    while True:
        t0 = time.perf_counter()
        items = queue.claim(batch)
        if not items:
            counts = queue.counts()
            if queue.published():
                report.coordination_s += time.perf_counter() - t0
                return report
            if not counts.get("pending") and not counts.get("claimed"):
                report.published = _publish(library, queue, version, granularities)
                report.coordination_s += time.perf_counter() - t0
                return report
            time.sleep(POLL_S)  # the last batches are another worker's (or expire, and are taken here)
            report.coordination_s += time.perf_counter() - t0
            continue
        report.coordination_s += time.perf_counter() - t0
        _work(store, queue, items, by_key, collections, report)
        if progress:
            progress(f"{report.owner}: {report.documents} document(s) added to version {version}")


def _work(store: IndexStore, queue: BuildQueue, items: list[Item], by_key, collections, report: WorkerReport) -> None:
    """Read, chunk, embed and add one claimed batch, then mark each item done (or skipped)."""
    documents = []
    for item in items:
        member = by_key.get(item.key)
        try:
            if member is None:
                raise DocumentError(item.source, "not among this worker's files (give every worker the same paths)")
            document = member.load()
        except DocumentError as e:
            queue.finish(item.key, None, e.reason)
            report.skipped.append(f"{item.source}: {e.reason}")
            continue
        store.remember(document, share=False)
        documents.append((item, document))
    if not documents:
        return
    doc_ids = list(dict.fromkeys(d.doc_id for _, d in documents))
    store.share(doc_ids)
    for g, collection in collections.items():
        embed_together(store, [d for _, d in documents], g, progress=lambda done, total: queue.renew())
        vectors = VectorBatch(collection)
        for doc_id in doc_ids:
            index = store.index(store.document(doc_id), g)
            vectors.add(index, store.unit_hashes(doc_id, g))
        vectors.flush()
        store.share(doc_ids, g)
    for item, document in documents:
        queue.finish(item.key, document.doc_id)
    report.documents += len(documents)


def _publish(library: Library, queue: BuildQueue, version: int, granularities: Sequence[int]) -> bool:
    """Under the update lock: publish the build as `version` unless another worker did (False)."""
    store, catalog = library.store, library.catalog
    with catalog.lock(library.name) as held:
        if queue.published():
            return False
        old = library._read_under_lock()
        done = queue.done()
        documents = {key: _entry(store, key, source, doc_id) for key, source, doc_id in done}
        doc_ids = list(dict.fromkeys(doc_id for _, _, doc_id in done))
        parts = {g: _part(library, g, version, doc_ids) for g in granularities}
        gone = sorted(set(old.doc_ids()) - set(doc_ids))
        manifest = Manifest(name=library.name, version=version, documents=documents, parts=parts, removed=gone)
        manifest.embedder = identity.record_of(store.embedder)
        retired = [
            p.collection for p in old.parts.values() if p.collection not in {q.collection for q in parts.values()}
        ]
        new = Publication(manifest.model_dump_json(indent=1), version, old.version, doc_ids, retired, gone)
        catalog.publish(held, library.name, new)
        queue.mark_published(held.conn)
    library.forget_caches()
    return True


def _entry(store: IndexStore, key: str, source: str, doc_id: str) -> Entry:
    """A member's manifest entry; a file's stat recorded so a later `longqa index` sees it unchanged."""
    try:
        st = Path(key).stat()
        size, mtime = st.st_size, st.st_mtime_ns
    except OSError:
        size = mtime = None
    return Entry(doc_id=doc_id, source=source, size=size, mtime_ns=mtime, n_words=store.document(doc_id).n_words)


def _part(library: Library, g: int, version: int, doc_ids: list[str]) -> Part:
    """The part at `g` over every member: its BM25 and unit map written here, its vectors already added."""
    store = library.store
    tokens = [store.tokens(d, g) for d in doc_ids]
    units = [store.unit_hashes(d, g) for d in doc_ids]
    metas = [store.chunk_manifest(d, g) for d in doc_ids]
    bm25_name = f"g{g}-v{version}-{uuid.uuid4().hex[:8]}"
    library_dense.save_version(library.dir, bm25_name, doc_ids, tokens, units)
    return Part(
        bm25=bm25_name,
        collection=library.collection_name(g, version),
        dense=True,
        n_chunks=sum(len(t) for t in tokens),
        n_units=sum(m["n_units"] for m in metas),
        max_units=max([m["max_units"] for m in metas], default=1),
        n_vectors=library_dense.distinct(units),
        signature=store.signature(),
    )
