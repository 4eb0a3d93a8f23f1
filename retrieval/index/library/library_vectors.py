"""Vectors on their way into a library's collection: gathered across documents and written in large
batches (one Chroma request costs tens of milliseconds whatever its size, so a library of small
documents written one request per document spends its time in round trips). One record per distinct
unit text (retrieval/index/library/library_dense.py): its id is the text's hash, and `add` keeps a record already
there, so its metadata keeps naming the first document that held it."""

from __future__ import annotations

import numpy as np

ADD_BATCH = 4000  # vectors per Chroma add() call (a Chroma server accepts about 5,000)


class VectorBatch:
    """Vectors of several documents for one collection, added each time `ADD_BATCH` gather
    and by `flush()`."""

    def __init__(self, collection, size: int = ADD_BATCH):
        self.collection, self.size = collection, size
        self.ids: list[str] = []
        self.metadatas: list[dict] = []
        self.vectors: list[np.ndarray] = []
        self.pending = 0
        self.seen: set[str] = set()  # hashes this batch wrote (or gathered) already

    def add(self, index, units: list[tuple[int, str]]) -> None:
        """Add a chunking's unit vectors, `units` its (chunk, text hash) per unit in vector order: one
        record per hash not written yet (id: the hash; metadata: the doc id and chunk)."""
        doc_id = index.document.doc_id
        rows = []
        for row, (c, h) in enumerate(units):
            if h not in self.seen:
                self.seen.add(h)
                rows.append(row)
                self.ids.append(h)
                self.metadatas.append({"doc_id": doc_id, "chunk": int(c)})
        self.vectors.append(np.asarray(index.vectors, dtype=np.float32)[rows])
        self.pending += len(rows)
        if self.pending >= self.size:
            self.flush()

    def flush(self) -> None:
        """Add what was gathered, in requests of at most `size` vectors."""
        if not self.ids:
            return
        vectors = np.concatenate(self.vectors)
        for i in range(0, len(self.ids), self.size):
            self.collection.add(
                ids=self.ids[i : i + self.size],
                embeddings=vectors[i : i + self.size],
                metadatas=self.metadatas[i : i + self.size],
            )
        self.ids, self.metadatas, self.vectors, self.pending = [], [], [], 0
