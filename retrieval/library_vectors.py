"""Vectors on their way into a library's collection: gathered across documents and written in large
batches (one Chroma request costs tens of milliseconds whatever its size, so a library of small
documents written one request per document spends its time in round trips)."""

from __future__ import annotations

import numpy as np

ADD_BATCH = 4000  # vectors per Chroma upsert() call (a Chroma server accepts about 5,000)


class VectorBatch:
    """Vectors of several documents for one collection, upserted each time `ADD_BATCH` gather
    and by `flush()`."""

    def __init__(self, collection, size: int = ADD_BATCH):
        self.collection, self.size = collection, size
        self.ids: list[str] = []
        self.metadatas: list[dict] = []
        self.vectors: list[np.ndarray] = []
        self.pending = 0

    def add(self, index) -> None:
        """Add a chunking's unit vectors: ids `<doc_id>:<chunk>:<unit>`, the doc id and chunk as metadata."""
        doc_id = index.document.doc_id
        seen: dict[int, int] = {}
        for c in index.unit_chunks.tolist():
            u = seen[c] = seen.get(c, -1) + 1
            self.ids.append(f"{doc_id}:{c}:{u}")
            self.metadatas.append({"doc_id": doc_id, "chunk": c})
        self.vectors.append(np.asarray(index.vectors, dtype=np.float32))
        self.pending += len(index.unit_chunks)
        if self.pending >= self.size:
            self.flush()

    def flush(self) -> None:
        """Upsert what was gathered, in requests of at most `size` vectors."""
        if not self.ids:
            return
        vectors = np.concatenate(self.vectors)
        for i in range(0, len(self.ids), self.size):
            self.collection.upsert(
                ids=self.ids[i : i + self.size],
                embeddings=vectors[i : i + self.size],
                metadatas=self.metadatas[i : i + self.size],
            )
        self.ids, self.metadatas, self.vectors, self.pending = [], [], [], 0
