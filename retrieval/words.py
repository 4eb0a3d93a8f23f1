"""The words a library says, shared by the index (a library's BM25 keeps its vocabulary:
index/library/library_bm25.py) and search (does the library say what a question names: search/mentions.py).

Words are compared as BM25 tokens with accents folded ("Aschenbrodel" is "Aschenbrödel"); a word of
five letters or more also counts as said when the documents say one within one edit of it (a misspelt
"Margaraviate", "Bennet" for "Bennett"). Hand-written: the stack has no vocabulary lookup with edit
distance (rapidfuzz is not a dependency, and difflib's ratio is not an edit bound). Imports nothing of
read/, index/ or search/.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

MIN_FUZZY_LENGTH = 5  # shorter words within one edit of a vocabulary word are too often other words


def folded(text: str) -> str:
    """The text with accents and other marks removed: "Tekezé" is "Tekeze"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


class Vocabulary:
    """The words a set of documents says, folded, and grouped by length for the one-edit lookup."""

    def __init__(self, words: Iterable[str]):
        self.words = {folded(w) for w in words}
        self._by_length: dict[int, set[str]] = {}
        for word in self.words:
            self._by_length.setdefault(len(word), set()).add(word)

    def says(self, token: str) -> bool:
        """The documents say this token, or (from five letters) one within one edit of it."""
        if token in self.words:
            return True
        if len(token) < MIN_FUZZY_LENGTH:
            return False
        for length in (len(token) - 1, len(token), len(token) + 1):
            for word in self._by_length.get(length, ()):
                if word[0] == token[0] and within_one_edit(token, word):
                    return True
        return False


def within_one_edit(a: str, b: str) -> bool:
    """One substitution, insertion or deletion at most turns `a` into `b`."""
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > 1:
        return False
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]
