"""A library part's dense side: one vector per distinct unit text, and a search that finds every one.

HNSW graphs lose nodes among duplicates: 1,334 identical chunks of one HTML page beside one control
chunk left the control unreachable even by its own vector (issue 49). So a part's collection holds
one record per distinct unit text (its id is the text's hash, `chunk_index.unit_hash`; its metadata
names the first document and chunk that held it, which deletions use), and `UnitMap` says which
(document, chunk) keys each hash stands for. The map is written beside the part's BM25 (the same
version, the same directory, rebuilt the same way by a replica that has not seen the version).

A search over at most `EXACT_MAX` distinct vectors (a small library, or a question over a few
of its documents) is exact: brute-force cosine over those vectors, fetched once by id and kept;
a larger one goes through the HNSW graph, deepened until enough of the searched documents' chunks
are found (a `where` filter cannot name the documents a shared record stands for)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

Key = tuple[str, int]  # (doc_id, chunk index)
EXACT_MAX = 5_000  # distinct vectors searched exactly (fetched once: 7.7 MB at 384 dimensions)
CACHED_VECTORS = 50_000  # vectors a library keeps in memory for exact searches
FETCH_BATCH = 1_000  # ids per Chroma get()
UNITS_FILE = "units.json"


class UnitMap:
    """Which (document, chunk) keys each distinct unit text of a part stands for."""

    def __init__(self, doc_ids: list[str], units: list[list[tuple[int, str]]]):
        self.rows = dict(zip(doc_ids, units, strict=True))  # doc_id -> (chunk, hash) of each unit
        self.keys: dict[str, list[Key]] = {}
        for doc_id, rows in self.rows.items():
            for chunk, h in rows:
                self.keys.setdefault(h, []).append((doc_id, int(chunk)))

    def hashes(self, doc_ids: Iterable[str] | None = None) -> list[str]:
        """The distinct hashes of these documents (None: of every member), in a stable order."""
        if doc_ids is None:
            return list(self.keys)
        return list(dict.fromkeys(h for d in sorted(doc_ids) for _, h in self.rows.get(d, ())))

    def save(self, directory: Path) -> None:
        """Write the map into a part's (new) BM25 directory."""
        (directory / UNITS_FILE).write_text(json.dumps(self.rows), "utf-8")

    @classmethod
    def load(cls, directory: Path) -> UnitMap:
        """Read the map a part's directory holds."""
        rows = json.loads((directory / UNITS_FILE).read_text("utf-8"))
        return cls(list(rows), [[(int(c), str(h)) for c, h in r] for r in rows.values()])


def distinct(units: Iterable[list[tuple[int, str]]]) -> int:
    """How many distinct unit texts these documents' units hold (the vectors their part stores)."""
    return len({h for rows in units for _, h in rows})


class VectorCache:
    """Vectors fetched from a part's collection for exact searches, by (collection, hash); dropped
    whole when it holds more than `CACHED_VECTORS` (records never change under an id: a text's hash)."""

    def __init__(self) -> None:
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def matrix(self, collection: Any, hashes: list[str]) -> tuple[list[str], np.ndarray]:
        """(the hashes found, their unit vectors as rows), fetching the ones not held."""
        name = str(collection.id)  # not its name: a library deleted and made again reuses the names
        with self._lock:
            missing = [h for h in hashes if (name, h) not in self._vectors]
        for i in range(0, len(missing), FETCH_BATCH):
            got = collection.get(ids=missing[i : i + FETCH_BATCH], include=["embeddings"])
            fetched = {h: np.asarray(v, dtype=np.float32) for h, v in zip(got["ids"], got["embeddings"], strict=True)}
            with self._lock:
                if len(self._vectors) + len(fetched) > CACHED_VECTORS:
                    self._vectors.clear()
                for h, v in fetched.items():
                    self._vectors[(name, h)] = v / (np.linalg.norm(v) or 1.0)
        with self._lock:
            found = [h for h in hashes if (name, h) in self._vectors]
            rows = [self._vectors[(name, h)] for h in found]
        return found, (np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32))


def dense_top(
    collection: Any,
    units: UnitMap,
    cache: VectorCache,
    vector: np.ndarray,
    depth: int,
    allowed: set[str],
    subset: bool,
) -> dict[Key, float]:
    """(doc_id, chunk) -> cosine similarity of the `depth` best chunks of `allowed` documents, each
    chunk scored by its best unit: exactly over at most `EXACT_MAX` distinct vectors, else through
    the collection's graph (keys outside `allowed`, or outside this version, are skipped)."""
    hashes = units.hashes(allowed if subset else None)
    best: dict[Key, float] = {}
    if len(hashes) <= EXACT_MAX:
        found, matrix = cache.matrix(collection, hashes)
        if found:
            query = vector / (np.linalg.norm(vector) or 1.0)
            for h, sim in zip(found, (matrix @ query.astype(np.float32)).tolist(), strict=True):
                _credit(best, units.keys[h], sim, allowed)
        return _top(best, depth)
    n = max(1, min(len(hashes), depth * 4))
    while True:
        res = collection.query(query_embeddings=[vector.tolist()], n_results=n, include=["distances"])
        best = {}
        for h, dist in zip(res["ids"][0], res["distances"][0], strict=True):
            _credit(best, units.keys.get(h, ()), 1.0 - float(dist), allowed)
        if len(best) >= depth or len(res["ids"][0]) < n:
            return _top(best, depth)
        n *= 2


def _credit(best: dict[Key, float], keys: Iterable[Key], sim: float, allowed: set[str]) -> None:
    for key in keys:
        if key[0] in allowed and sim > best.get(key, -2.0):
            best[key] = sim


def _top(best: dict[Key, float], depth: int) -> dict[Key, float]:
    return dict(sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:depth])


def kept_hashes(units: UnitMap | None) -> set[str]:
    """The hashes a published part still needs (none when its map is unknown: nothing is kept back)."""
    return set(units.keys) if units is not None else set()


def unfindable(library: Any, granularity: int, sample: int = 50, exact: bool = False) -> list[Key]:
    """The library's integrity check that every stored vector is findable: of a sample of chunks
    (the first unit of every `n`th chunk, `sample` at most), those that a dense search for their
    own unit's vector does not rank at 1.0 among the best; through the graph unless `exact`."""
    manifest = library.manifest()
    part = manifest.parts[granularity]
    units = library.units(part, manifest)
    collection = library.collection(granularity, part.collection, create=False)
    firsts = {h: keys[0] for h, keys in units.keys.items()}
    chosen = list(firsts.items())[:: max(1, len(firsts) // sample)][:sample]
    got = collection.get(ids=[h for h, _ in chosen], include=["embeddings"])
    vectors = dict(zip(got["ids"], got["embeddings"], strict=True))
    allowed = set(manifest.doc_ids())
    lost = []
    for h, key in chosen:
        if h not in vectors:
            lost.append(key)
            continue
        if exact:
            top = dense_top(collection, units, VectorCache(), np.asarray(vectors[h]), 5, {key[0]}, True)
        else:
            top = _graph_top(collection, units, np.asarray(vectors[h]), allowed)
        if top.get(key, 0.0) < 0.999:
            lost.append(key)
    return lost


def _graph_top(collection: Any, units: UnitMap, vector: np.ndarray, allowed: set[str]) -> dict[Key, float]:
    res = collection.query(query_embeddings=[vector.tolist()], n_results=5, include=["distances"])
    best: dict[Key, float] = {}
    for h, dist in zip(res["ids"][0], res["distances"][0], strict=True):
        _credit(best, units.keys.get(h, ()), 1.0 - float(dist), allowed)
    return best


def save_version(directory: Path, name: str, doc_ids: list[str], tokens: list, units: list) -> None:
    """Write a part version's BM25 and unit map under `directory/name`, moved into place with one
    rename (a reader never sees half of one)."""
    from .library_bm25 import LibraryBM25

    directory.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=directory))
    try:
        shutil.rmtree(tmp)
        LibraryBM25.build(doc_ids, tokens).save(tmp)
        UnitMap(doc_ids, units).save(tmp)
        with contextlib.suppress(OSError):  # another thread built the same version first
            os.replace(tmp, directory / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
