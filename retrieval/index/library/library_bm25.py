"""A library's BM25: one sparse matrix over every chunk of every member (bm25s), scored in
milliseconds whatever the number of documents, and persisted per version."""

from __future__ import annotations

import json
import logging
from bisect import bisect_right
from pathlib import Path

import numpy as np

from ...bm25 import bm25_tokens
from ...words import Vocabulary

Key = tuple[str, int]  # (doc_id, chunk index)


def _bm25s():
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import, and logs each build
    return bm25s


class LibraryBM25:
    """BM25 over every chunk of a library (bm25s: one sparse matrix, scored in milliseconds)."""

    def __init__(self, bm25, doc_ids: list[str], offsets: list[int]):
        self.bm25, self.doc_ids, self.offsets = bm25, doc_ids, offsets  # doc i holds rows offsets[i]..
        self._vocabulary: Vocabulary | None = None

    def vocabulary(self) -> Vocabulary:
        """Every word the library's chunks say (its BM25 tokens), made once per loaded version."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(self.bm25.vocab_dict if self.bm25 is not None else ())
        return self._vocabulary

    @classmethod
    def build(cls, doc_ids: list[str], tokens: list[list[list[str]]]) -> LibraryBM25:
        """Index every chunk of these documents (`tokens`: per document, each chunk's BM25 terms) with Lucene's BM25."""
        bm25s = _bm25s()
        offsets, corpus = [], []
        for chunks in tokens:
            offsets.append(len(corpus))
            # bm25s divides by the average length: an empty chunk gets a placeholder token
            corpus.extend(t or ["\x00"] for t in chunks)
        # Lucene's IDF is never zero: Robertson's is 0 for a term in half the chunks (a short document)
        bm25 = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
        if corpus:
            bm25.index(corpus, show_progress=False)
        return cls(bm25 if corpus else None, doc_ids, offsets)

    def save(self, target: Path) -> None:
        """Write the index and its row map into a new directory."""
        target.mkdir(parents=True)
        if self.bm25 is not None:
            self.bm25.save(str(target), show_progress=False)
        (target / "rows.json").write_text(json.dumps({"doc_ids": self.doc_ids, "offsets": self.offsets}), "utf-8")

    @classmethod
    def load(cls, source: Path) -> LibraryBM25:
        """Read an index written by `save`."""
        bm25s = _bm25s()
        rows = json.loads((source / "rows.json").read_text("utf-8"))
        bm25 = bm25s.BM25.load(str(source)) if (source / "params.index.json").exists() else None
        return cls(bm25, rows["doc_ids"], rows["offsets"])

    def key(self, row: int) -> Key:
        """The (doc id, chunk index) of a row of the matrix."""
        i = bisect_right(self.offsets, row) - 1
        return self.doc_ids[i], row - self.offsets[i]

    def top(self, query: str, depth: int, allowed: set[str] | None) -> dict[Key, float]:
        """(doc_id, chunk) -> score of the `depth` best chunks with a positive score, among the
        documents `allowed` (None: all)."""
        if self.bm25 is None:
            return {}
        terms = [t for t in bm25_tokens(query) if t in self.bm25.vocab_dict]
        if not terms:
            return {}
        scores = self.bm25.get_scores(terms)
        if allowed is not None:
            mask = np.zeros(len(scores), dtype=bool)
            ends = [*self.offsets[1:], len(scores)]
            for i, doc_id in enumerate(self.doc_ids):
                if doc_id in allowed:
                    mask[self.offsets[i] : ends[i]] = True
            scores = np.where(mask, scores, 0.0)
        depth = min(depth, len(scores))
        best = np.argpartition(-scores, depth - 1)[:depth]
        best = best[np.argsort(-scores[best], kind="stable")]
        return {self.key(int(r)): float(scores[r]) for r in best if scores[r] > 0}
