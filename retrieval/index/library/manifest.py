"""What a library holds, as data: its manifest (members by source key, the index part at each chunk
size, the version), the members an update is given (files, inline texts) and what an update did.
`retrieval/index/library/library.py` reads and publishes these."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field, PrivateAttr

from ...documents import Document
from ...read.folders import Skipped
from ...read.limits import utf8_name
from ...read.loaders import load_document
from ..embed.embedder_identity import EmbedderRecord

LIBRARY_FORMAT = 2  # 2: one vector per distinct unit text, ids are the texts' hashes


@dataclass(frozen=True)
class Event:
    """Progress of an update: reading files, embedding one document's chunks, indexing documents."""

    step: str
    message: str
    done: int
    total: int
    source: str = ""


Progress = Callable[[Event], None]


class Entry(BaseModel):
    """One member: which content a source key holds now."""

    doc_id: str
    source: str = Field(description="the path as loaded, or an inline text's label")
    size: int | None = None
    mtime_ns: int | None = None
    n_words: int = 0


class Part(BaseModel):
    """The library's index at one chunk size."""

    bm25: str = Field(description="directory of this version's BM25 under the library")
    collection: str = Field(description="the Chroma collection of its vectors (a rebuild makes a new one)")
    dense: bool = Field(description="every member's vectors are in the collection")
    n_chunks: int
    n_units: int
    max_units: int = Field(description="most units any chunk has: how deep to query the vectors")
    n_vectors: int | None = Field(default=None, description="distinct unit texts: the vectors the collection holds")
    signature: dict = Field(description="the store's chunking settings this part was built with")

    @property
    def stored(self) -> int:
        """How many vectors the collection must hold at least."""
        return self.n_units if self.n_vectors is None else self.n_vectors


class Manifest(BaseModel):
    """A library's published version: its members, its index at each chunk size, and the doc ids whose vectors go
    after publishing."""

    format: int = LIBRARY_FORMAT
    name: str
    version: int = 0
    documents: dict[str, Entry] = Field(default_factory=dict)
    parts: dict[int, Part] = Field(default_factory=dict)
    removed: list[str] = Field(default_factory=list, description="doc ids whose vectors go after publishing")
    embedder: EmbedderRecord | None = Field(default=None, description="what made its vectors (none: no dense part)")

    _sources: dict[str, str] | None = PrivateAttr(default=None)

    def doc_ids(self) -> list[str]:
        """Each member's content once, in key order."""
        return list(self.sources())

    def n_words(self, doc_ids: Iterable[str]) -> int:
        """Words in these members, from their entries (no document is read)."""
        words = {e.doc_id: e.n_words for e in self.documents.values()}
        return sum(words[d] for d in doc_ids)

    def sources(self) -> dict[str, str]:
        """doc_id -> the first source that holds it, in key order (computed once: a read manifest
        is never changed, a new version is a new one)."""
        if self._sources is None:
            out: dict[str, str] = {}
            for _, entry in sorted(self.documents.items()):
                out.setdefault(entry.doc_id, entry.source)
            self._sources = out
        return self._sources


@dataclass
class Member:
    """A document to hold: its key, how to name it, its file's (size, mtime_ns) if it is a file,
    and how to load it (called only when the stat says it may have changed)."""

    key: str
    source: str
    load: Callable[[], Document]
    stat: tuple[int, int] | None = None


@dataclass
class Update:
    """What an update did, by source."""

    version: int
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    embedded: int = 0
    chunked: int = 0
    published: bool = False  # a new version was written (the update took the write path)

    def summary(self, skipped: int | None = None) -> str:
        """One line; `skipped`: the run's whole count of skipped files (those its folder walk left
        out too), when the caller has it, instead of this update's unreadable files alone."""
        parts = [f"{len(self.added)} added", f"{len(self.changed)} changed", f"{len(self.removed)} removed"]
        parts += [f"{len(self.unchanged)} unchanged"]
        skipped = len(self.skipped) if skipped is None else skipped
        if skipped:
            parts.append(f"{skipped} skipped")
        return f"version {self.version}: " + ", ".join(parts) + f"; {self.embedded:,} vectors embedded"


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a library (its first problem, the name shown at most 60 characters), or None."""
    shown = repr(name[:60] + ("..." if len(name) > 60 else ""))
    if not name:
        return "a collection name cannot be empty"
    if len(name) > 128:
        return f"collection name {shown} is {len(name):,} characters; at most 128"
    if name[0] == ".":
        return f"collection name {shown} starts with '.'"
    bad = next((ch for ch in name if not (ch.isalnum() or ch in "-_.")), None)
    if bad is not None:
        return f"collection name {shown} holds {bad!r}: use letters, digits, '-', '_' or '.'"
    return None


def valid_name(name: str) -> bool:
    """Whether a library name is usable as a directory and record name: 1-128 letters, digits, `-_.`, not starting
    with a dot."""
    return bool(name) and len(name) <= 128 and all(ch.isalnum() or ch in "-_." for ch in name) and name[0] != "."


def file_members(
    files: Iterable[Path],
    max_words: int,
    name: Callable[[Path], str] = str,
    read: Callable[..., Document] = load_document,
) -> list[Member]:
    """Members for files on disk, keyed by their resolved path (valid UTF-8: a manifest is JSON),
    shown as `name(file)` and loaded by `read(path, max_words=...)` (a `BoundedReader`'s, to hold
    each file to a time and memory ceiling). A file that cannot be resolved or stat'ed is left to
    the loader's error."""
    members = []
    for file in files:
        path = _resolved(file)
        try:
            st = path.stat()
            stat = (st.st_size, st.st_mtime_ns)
        except OSError:  # a symlink loop, a vanished file: load() says which
            stat = None
        load = functools.partial(read, path, max_words=max_words)
        members.append(Member(file_key(file), name(file), load, stat))
    return members


def file_key(file: Path) -> str:
    """A file's key in a manifest: its resolved path as valid UTF-8 (a manifest is JSON)."""
    return utf8_name(_resolved(file))


def _resolved(file: Path) -> Path:
    try:
        return file.resolve()
    except (OSError, RuntimeError):  # a symlink loop: kept as it is, for the loader to name
        return file.absolute()


def document_members(documents: Iterable[Document]) -> list[Member]:
    """Members for documents already in memory (inline texts), keyed by content."""
    return [Member(f"text:{d.doc_id}", d.source, lambda d=d: d) for d in documents]  # type: ignore[misc]


def unchanged_update(
    old: Manifest,
    members: Iterable[Member],
    granularities: set[int],
    dense: bool,
    signature: object,
    unreadable: dict[str, tuple[tuple[int, int], Skipped]],
) -> Update | None:
    """The update that would change nothing, judged from `old` and the members' stats alone (a
    reader's check: no file is read), or None when something may have changed. `unreadable`: files
    this process found unreadable at a stat (key → (stat, why)), so a folder with one bad file does
    not send every question down the write path."""
    members = list(members)
    if old.format != LIBRARY_FORMAT or not old.documents:
        return None
    held = [m for m in members if m.key in old.documents]
    skipped = [
        unreadable[m.key][1]
        for m in members
        if m.key not in old.documents and m.stat is not None and unreadable.get(m.key, (None,))[0] == m.stat
    ]
    if len(held) + len(skipped) != len(members) or len(held) != len(old.documents):
        return None
    for m in held:
        prev = old.documents[m.key]
        if m.stat is None and m.key != f"text:{prev.doc_id}":  # only an inline text's key names its content
            return None
        if m.stat is not None and (prev.size, prev.mtime_ns) != m.stat:
            return None
    for g in set(old.parts) | granularities:
        part = old.parts.get(g)
        if part is None or part.signature != signature or (dense and g in granularities and not part.dense):
            return None
    return Update(version=old.version, unchanged=[old.documents[m.key].source for m in held], skipped=skipped)
