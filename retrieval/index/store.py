"""One document's index parts, keyed by its content hash: chunks, BM25 tokens and unit vectors.
They are what a library (retrieval/index/library/library.py: one Chroma collection and one BM25 per chunk size)
is assembled from, so a document in two libraries, or re-added after a rename, is embedded once.

Layout under `IndexSettings.home`:
    chroma/                             embedded Chroma (unused when a Chroma server is configured)
    index/<doc_id>/document.json        the loaded document (text + paragraphs)
    index/<doc_id>/g<granularity>/      chunks.json, bm25.json, manifest.json (manifest written last),
                                        vectors-<build>.npz (the units' vectors, written atomically)
    libraries/<name>/                   a library's manifest and BM25 versions (retrieval/index/library/library.py)

With a Chroma server (replicas), the shared catalog (retrieval/index/library/catalog.py: PostgreSQL, or the Chroma
server's records) holds every document and its chunkings too: a replica that lacks one copies it
into the layout above, which is then a cache.

The chunks and BM25 tokens are written into a temporary directory that is renamed into place with
its manifest. The vectors are embedded only when a dense index first needs them (BM25-only search
never embeds) and written whole, under the chunking's build id, with one rename. An interrupted
build (exception, Ctrl-C, kill) is never served: the next request finds no manifest, or no vectors
file, and builds that part again.

Dense scoring rule: all-MiniLM-L6-v2 reads at most 256 word pieces (254 after [CLS]/[SEP]). A
chunk that fits is embedded whole. A longer chunk is cut into consecutive units of at most 254
word pieces, each embedded; the chunk's dense score is the best (max) cosine similarity of its
units. No text is ever silently truncated out of dense scoring.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..bm25 import bm25_tokens
from ..documents import Chunk, Document
from ..read.loaders import DocumentError, load_document, printable_name
from ..tokens import TokenCounter, default_counter, embedder_model_path
from .chroma import make_chroma_client
from .chunk_index import Built, ChunkIndex, dense_units, embed_units, unit_hash
from .chunking import chunk_document
from .config import IndexSettings
from .embed.embedder import Embedder, describe, get_embedder
from .files import atomic_write, file_lock
from .library.catalog import TextCatalog, chunks_id
from .library.catalog_choice import make_catalog

log = logging.getLogger(__name__)

INDEX_FORMAT = 4  # 2: stemmed BM25 tokens; 3: the chunking is named in the manifest; 4: units.json
_EMBED_BATCH = 2000  # units embedded between two progress reports
INLINE_MARK = "inline-used-at"  # in a document's directory: it came inline; when it was last used


class IndexStore:
    """Builds, persists, loads and caches ChunkIndexes. Safe to share between threads."""

    def __init__(
        self,
        settings: IndexSettings | None = None,
        embedder: Embedder | None = None,
        counter: TokenCounter | None = None,
    ):
        self.settings = settings or IndexSettings()
        self._embedder = embedder
        self.counter = counter or default_counter()
        self._client = None
        self._client_born_ns = 0
        self.client_generation = 0  # moves with each new client: collection handles of an older one are stale
        self._lock = threading.RLock()
        self._build_locks: dict[tuple[str, int], threading.Lock] = {}
        self._indexes: dict[tuple[str, int], ChunkIndex] = {}
        self._documents: dict[tuple[str, int, int], Document] = {}
        self.catalog = make_catalog(self.settings, lambda: self.client)
        self._shared: set[str] = set()  # catalog record ids known to be written

    # -- resources -------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The sentence embedder, loaded on first use."""
        if self._embedder is None:
            self._embedder = get_embedder(batch_size=self.settings.embed_batch_size, endpoint=self.settings.embeddings)
        return self._embedder

    @property
    def client(self):
        """The Chroma client (embedded or the server's), made on first use and again after `see_writes_since` dropped
        it."""
        with self._lock:
            if self._client is None:
                self._client_born_ns = time.time_ns()
                self._client = make_chroma_client(self.settings)
                self.client_generation += 1
            return self._client

    def see_writes_since(self, written_ns: int) -> None:
        """Make another process's Chroma writes at `written_ns` visible here. An embedded client
        keeps each collection's vector index in memory and does not reload it when another process
        adds to it (its queries miss the new vectors); a client created after the write reads them.
        A Chroma server is one process: nothing to do."""
        if self.settings.chroma_host:
            return
        with self._lock:
            if self._client is not None and self._client_born_ns < written_ns:
                from chromadb.api.client import SharedSystemClient

                SharedSystemClient.clear_system_cache()
                self._client = None

    def _embedder_spec(self) -> tuple[str, int]:
        """(name, most word pieces per unit) of the embedder, without loading it when its config says."""
        if self._embedder is None:
            endpoint = self.settings.embeddings
            spec = (endpoint.name, endpoint.max_tokens) if endpoint else describe(embedder_model_path())
            if spec is not None:
                return spec
        return self.embedder.name, self.embedder.max_tokens

    def doc_dir(self, doc_id: str) -> Path:
        """This host's directory of one indexed document."""
        return self.settings.home / "index" / doc_id

    # -- documents -------------------------------------------------------------------------
    def load(self, path: str | Path) -> Document:
        """Load a file (memoised on path, size and mtime) and persist it under its content hash."""
        try:
            p = Path(path).expanduser().resolve()
        except (RuntimeError, OSError) as e:  # a symlink loop
            reason = "symlink loop" if "loop" in str(e).lower() else str(e)
            raise DocumentError(printable_name(path), f"cannot be resolved ({reason})") from None
        try:
            st = p.stat()
            key = (str(p), st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
        if key and key in self._documents:
            return self._documents[key]
        document = load_document(p, max_words=self.settings.max_words)
        for warning in document.warnings:  # as the bounded reader says it: the text is partial
            log.warning("%s: not fully read: %s", document.source, warning)
        self.remember(document)
        if key:
            self._documents[key] = document
        return document

    def remember_inline(self, document: Document) -> None:
        """Persist a text passed inline, marked with when it was last used (see `forget_inline`).
        Checked against the catalog afresh: another replica may have forgotten it there."""
        self._shared.discard(f"document:{document.doc_id}")
        self.remember(document)
        (self.doc_dir(document.doc_id) / INLINE_MARK).write_text(str(time.time()), "utf-8")

    def forget_inline(self, older_than_s: float, keep: set[str] = frozenset()) -> int:
        """Delete inline texts not used for `older_than_s` seconds (their chunks, vectors and text);
        return how many. Documents loaded from files are never touched."""
        removed = 0
        for mark in self.settings.home.glob(f"index/*/{INLINE_MARK}"):
            doc_dir = mark.parent
            try:
                age = time.time() - float(mark.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if age < older_than_s or doc_dir.name in keep:
                continue
            with self._lock:
                for key in [k for k in self._indexes if k[0] == doc_dir.name]:
                    del self._indexes[key]
            shutil.rmtree(doc_dir, ignore_errors=True)
            if self.catalog.shared:  # the text goes from the catalog too, unless a library still holds it
                self.catalog.forget_documents([doc_dir.name], older_than_s)  # type: ignore[attr-defined]
                self._shared.discard(f"document:{doc_dir.name}")
            removed += 1
        return removed

    def remember(self, document: Document, share: bool = True) -> None:
        """Persist a document's text so it can later be named by its id (collections, servers, and
        with a shared catalog, every replica; `share=False`: the caller shares it later, in one batch)."""
        target = self.doc_dir(document.doc_id) / "document.json"
        if not target.exists():
            atomic_write(target, document.model_dump_json())
        if share:
            self.share([document.doc_id])

    def document(self, doc_id: str) -> Document:
        """An indexed document by id: from this host's disk, else copied from the shared catalog; KeyError when
        neither holds it."""
        target = self.doc_dir(doc_id) / "document.json"
        if not target.exists():
            shared = self.catalog.get_document(doc_id) if self.catalog.shared else None  # type: ignore[attr-defined]
            if shared is None:
                raise KeyError(f"no indexed document with id {doc_id}")
            atomic_write(target, shared.model_dump_json())  # this replica's copy from now on
            return shared
        return Document.model_validate_json(target.read_text("utf-8"))

    def share(self, doc_ids: list[str], granularity: int | None = None) -> None:
        """With a Chroma server: make sure its catalog holds these documents (and their chunking at
        `granularity`), written from this host's copy where missing. One lookup for all of them."""
        if not self.catalog.shared:
            return
        catalog: TextCatalog = self.catalog  # type: ignore[assignment]
        wanted = {f"document:{d}": d for d in doc_ids if f"document:{d}" not in self._shared}
        if granularity is not None:
            signature = self.signature()
            wanted |= {chunks_id(d, granularity, signature): d for d in doc_ids}
            wanted = {k: d for k, d in wanted.items() if k not in self._shared}
        if not wanted:
            return
        docs = [d for k, d in wanted.items() if k.startswith("document:")]
        present = {f"document:{d}" for d in catalog.has_documents(docs)} if docs else set()
        present |= catalog.has_chunks([k for k in wanted if k.startswith("chunks:")])
        for key, doc_id in wanted.items():
            if key in present:
                continue
            if key.startswith("document:"):
                catalog.put_document(Document.model_validate_json((self.doc_dir(doc_id) / "document.json").read_text()))
            else:
                catalog.put_chunks(key, self._chunking_record(doc_id, granularity))  # type: ignore[arg-type]
        self._shared |= set(wanted)

    # -- indexes ---------------------------------------------------------------------------
    def index(
        self,
        document: Document,
        granularity: int,
        progress: Callable[[int, int], None] | None = None,
        dense: bool = True,
    ) -> ChunkIndex:
        """The index of `document` at `granularity`: from memory, else from disk, else built.
        `progress(done, total)` reports embedding progress in units; `dense=False` (BM25-only
        search) neither embeds nor needs the vectors."""
        return self.build(document, granularity, progress, dense).index

    def build(
        self,
        document: Document,
        granularity: int,
        progress: Callable[[int, int], None] | None = None,
        dense: bool = True,
    ) -> Built:
        """Like `index`, and says what this call did: chunked the document, embedded vectors, or
        neither (everything was cached)."""
        key = (document.doc_id, granularity)
        with self._lock:
            index = self._indexes.get(key)
            if index is not None and (index.vectors is not None or not dense):
                return Built(index)
            build_lock = self._build_locks.setdefault(key, threading.Lock())
        with build_lock, file_lock(self.doc_dir(document.doc_id) / f"g{granularity}.lock"):
            index = self._indexes.get(key)
            chunked, embedded = False, 0
            if index is None:
                index = self._open(document, granularity)
                if index is None:
                    index, chunked = self._build(document, granularity), True
            if dense and index.vectors is None and not self._open_vectors(index):
                self._embed(index, progress)
                embedded = index.n_units
            with self._lock:
                self._indexes[key] = index
            return Built(index, chunked=chunked, embedded=embedded)

    def tokens(self, doc_id: str, granularity: int) -> list[list[str]]:
        """The BM25 tokens of a document's chunks, without loading its text (a library's BM25 is
        rebuilt from every member's tokens)."""
        index = self._indexes.get((doc_id, granularity))
        if index is not None:
            return index.tokens
        self._copy_shared_chunking(doc_id, granularity)
        return json.loads((self.doc_dir(doc_id) / f"g{granularity}" / "bm25.json").read_text("utf-8"))

    def signature(self) -> dict[str, object]:
        """What a chunking depends on: a library built under another signature is rebuilt."""
        return {
            "format": INDEX_FORMAT,
            "tokenizer": self.counter.name,
            "chunking": self.settings.chunking,
            "embedder": self._embedder_spec()[0],
        }

    def unit_hashes(self, doc_id: str, granularity: int) -> list[tuple[int, str]]:
        """(chunk, its text's hash) per unit of a chunking, in vector order (index/library/library_dense.py)."""
        self._copy_shared_chunking(doc_id, granularity)
        rows = json.loads((self.doc_dir(doc_id) / f"g{granularity}" / "units.json").read_text("utf-8"))
        return [(int(c), str(h)) for c, h in rows]

    def chunk_manifest(self, doc_id: str, granularity: int) -> dict:
        """What a document's chunking at `granularity` holds (chunks, units), from its manifest."""
        self._copy_shared_chunking(doc_id, granularity)
        return json.loads((self.doc_dir(doc_id) / f"g{granularity}" / "manifest.json").read_text("utf-8"))

    def is_indexed(self, doc_id: str, granularity: int) -> bool:
        """Chunks and BM25 are on disk, or copied here from the shared catalog (the vectors may still
        need embedding into this Chroma)."""
        self._copy_shared_chunking(doc_id, granularity)
        return (self.doc_dir(doc_id) / f"g{granularity}" / "manifest.json").exists()

    def _chunking_record(self, doc_id: str, granularity: int) -> dict:
        """A chunking as the catalog holds it: its manifest and chunk spans (tokens are derived)."""
        gdir = self.doc_dir(doc_id) / f"g{granularity}"
        record = json.loads((gdir / "manifest.json").read_text("utf-8"))
        rows = json.loads((gdir / "chunks.json").read_text("utf-8"))
        return {**record, "rows": rows, "units": json.loads((gdir / "units.json").read_text("utf-8"))}

    def _copy_shared_chunking(self, doc_id: str, granularity: int) -> None:
        """Where this host lacks a chunking the catalog holds (made by another replica): copy it
        into the local layout, BM25 tokens recomputed from the text, manifest last."""
        gdir = self.doc_dir(doc_id) / f"g{granularity}"
        if not self.catalog.shared or (gdir / "manifest.json").exists():
            return
        record_id = chunks_id(doc_id, granularity, self.signature())
        record = self.catalog.get_chunks(record_id)  # type: ignore[attr-defined]
        if record is None or "units" not in record:  # none, or an older longqa's: this host chunks it
            return
        document = self.document(doc_id)
        rows, units = record.pop("rows"), record.pop("units")
        tokens = [bm25_tokens(document.text[s:e]) for s, e, _, _ in rows]
        gdir.mkdir(parents=True, exist_ok=True)
        atomic_write(gdir / "chunks.json", json.dumps(rows))
        atomic_write(gdir / "units.json", json.dumps(units))
        atomic_write(gdir / "bm25.json", json.dumps(tokens))
        atomic_write(gdir / "manifest.json", json.dumps(record, indent=1))
        self._shared.add(record_id)

    def _open(self, document: Document, granularity: int) -> ChunkIndex | None:
        """Chunks and BM25 tokens from disk; None when absent or built with other settings."""
        gdir = self.doc_dir(document.doc_id) / f"g{granularity}"
        manifest_file = gdir / "manifest.json"
        self._copy_shared_chunking(document.doc_id, granularity)
        if not manifest_file.exists():
            return None
        manifest = json.loads(manifest_file.read_text("utf-8"))
        if (
            manifest.get("format") != INDEX_FORMAT
            or manifest.get("tokenizer") != self.counter.name
            or manifest.get("chunking") != self.settings.chunking
            or manifest.get("embedder") != self._embedder_spec()[0]
        ):
            log.info("index %s was built with other settings; rebuilding", gdir)
            return None
        chunk_rows = json.loads((gdir / "chunks.json").read_text("utf-8"))
        chunks = [
            Chunk(
                doc_id=document.doc_id, index=i, start=s, end=e, paragraph_ids=pids, n_tokens=n, text=document.text[s:e]
            )
            for i, (s, e, pids, n) in enumerate(chunk_rows)
        ]
        tokens = json.loads((gdir / "bm25.json").read_text("utf-8"))
        return ChunkIndex(
            document,
            granularity,
            chunks,
            tokens,
            manifest["n_units"],
            manifest["max_units"],
            str(manifest.get("build", "")),
        )

    def _vectors_file(self, index: ChunkIndex) -> Path:
        return self.doc_dir(index.document.doc_id) / f"g{index.granularity}" / f"vectors-{index.build_id}.npz"

    def _open_vectors(self, index: ChunkIndex) -> bool:
        """Load the vectors of this chunking from disk; False when absent or not whole."""
        target = self._vectors_file(index)
        try:
            with np.load(target) as data:
                vectors, unit_chunks = data["vectors"], data["chunks"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):  # absent (the normal case), or damaged
            return False
        if len(vectors) != index.n_units or len(unit_chunks) != index.n_units:
            log.warning("vectors %s do not match their chunking; embedding again", target)
            return False
        index.vectors, index.unit_chunks = vectors, unit_chunks
        return True

    def _embed(self, index: ChunkIndex, progress: Callable[[int, int], None] | None) -> None:
        """Embed every unit (the rule in this module's docstring) and write them with one rename."""
        units = dense_units(index.chunks, self.embedder.max_tokens)
        vectors = embed_units(self.embedder, [u[2] for u in units], _EMBED_BATCH, progress)
        self.save_vectors(index, vectors, np.array([u[0] for u in units], dtype=np.int32))

    def open_vectors(self, index: ChunkIndex) -> bool:
        """Whether the chunking's vectors are on the index, loading them from disk when they are there."""
        return index.vectors is not None or self._open_vectors(index)

    def save_vectors(self, index: ChunkIndex, vectors: np.ndarray, unit_chunks: np.ndarray) -> None:
        """Write a chunking's unit vectors (in `dense_units` order) with one rename; keep them on the index."""
        target = self._vectors_file(index)
        fd, tmp = tempfile.mkstemp(prefix=".vectors.", suffix=".npz", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, vectors=vectors, chunks=unit_chunks)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        index.vectors, index.unit_chunks = vectors, unit_chunks

    def _build(self, document: Document, granularity: int) -> ChunkIndex:
        """Chunk the document and write chunks, BM25 tokens and the manifest (last, atomically)."""
        self.remember(document)
        chunks = chunk_document(document, granularity, self.counter, align=self.settings.chunking)
        units = dense_units(chunks, self._embedder_spec()[1])
        tokens = [bm25_tokens(c.text) for c in chunks]
        max_units = max(Counter(u[0] for u in units).values(), default=1)
        gdir = self.doc_dir(document.doc_id) / f"g{granularity}"
        gdir.parent.mkdir(parents=True, exist_ok=True)
        # what a killed build left (SIGKILL skips its cleanup); this build holds the granularity's lock
        for stale in gdir.parent.glob(f".g{granularity}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".g{granularity}.tmp-", dir=gdir.parent))
        try:
            (tmp / "chunks.json").write_text(
                json.dumps([[c.start, c.end, c.paragraph_ids, c.n_tokens] for c in chunks]), "utf-8"
            )
            (tmp / "bm25.json").write_text(json.dumps(tokens), "utf-8")
            (tmp / "units.json").write_text(json.dumps([[u[0], unit_hash(u[2])] for u in units]), "utf-8")
            build_id = uuid.uuid4().hex
            manifest = {
                "format": INDEX_FORMAT,
                "build": build_id,
                "doc_id": document.doc_id,
                "granularity": granularity,
                "n_chunks": len(chunks),
                "n_units": len(units),
                "max_units": max_units,
                "n_tokens": sum(c.n_tokens for c in chunks),
                "tokenizer": self.counter.name,
                "chunking": self.settings.chunking,
                "embedder": self._embedder_spec()[0],
                "source": document.source,
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), "utf-8")
            if gdir.exists():
                shutil.rmtree(gdir)
            os.replace(tmp, gdir)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return ChunkIndex(document, granularity, chunks, tokens, len(units), max_units, build_id)
