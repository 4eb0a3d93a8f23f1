"""Which library a run searches: files and folders under the allowed root, inline texts, or a named
collection (a library indexed ahead). Shared by the question graph's `prepare` and the index
graph's `index_documents`."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longqa.contracts.settings import Settings
from longqa.retrieval import Document, DocumentError, document_from_text
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.library_unused import forget_unused
from longqa.retrieval.index.library.manifest import (
    Progress,
    Update,
    document_members,
    file_key,
    file_members,
    name_problem,
)
from longqa.retrieval.index.library.reading_only import is_reading_only
from longqa.retrieval.read.bounded import reader_for
from longqa.retrieval.read.folders import FileSet, Skipped, collect_files
from longqa.retrieval.read.loaders import printable_name

from .scoped import scoped_update
from .stores import library_for, store_for
from .text_limits import texts_problem


class InputError(ValueError):
    """Bad input: reported in the run's output, never raised out of the graph."""


def allowed_path(path: str, settings: Settings) -> Path:
    """Resolve a document path; with a documents root set, refuse anything outside it. Messages name
    the path as the caller gave it, never the server's root."""
    shown = printable_name(path)
    if settings.documents_root is None and settings.server:
        raise InputError(
            f"{shown}: this server reads no files (its LONGQA_DOCUMENTS_ROOT is not set); "
            "pass the text in 'texts' or name an indexed 'collection'"
        )
    try:
        p = Path(path).expanduser()
        if settings.documents_root is not None:
            root = Path(settings.documents_root).expanduser().resolve()
            p = (root / p).resolve() if not p.is_absolute() else p.resolve()
            if not p.is_relative_to(root):
                raise InputError(f"{shown}: outside the allowed documents root (LONGQA_DOCUMENTS_ROOT)")
    except RuntimeError as e:  # pathlib: "Symlink loop from ..."
        raise InputError(f"{shown}: cannot be resolved ({'symlink loop' if 'loop' in str(e) else e})") from None
    except OSError as e:
        raise InputError(f"{shown}: cannot be resolved ({e.strerror or type(e).__name__})") from None
    except InputError:
        raise
    except ValueError:  # a NUL in the path: no file has that name
        raise InputError(f"{shown}: not a path (it holds a NUL character)") from None
    return p


def shown_name(source: str, settings: Settings) -> str:
    """How a citation or an error names a document: relative to the documents root when one is set
    (a server's clients never see its paths), else as loaded; always printable."""
    source = printable_name(source)
    if settings.documents_root is None or source.startswith("text-"):
        return source
    root = Path(settings.documents_root).expanduser().resolve()
    path = Path(source)
    return path.relative_to(root).as_posix() if path.is_absolute() and path.is_relative_to(root) else source


def _inline_texts(value: Any) -> list[str]:
    """`texts` as a list of strings: one string is one text (not one per character)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise InputError(f"'texts' must be a list of strings (got {type(value).__name__})")
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise InputError(f"texts[{i}] must be a string (got {type(text).__name__})")
    return value


def _patterns(state: Mapping[str, Any], name: str) -> list[str]:
    value = state.get(name) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise InputError(f"'{name}' must be a list of glob patterns (e.g. '*.pdf', 'reports/**')")
    return value


def _paths(state: Mapping[str, Any]) -> list[str]:
    paths = state.get("documents") or []
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list):  # an object's keys are not paths to read
        raise InputError(f"'documents' must be a list of paths (got {type(paths).__name__})")
    for path in paths:
        if not isinstance(path, str):
            raise InputError(f"'documents' must hold paths as strings (got {type(path).__name__})")
    return paths


@dataclass
class Opened:
    """The library a run searches, the documents of it the run asks about, and what was left out."""

    library: Library
    doc_ids: list[str]
    sources: dict[str, str]  # doc_id -> the name citations use
    words: int
    skipped: list[Skipped] = field(default_factory=list)
    update: Update | None = None
    files: int = 0  # the files the input named or its folders hold, readable or not (not those skipped at the walk)
    left_out: dict[str, int] = field(default_factory=dict)  # what the folder walk passed over by rule, by kind


def open_library(state: Mapping[str, Any], settings: Settings, progress: Progress | None = None) -> Opened:
    """The question graph's library. A named `collection` is searched as it was indexed, or only
    the files of it that `documents` names (a filter). Otherwise `documents` (files and folders,
    walked with the `include` / `exclude` patterns) and `texts` are the library made for this input,
    brought up to date first (see `index_library`)."""
    name = _collection(state)
    if not name:
        scoped = _within_indexed_folder(state, settings, progress)
        if scoped is not None:
            return scoped
        return index_library(state, settings, [settings.primary_granularity], progress, reader=True)
    found, skipped = _files(state, settings)
    if _inline_texts(state.get("texts")):
        raise InputError("'texts' cannot be searched with a 'collection': index them into it first")
    return _named(store_for(settings), name, bool(_paths(state)), found, skipped, settings)


def index_library(
    state: Mapping[str, Any],
    settings: Settings,
    granularities: list[int],
    progress: Progress | None = None,
    reader: bool = False,
) -> Opened:
    """Bring a library up to date with `documents` and `texts`: the named `collection`, or the
    library made for this input (the same files and patterns find the same library again). Only new
    and changed files are read and embedded; removed ones leave it. A file named directly that cannot
    be read is an error; one found in a folder is skipped with its reason. A `reader` (a question)
    over input whose stats match the published manifest takes no lock and writes nothing (but the
    inline library's last use), and never collects garbage, even when its input changed and it
    updated: expired inline texts, replaced collections and removed documents' vectors are collected
    by index runs."""
    if problem := texts_problem(state.get("texts"), settings):  # before any text is stored or embedded
        raise InputError(problem.message)
    store = store_for(settings)
    found, skipped = _files(state, settings)
    documents = [
        document_from_text(text, source=f"text-{i + 1}", max_words=store.settings.max_words)
        for i, text in enumerate(_inline_texts(state.get("texts")))
    ]
    name = _collection(state)
    if not found.files and not found.folders and not documents:
        raise InputError("no documents: pass 'documents' (paths or folders), 'texts' or 'collection'")
    library = library_for(store, name or _input_name(state, found, documents))
    members = file_members(
        found.files, store.settings.max_words, lambda f: shown_name(str(f), settings), _file_reader(settings, reader)
    )
    name_of = {m.key: m.source for m in members}
    members += document_members(documents)
    update = (reader and library.unchanged(members, granularities)) or library.update(
        members, granularities, progress=progress, collect=not reader
    )
    named = {shown_name(str(f), settings) for f in found.named}
    for s in update.skipped:  # a file the caller named itself cannot be read: that is the answer
        if s.path in named:
            raise DocumentError(s.path, s.reason)
    if documents and not name and not is_reading_only():  # texts of a named collection stay as long as it does
        for document in documents:
            store.remember_inline(document)
        library.touch()
    # inline texts are kept (indexed, for follow-ups) only as long as the deployment says; collected
    # by index runs only: a question never runs garbage collection, even when its input changed
    if not reader:
        forget_unused(store, settings.inline_keep_s, keep={library.name})
        store.forget_inline(settings.inline_keep_s, keep={d.doc_id for d in documents})
    skipped += [Skipped(shown_name(s.path, settings), s.reason) for s in update.skipped]
    manifest = library.manifest()
    if not manifest.documents:
        reasons = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:3])
        raise InputError(f"no readable documents{' (' + reasons + ')' if reasons else ''}")
    opened = _opened(library, manifest.doc_ids(), settings, skipped, update, manifest)
    opened.files, opened.left_out = len(found.files) + len(documents), dict(found.left_out)
    by_key = {k: e.doc_id for k, e in manifest.documents.items()}
    opened.sources.update({by_key[k]: name for k, name in name_of.items() if k in by_key})  # as given now
    return opened


def _file_reader(settings: Settings, question: bool) -> Callable[..., Document]:
    """How files are read: each under a time and memory ceiling, in reader processes. An index run
    starts its first reader now (its imports overlap the folder walk); a question starts one only
    when a file it names has changed, so a question over an indexed library spawns no process."""
    limits = settings.read_limits()
    if not question:
        return reader_for(limits).load
    return lambda path, max_words: reader_for(limits).load(path, max_words)


MAX_ANCESTORS = 32  # folders above a given path looked at for a library that holds it


def _within_indexed_folder(state: Mapping[str, Any], settings: Settings, progress: Progress | None) -> Opened | None:
    """A question over a subfolder (or files) of a folder already indexed as a library, with the
    same patterns: that library, searched within the files given (a scope of its documents), rather
    than a new library. Only the files given are brought up to date (services/scoped.py); when one
    of them is new to the library, the whole folder is, as a question over it would (not on a
    server: there a key reads only what it named, so the paths given get a library of their own).
    None when no enclosing folder has a library, or the library does not hold every file given."""
    paths = _paths(state)
    if not paths or _inline_texts(state.get("texts")):
        return None
    try:  # as `_files` resolves them: a relative path is under the documents root, not the working folder
        given = [os.path.realpath(allowed_path(p, settings)) for p in paths]
    except InputError:
        return None  # `_files` reports it where the input is read as a library of its own
    folder = _indexed_ancestor(state, settings, given)
    if folder is None:
        return None
    found, skipped = _files(state, settings)  # the given paths checked and walked as always
    store = store_for(settings)
    library = library_for(store, _input_name({**state, "documents": [folder]}, FileSet(), []))
    members = file_members(
        found.files, store.settings.max_words, lambda f: shown_name(str(f), settings), _file_reader(settings, True)
    )
    g = settings.primary_granularity
    update = scoped_update(library, members, g, progress)
    if update is None and settings.server:
        # on a server, the whole folder would be walked for a caller whose grant (and link check, `_files`)
        # covers only what it named: a link or another's file in the folder would be read; a library of its own
        return None
    if update is None:  # a file given is new to the library: the folder brought up to date as a whole
        opened = index_library({**state, "documents": [folder]}, settings, [g], progress, True)
        library, update, tried = opened.library, opened.update, opened.skipped
    else:
        tried = [Skipped(shown_name(s.path, settings), s.reason) for s in update.skipped]
    manifest = library.manifest()
    names = {shown_name(str(f), settings) for f in found.files}
    unreadable = [s for s in tried if s.path in names]
    held = [manifest.documents[k] for k in map(file_key, found.files) if k in manifest.documents]
    if len(held) + len(unreadable) != len(found.files):  # the folder's patterns left some out
        return None
    named = {shown_name(str(f), settings) for f in found.named}
    for s in unreadable:  # as for a library of its own: a file named directly that cannot be read is the answer
        if s.path in named:
            raise DocumentError(s.path, s.reason)
    if not held:
        raise InputError(f"no readable documents in {', '.join(map(printable_name, paths))}")
    doc_ids = list(dict.fromkeys(e.doc_id for e in held))
    opened = _opened(library, doc_ids, settings, skipped + unreadable, update, manifest)
    opened.files, opened.left_out = len(found.files), dict(found.left_out)
    return opened


def _indexed_ancestor(state: Mapping[str, Any], settings: Settings, given: list[str]) -> str | None:
    """The nearest folder above every given path whose library (made by indexing that folder alone,
    with the same patterns) exists; never above the documents root."""
    store = store_for(settings)
    root = Path(settings.documents_root).expanduser().resolve() if settings.documents_root is not None else None
    for folder in list(Path(given[0]).parents)[:MAX_ANCESTORS]:
        if root is not None and not folder.is_relative_to(root):
            return None
        if not all(Path(g).is_relative_to(folder) for g in given):
            continue
        name = _input_name({**state, "documents": [str(folder)]}, FileSet(), [])
        if store.catalog.stamp(name) is not None:  # probed in the catalog: no Library object per folder tried
            return str(folder)
    return None


def _files(state: Mapping[str, Any], settings: Settings) -> tuple[FileSet, list[Skipped]]:
    include, exclude = _patterns(state, "include"), _patterns(state, "exclude")
    given = [allowed_path(p, settings) for p in _paths(state)]
    # a link found in a folder is followed only within that folder (retrieval/read/folders.py), so it stays inside
    # the folders a key names (longqa/http/access.py) and the documents root they lie in (`allowed_path`)
    found = collect_files(given, include, exclude, settings.max_file_bytes)
    return found, [Skipped(shown_name(s.path, settings), s.reason) for s in found.skipped]


def _input_name(state: Mapping[str, Any], found: FileSet, documents: list) -> str:
    """The library made for an input: named by the resolved paths given, the patterns and the
    inline texts, so the same input (from any working directory) finds the same library."""
    given = [os.path.realpath(Path(p).expanduser()) for p in _paths(state)]  # a symlink loop stays as it is
    identity = given + [f"+{p}" for p in _patterns(state, "include")] + [f"-{p}" for p in _patterns(state, "exclude")]
    identity += sorted(d.doc_id for d in documents)
    kind = "inline" if documents else "files"
    return f"{kind}-" + hashlib.sha256("\n".join(identity).encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _collection(state: Mapping[str, Any]) -> str | None:
    name = state.get("collection")
    if name is not None and not isinstance(name, str):
        raise InputError(f"'collection' must be a name (got {type(name).__name__})")
    if name and (problem := name_problem(name)):
        raise InputError(problem)
    return name or None


def _named(store, name: str, subset: bool, found: FileSet, skipped, settings: Settings) -> Opened:
    library = library_for(store, name)
    legacy = store.settings.home / "collections" / f"{name}.json"
    if not library.exists() and legacy.exists():  # a collection indexed before libraries: made one once
        members = document_members(store.document(d) for d in json.loads(legacy.read_text("utf-8")))
        library.update(members, [settings.primary_granularity], collect=False)
    manifest = library.manifest()
    if not library.exists() or not manifest.documents:
        raise InputError(f"no collection named {name!r} (create one with `longqa index --collection`)")
    doc_ids = manifest.doc_ids()
    if subset:  # the part of the library these files and folders hold
        wanted = {file_key(f) for f in found.files}
        doc_ids = list(dict.fromkeys(e.doc_id for k, e in sorted(manifest.documents.items()) if k in wanted))
        if not doc_ids:
            raise InputError(f"none of the documents given are in collection {name!r} (index them into it first)")
    return _opened(library, doc_ids, settings, skipped, None, manifest)


def _opened(library: Library, doc_ids: list[str], settings: Settings, skipped, update, manifest=None) -> Opened:
    """The run's library and documents, named from `manifest`: the version their ids were chosen from
    (a newer one read here might no longer hold them)."""
    manifest = manifest or library.manifest()
    sources = manifest.sources()
    return Opened(
        library=library,
        doc_ids=doc_ids,
        sources={d: shown_name(sources[d], settings) for d in doc_ids},
        words=manifest.n_words(doc_ids),
        skipped=skipped,
        update=update,
    )
