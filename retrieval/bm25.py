"""Sparse retrieval: Okapi BM25 (rank-bm25) over lower-cased, Snowball-stemmed word tokens
without stop words (stemming lets "manages" match "manager", "terminals" match "terminal")."""

from __future__ import annotations

import functools
import re
import threading

import numpy as np
import snowballstemmer
from rank_bm25 import BM25Okapi

_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her his how i if in into is it "
    "its me my no not of on or our she so than that the their them then there these they this those to "
    "was we were what when where which who whom why will with you your".split()
)


# A snowball stemmer keeps its working word in the instance, so one shared by two threads mixes
# their words up (IndexError: string index out of range when documents are indexed concurrently):
# each thread gets its own.
_stemmers = threading.local()


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    # the vocabulary is small next to the text: caching makes the pure-Python stemmer cheap
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def bm25_tokens(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


BM25S_MIN_CHUNKS = 20_000  # measured (bench/query_latency.py): at 100k chunks rank-bm25 ~500 ms/query, bm25s ~5 ms


class SparseIndex:
    """BM25 over a list of token lists (one per chunk). Built in memory from the persisted tokens.

    rank-bm25 (Okapi) below BM25S_MIN_CHUNKS chunks; above it bm25s (Robertson, the same k1/b),
    whose sparse matrix scores a query in milliseconds where rank-bm25 loops over every chunk in
    Python. Their top-20 lists agreed on 98% of results in the benchmark."""

    def __init__(self, corpus: list[list[str]], backend: str = "auto"):
        self.size = len(corpus)
        if backend == "auto":
            backend = "bm25s" if self.size >= BM25S_MIN_CHUNKS else "rank-bm25"
        self.backend = backend
        self._bm25 = None
        if not corpus:
            return
        if backend == "bm25s":
            import bm25s

            self._bm25 = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
            self._bm25.index([tokens or ["\x00"] for tokens in corpus], show_progress=False)
        else:
            # rank-bm25 divides by the corpus size and average length: give empty chunks a placeholder
            self._bm25 = BM25Okapi([tokens or ["\x00"] for tokens in corpus])

    def top(self, query: str, depth: int) -> list[tuple[int, float]]:
        """(row, score) of the `depth` best rows with a positive score, best first."""
        terms = bm25_tokens(query)
        if self._bm25 is None or not terms:
            return []
        if self.backend == "bm25s":
            terms = [t for t in terms if t in self._bm25.vocab_dict]
            if not terms:
                return []
            docs, scores = self._bm25.retrieve([terms], k=min(depth, self.size), show_progress=False)
            return [(int(d), float(v)) for d, v in zip(docs[0], scores[0], strict=True) if v > 0]
        scores = self._bm25.get_scores(terms)
        depth = min(depth, len(scores))
        best = np.argpartition(-scores, depth - 1)[:depth]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(i), float(scores[i])) for i in best if scores[i] > 0]
