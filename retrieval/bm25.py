"""Sparse retrieval's tokens: lower-cased, Snowball-stemmed words without stop words (stemming lets
"manages" match "manager", "terminals" match "terminal"). A library's BM25 over them is
`retrieval.library.LibraryBM25`."""

from __future__ import annotations

import functools
import re
import threading

import snowballstemmer

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
    """The BM25 terms of a text: its lower-cased words, stop words left out, each stemmed."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]
