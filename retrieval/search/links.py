"""Heading links: the title a passage carries names it, and a text that names that title points at it.

A chunk is named by the heading lines of the paragraphs it holds: a paragraph of one or two heading
lines (a document's or a section's title) names the paragraph after it, and a paragraph's own leading
heading lines (at most two, as in "Passage 3:" then "Clark Gable") name that paragraph; a list, whose
every line may look like a heading, names nothing. A question that names a heading ("the firm that
owns Babycham") points at the passage titled Babycham; a chunk whose text names another chunk's
heading ("... the daughter of Clark Gable") points at the passage titled Clark Gable, the second hop
a bridge question does not name. This is the hyperlink a
Wikipedia-like corpus, a library of titled files or a report's "see Goodwill" gives for free, found
without a model; BM25 and the embedder miss it when the question's other words match a distractor
better (bench/README.md, "Heading links").

Matching is exact on the heading's words, case kept ("Counterfeit" the band is not named by
"counterfeit"), on word boundaries; a trailing parenthesis ("Elsa (Disney)") is not part of the name,
and a heading is also named by its short forms ("Rank Organisation" for "The Rank Organisation",
"West Chicago" for "West Chicago, Illinois"). A name in lower case only, or made only of stop words,
names nothing. Hand-written: no library indexes a document's own titles for lookup in free text.

`names_in` reads the proper names a text says (capitalised runs): a bridge search asks for the names
its seed adds to the question (retrieval/search/selection.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..documents import Chunk, Document
from ..index.chunking import is_heading

_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")
_STOP = frozenset("a an and are as at be by for from in is it of on or the to with".split())
LEADING_HEADINGS = 2  # heading lines a paragraph may open with ("Passage 3:", then its title)
MAX_NAME_WORDS = 12  # is_heading's limit
# lower-case words a name may hold between capitalised ones ("University of Vienna", "Charles de Gaulle")
_CONNECTORS = frozenset("of the de del della di da du la le van von der y and for".split())
# capitalised at a sentence's start, and names nothing
_NOT_NAMES = _STOP | frozenset(
    "he she his her him its they their them this that these those there here after before during when where while "
    "which who what however also but if although since then born".split()
)
_NAME_BREAK = re.compile(r"[,;:()\[\]\"“”!?\n]|\.\s")  # a name does not run across these


def words(text: str) -> tuple[str, ...]:
    """The word characters' runs of a text, as a tuple (a name's form for matching)."""
    return tuple(_WORD.findall(text))


def name_of(heading: str) -> tuple[str, ...] | None:
    """The words a heading line is named by, or None when it names nothing specific."""
    name = words(_QUALIFIER.sub("", heading.strip().lstrip("#").strip()))
    joined = " ".join(name)
    if len(joined) < 3 or joined == joined.lower() or all(w.lower() in _STOP for w in name):
        return None
    return name


def names_in(text: str) -> list[str]:
    """The proper names a text says, once each in order of appearance: runs of capitalised words,
    joined by at most one lower-case connector between them ("Journal of Psychotherapy Integration");
    a run of words that name nothing ("The", "In", "He") is not one. Hand-written: the stack has no
    name finder that runs without a model download (spaCy's NER needs one)."""
    found: dict[str, None] = {}
    for segment in _NAME_BREAK.split(text):
        run: list[str] = []
        for word in [*_WORD.findall(segment), ""]:
            if word[:1].isupper():
                run.append(word)
                continue
            if word in _CONNECTORS and run and run[-1] not in _CONNECTORS:
                run.append(word)
                continue
            while run and run[-1] in _CONNECTORS:
                run.pop()
            if run and not all(w.lower() in _NOT_NAMES for w in run):
                found[" ".join(run)] = None
            run = []
    return list(found)


def names_of(heading: str) -> list[tuple[str, ...]]:
    """A heading's name and the shorter forms a text calls it by: without a leading article ("The
    Rank Organisation" is "Rank Organisation"), and before a comma's capitalised qualifier ("West
    Chicago, Illinois" is "West Chicago"; "Revenue, by segment" has no short form)."""
    head, _, qualifier = heading.partition(",")
    forms = [heading, head] if qualifier.strip()[:1].isupper() else [heading]
    names = [n for n in map(name_of, forms) if n]
    names += [n[1:] for n in names if len(n) > 1 and n[0] in ("The", "A", "An") and name_of(" ".join(n[1:]))]
    return list(dict.fromkeys(names))


def _paragraphs(document: Document) -> tuple[dict[int, list[tuple[str, ...]]], dict[int, tuple[str, ...]]]:
    """Each paragraph's names (paragraph id -> the names it is titled by) and its words without its heading
    lines (paragraph id -> words), each paragraph tokenised once."""
    named: dict[int, list[tuple[str, ...]]] = {}
    body: dict[int, tuple[str, ...]] = {}
    pending: list[str] = []  # heading paragraphs waiting for the paragraph they title
    for p in document.paragraphs:
        text = document.paragraph_text(p)
        if p.is_table:
            body[p.id], pending = words(text), []
            continue
        lines = text.split("\n")
        heads = next((i for i, line in enumerate(lines) if not is_heading(line)), len(lines))
        if heads == len(lines) and heads <= LEADING_HEADINGS:  # a title block: it names what follows
            pending += lines
            body[p.id] = ()
            continue
        lead = heads if heads < len(lines) and heads <= LEADING_HEADINGS else 0  # a list's lines are not titles
        named[p.id] = [n for line in pending + lines[:lead] for n in names_of(line)]
        body[p.id] = words("\n".join(lines[lead:]))
        pending = []
    return named, body


def _chunk_words(body: dict[int, tuple[str, ...]], paragraph_ids: Sequence[int]) -> tuple[str, ...]:
    """A chunk's words: those of the paragraphs it touches, in order. A chunk inside one paragraph shares that
    paragraph's tuple, so a paragraph spanning N chunks is held once, not N times (it was quadratic in a long
    paragraph); only a chunk across paragraphs copies, and a paragraph begins and ends in at most two such."""
    parts = [body[pid] for pid in paragraph_ids if body.get(pid)]
    if len(parts) == 1:
        return parts[0]
    return tuple(w for part in parts for w in part)


@dataclass(frozen=True)
class DocumentLinks:
    """One document's chunks at one granularity: the names each carries and its text without them."""

    names: dict[tuple[str, ...], list[list[int]]]  # name -> the chunks (by index) of each passage it titles
    bodies: list[tuple[str, ...]]  # each chunk's words (of the paragraphs it touches), heading lines left out
    carried: list[frozenset[tuple[str, ...]]]  # each chunk's own names
    # the first words of the names: `mentions` tries a name only where one starts, not 12 slices per word
    firsts: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "firsts", frozenset(n[0] for n in self.names))

    @classmethod
    def build(cls, document: Document, chunks: Sequence[Chunk]) -> DocumentLinks:
        """Find the names each passage is titled by (its headings, or a title block before it) and each chunk's words
        without its heading lines. Linear in the document: each paragraph is tokenised once and its words shared by
        the chunks inside it."""
        named, body = _paragraphs(document)
        titled: dict[tuple[str, ...], dict[int, list[int]]] = {}  # name -> paragraph id -> its chunks
        bodies, carried = [], []
        for chunk in chunks:
            own: set[tuple[str, ...]] = set()
            for pid in chunk.paragraph_ids:
                for n in named.get(pid, []):
                    titled.setdefault(n, {}).setdefault(pid, []).append(chunk.index)
                    own.add(n)
            carried.append(frozenset(own))
            bodies.append(_chunk_words(body, chunk.paragraph_ids))
        names = {n: list(by_paragraph.values()) for n, by_paragraph in titled.items()}
        return cls(names, bodies, carried)

    def mentions(
        self, text_words: Sequence[str], skip: frozenset[tuple[str, ...]] = frozenset()
    ) -> dict[tuple[str, ...], list[list[int]]]:
        """The names `text_words` says (except those in `skip`), each with the chunks (by index) of each
        passage it titles."""
        said: dict[tuple[str, ...], list[list[int]]] = {}
        if not self.names:
            return said
        for i in range(len(text_words)):
            if text_words[i] not in self.firsts:
                continue
            for n in range(1, min(MAX_NAME_WORDS, len(text_words) - i) + 1):
                name = tuple(text_words[i : i + n])
                if name in self.names and name not in skip:
                    said[name] = self.names[name]
        return said

    def named_in(self, text_words: Sequence[str], skip: frozenset[tuple[str, ...]] = frozenset()) -> list[int]:
        """The chunks (by index, in document order) whose name occurs in `text_words`, except names in `skip`."""
        return sorted({i for passages in self.mentions(text_words, skip).values() for p in passages for i in p})
