"""The persisted index: Chroma for dense vectors, BM25 tokens and chunk offsets on local disk.

Layout under `IndexSettings.home`:
    chroma/                             embedded Chroma (unused when a Chroma server is configured)
    index/<doc_id>/document.json        the loaded document (text + paragraphs)
    index/<doc_id>/g<granularity>/      chunks.json, bm25.json, manifest.json (manifest written last)
    collections/<name>.json             named sets of documents

An index is keyed by the document's content hash and the granularity, and built in two parts. The
chunks and BM25 tokens are written into a temporary directory that is renamed into place with its
manifest. The vectors go into a Chroma collection that is marked complete only when it holds every
one, and are embedded only when a dense search first needs them (BM25-only search never embeds).
An interrupted build (exception, Ctrl-C, kill) is never served: the next request finds no
manifest, or an unmarked collection, and builds that part again.

Dense scoring rule: all-MiniLM-L6-v2 reads at most 256 word pieces (254 after [CLS]/[SEP]). A
chunk that fits is embedded whole. A longer chunk is cut into consecutive units of at most 254
word pieces, each embedded; the chunk's dense score is the best (max) cosine similarity of its
units. No text is ever silently truncated out of dense scoring.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bm25 import SparseIndex, bm25_tokens
from .chunking import chunk_document
from .config import IndexSettings
from .documents import Chunk, Document
from .embedder import Embedder, describe, get_embedder
from .loaders import DocumentError, load_document, printable_name
from .tokens import TokenCounter, default_counter, embedder_model_path, word_windows, wordpiece_counter

log = logging.getLogger(__name__)

INDEX_FORMAT = 3  # 2: stemmed BM25 tokens; 3: the chunking is named in the manifest
_ADD_BATCH = 2000  # vectors per Chroma add() call
INLINE_MARK = "inline-used-at"  # in a document's directory: it came inline; when it was last used


class ChunkIndex:
    """One document at one granularity: its chunks, a BM25 index and the Chroma collection of its
    units (None until a dense search needs it: BM25-only use never embeds)."""

    def __init__(
        self,
        document: Document,
        granularity: int,
        chunks: list[Chunk],
        tokens: list[list[str]],
        collection,
        n_units: int,
        max_units: int,
        build_id: str,
    ):
        self.build_id = build_id  # names this chunking; its vectors carry it, so stale ones are never served
        self.document = document
        self.granularity = granularity
        self.chunks = chunks
        self.tokens = tokens
        self.collection = collection
        self.n_units = n_units
        self.max_units = max_units  # most units any chunk has; how deep to query Chroma
        self.sparse = SparseIndex(tokens)

    def dense_top(self, query_vector: np.ndarray, depth: int) -> list[tuple[int, float]]:
        """(chunk index, cosine similarity) of the best `depth` chunks, each scored by its best unit."""
        if self.collection is None:
            raise RuntimeError("this index was opened for BM25 only; index it with dense=True to search vectors")
        n = min(self.n_units, depth * self.max_units)
        if n == 0:
            return []
        res = self.collection.query(
            query_embeddings=[query_vector.tolist()], n_results=n, include=["metadatas", "distances"]
        )
        best: dict[int, float] = {}
        for meta, dist in zip(res["metadatas"][0], res["distances"][0], strict=True):
            ci, sim = int(meta["chunk"]), 1.0 - float(dist)
            if sim > best.get(ci, -2.0):
                best[ci] = sim
        return sorted(best.items(), key=lambda kv: -kv[1])[:depth]


@dataclass
class Built:
    """What `IndexStore.build` did: `chunked` the document (chunks + BM25 written), `embedded` this
    many vectors; neither means the index was served from cache."""

    index: ChunkIndex
    chunked: bool = False
    embedded: int = 0


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
        self._lock = threading.RLock()
        self._build_locks: dict[tuple[str, int], threading.Lock] = {}
        self._indexes: dict[tuple[str, int], ChunkIndex] = {}
        self._documents: dict[tuple[str, int, int], Document] = {}

    # -- resources -------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder(batch_size=self.settings.embed_batch_size)
        return self._embedder

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                self._client = make_chroma_client(self.settings)
            return self._client

    def _embedder_spec(self) -> tuple[str, int]:
        """(name, most word pieces per unit) of the embedder, without loading it when its config says."""
        if self._embedder is None:
            spec = describe(embedder_model_path())
            if spec is not None:
                return spec
        return self.embedder.name, self.embedder.max_tokens

    def doc_dir(self, doc_id: str) -> Path:
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
        self.remember(document)
        if key:
            self._documents[key] = document
        return document

    def remember_inline(self, document: Document) -> None:
        """Persist a text passed inline, marked with when it was last used (see `forget_inline`)."""
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
            for gdir in doc_dir.glob("g*"):
                if gdir.is_dir() and gdir.name[1:].isdigit():
                    with contextlib.suppress(Exception):  # absent in this Chroma store: nothing to delete
                        self.client.delete_collection(self._collection_name(doc_dir.name, int(gdir.name[1:])))
            shutil.rmtree(doc_dir, ignore_errors=True)
            removed += 1
        return removed

    def remember(self, document: Document) -> None:
        """Persist a document's text so it can later be named by its id (collections, servers)."""
        target = self.doc_dir(document.doc_id) / "document.json"
        if not target.exists():
            _atomic_write(target, document.model_dump_json())

    def document(self, doc_id: str) -> Document:
        target = self.doc_dir(doc_id) / "document.json"
        if not target.exists():
            raise KeyError(f"no indexed document with id {doc_id}")
        return Document.model_validate_json(target.read_text("utf-8"))

    # -- named collections (several documents searched as one) ----------------------------
    def save_collection(self, name: str, doc_ids: list[str]) -> None:
        if not name or not all(ch.isalnum() or ch in "-_." for ch in name):
            raise ValueError(f"collection name {name!r}: use letters, digits, '-', '_' or '.'")
        _atomic_write(self.settings.home / "collections" / f"{name}.json", json.dumps(sorted(set(doc_ids))))

    def collection(self, name: str) -> list[str]:
        target = self.settings.home / "collections" / f"{name}.json"
        if not name or not all(ch.isalnum() or ch in "-_." for ch in name) or not target.exists():
            raise KeyError(f"no collection named {name!r} (create one with `longqa index --collection`)")
        return json.loads(target.read_text("utf-8"))

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
            if index is not None and (index.collection is not None or not dense):
                return Built(index)
            build_lock = self._build_locks.setdefault(key, threading.Lock())
        with build_lock, _file_lock(self.doc_dir(document.doc_id) / f"g{granularity}.lock"):
            index = self._indexes.get(key)
            chunked, embedded = False, 0
            if index is None:
                index = self._open(document, granularity)
                if index is None:
                    index, chunked = self._build(document, granularity), True
            if dense and index.collection is None:
                index.collection = self._open_collection(index)
                if index.collection is None:
                    index.collection = self._fill_collection(index, progress)
                    embedded = index.n_units
            with self._lock:
                self._indexes[key] = index
            return Built(index, chunked=chunked, embedded=embedded)

    def is_indexed(self, doc_id: str, granularity: int) -> bool:
        """Chunks and BM25 are on disk (the vectors may still need embedding into this Chroma)."""
        return (self.doc_dir(doc_id) / f"g{granularity}" / "manifest.json").exists()

    def _collection_name(self, doc_id: str, granularity: int) -> str:
        return f"longqa-{doc_id[:32]}-g{granularity}"

    def _open(self, document: Document, granularity: int) -> ChunkIndex | None:
        """Chunks and BM25 tokens from disk; None when absent or built with other settings."""
        gdir = self.doc_dir(document.doc_id) / f"g{granularity}"
        manifest_file = gdir / "manifest.json"
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
            None,
            manifest["n_units"],
            manifest["max_units"],
            str(manifest.get("build", "")),
        )

    def _open_collection(self, index: ChunkIndex):
        """The Chroma collection holding every vector of this chunking, else None (absent, interrupted,
        or embedded from another chunking)."""
        name = self._collection_name(index.document.doc_id, index.granularity)
        try:
            collection = self.client.get_collection(name)
        except Exception as e:  # noqa: BLE001 - chroma raises NotFoundError/ValueError by version
            if "does not exist" not in str(e) and "not found" not in str(e).lower():
                raise
            log.info("vector collection %s missing in this Chroma store; embedding", name)
            return None
        meta = collection.metadata or {}
        if meta.get("build") != index.build_id:
            log.info("vector collection %s was embedded from another chunking; embedding again", name)
            return None
        if not meta.get("complete") or collection.count() != index.n_units:
            log.warning("vector collection %s is incomplete (interrupted build); embedding again", name)
            return None
        return collection

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
        return ChunkIndex(document, granularity, chunks, tokens, None, len(units), max_units, build_id)

    def _fill_collection(self, index: ChunkIndex, progress: Callable[[int, int], None] | None):
        doc_id, granularity = index.document.doc_id, index.granularity
        units = dense_units(index.chunks, self.embedder.max_tokens)
        name = self._collection_name(doc_id, granularity)
        meta = {"doc_id": doc_id, "granularity": granularity, "build": index.build_id}
        with contextlib.suppress(Exception):  # absent is the normal case
            self.client.delete_collection(name)
        collection = self.client.create_collection(
            name,
            metadata={**meta, "complete": False},
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        done = 0
        if progress:
            progress(0, len(units))
        for i in range(0, len(units), _ADD_BATCH):
            batch = units[i : i + _ADD_BATCH]
            vectors = self.embedder.embed([u[2] for u in batch])
            collection.add(
                ids=[f"{c}:{u}" for c, u, _ in batch],
                embeddings=vectors,
                metadatas=[{"chunk": c, "unit": u} for c, u, _ in batch],
            )
            done += len(batch)
            if progress:
                progress(done, len(units))
        collection.modify(metadata={**meta, "complete": True})
        return collection


def dense_units(chunks: list[Chunk], max_tokens: int) -> list[tuple[int, int, str]]:
    """(chunk index, unit number, text): each chunk cut into consecutive pieces of at most
    `max_tokens` embedder word pieces (the rule in this module's docstring)."""
    wp = wordpiece_counter()
    counts = wp.count_many([c.text for c in chunks])
    units: list[tuple[int, int, str]] = []
    for chunk, n in zip(chunks, counts, strict=True):
        if n <= max_tokens:
            units.append((chunk.index, 0, chunk.text))
            continue
        spans = wp.spans(chunk.text)
        for u, window in enumerate(word_windows(chunk.text, spans, max_tokens)):
            units.append((chunk.index, u, chunk.text[window[0][0] : window[-1][1]]))
    return units


def make_chroma_client(settings: IndexSettings):
    """An HttpClient when a Chroma server is configured, else an embedded PersistentClient.
    Telemetry is always off."""
    import chromadb
    from chromadb.config import Settings

    chroma_settings = Settings(anonymized_telemetry=False)
    if settings.chroma_host:
        return chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings)
    path = settings.home / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def _atomic_write(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialise builds of one index across processes (two CLI runs, a server and a CLI)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: in-process locking only
        yield
        return
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
