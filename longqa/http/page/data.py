"""What the page (longqa/http/page/api.py) reads for one caller, without HTTP: the collections its key
names, its tenant's threads and their turns, a document's text around a cited span with its file
name and section, and the files under the documents root it may index. Each function is given the
`Caller` and checks its grants itself, as `access.authorize` does for /ask: a collection the key
may not use, a thread of another tenant, a document outside a collection the key may read is
`Denied` (403, or 404 where even its existence is not the caller's to know)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, Field

from longqa.contracts.settings import Settings
from longqa.http.access import Caller, Denied
from longqa.http.keys import ANY
from longqa.retrieval.index.library.manifest import valid_name
from longqa.retrieval.read.ocr import page_at, page_span
from longqa.retrieval.search.sections import section_of
from longqa.runner.threads import OWNERS_TABLE

MAX_THREADS = 100  # the most recent ones listed
MAX_FILES = 5000  # files listed under the documents root
CONTEXT_CHARS = 1500  # document text shown on each side of a cited span
MAX_SPAN_CHARS = 20_000  # a cited span longer than this is cut (a citation is a passage, not a book)
_HIDDEN_PREFIXES = ("files-", "inline-")  # libraries made for one input, not collections a person named


class CollectionInfo(BaseModel):
    """One collection the key names: whether it exists yet and the documents it holds."""

    name: str
    exists: bool
    documents: list[str] = Field(default_factory=list)


class Whoami(BaseModel):
    """What the page shows of its caller: the tenant, its grants and its collections."""

    tenant: str
    grants: list[str]
    any_collection: bool = Field(description="the key may use collections not listed ('*')")
    collections: list[CollectionInfo]
    documents_root: bool = Field(description="the server reads files under a documents root")
    may_index_files: bool = Field(description="the key holds `index` and reads some files under the root")


class PassageQuery(BaseModel):
    """Which cited span to show: the collection the question searched, the document and the offsets."""

    collection: str = Field(min_length=1, max_length=128)
    doc_id: str = Field(pattern=r"^[0-9a-f]{16,128}$")
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Passage(BaseModel):
    """A document's text around a cited span: `before` + `span` + `after`, in document order."""

    source: str
    section: str | None
    page: str | None = Field(description="the page(s) of a paged document, '3' or '3-4' (form feeds); else null")
    ocr: bool = Field(default=False, description="OCR read the text of one of those pages from a scan or photo")
    start: int
    end: int
    before: str
    span: str
    after: str
    clipped_before: bool
    clipped_after: bool


def _shown(source: str, settings: Settings) -> str:
    from longqa.services.inputs import shown_name

    return shown_name(source, settings)


def _library(settings: Settings, name: str):
    from longqa.services.stores import library_for, store_for

    store = store_for(settings)
    return store, library_for(store, name)


def collection_info(settings: Settings, name: str) -> CollectionInfo:
    """A collection's documents as its manifest names them (relative to the documents root)."""
    _, library = _library(settings, name)
    if not library.exists():
        return CollectionInfo(name=name, exists=False)
    manifest = library.manifest()
    names = sorted({_shown(e.source, settings) for e in manifest.documents.values()})
    return CollectionInfo(name=name, exists=True, documents=names)


def _local_collections(settings: Settings) -> list[str]:
    """Collections this replica's index home knows (for a '*' key): the named ones, not per-input libraries."""
    folder = Path(settings.home) / "libraries"
    try:
        names = [p.name for p in folder.iterdir() if (p / "manifest.json").exists()]
    except OSError:
        return []
    return sorted(n for n in names if valid_name(n) and not n.startswith(_HIDDEN_PREFIXES))


def whoami(caller: Caller, settings: Settings) -> Whoami:
    """The caller as the page shows it, with each collection its key may use."""
    named = sorted(c for c in caller.collections if c != ANY)
    if ANY in caller.collections:
        named = sorted(set(named) | set(_local_collections(settings)))
    root = settings.documents_root is not None
    return Whoami(
        tenant=caller.tenant,
        grants=sorted(caller.grants),
        any_collection=ANY in caller.collections,
        collections=[collection_info(settings, n) for n in named],
        documents_root=root,
        may_index_files=root and caller.can("index") and bool(caller.documents),
    )


def _may_read_collection(caller: Caller, name: str) -> None:
    if not caller.can("ask"):
        raise Denied(403, f"this key may not ask (its grants: {', '.join(sorted(caller.grants))})")
    if not valid_name(name) or not caller.on_collection(name):
        raise Denied(403, f"this key may not ask on collection {name[:60]!r}")


def passage(caller: Caller, settings: Settings, query: PassageQuery) -> Passage:
    """The text around a cited span of a document of `query.collection`: only when the key may ask on
    that collection and the collection's current version holds the document (404 otherwise)."""
    _may_read_collection(caller, query.collection)
    store, library = _library(settings, query.collection)
    manifest = library.manifest() if library.exists() else None
    sources = manifest.sources() if manifest is not None else {}
    if query.doc_id not in sources:
        raise Denied(404, f"collection {query.collection!r} holds no such document (re-indexed since?)")
    document = store.document(query.doc_id)
    text = document.text
    start = min(query.start, len(text))
    end = min(max(query.end, start), len(text), start + MAX_SPAN_CHARS)
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    pages = page_span(text, start, end)  # as the citation says it (nodes/process_context.py)
    ocr = bool(pages) and bool(set(document.ocr_pages) & set(range(page_at(text, start), page_at(text, end) + 1)))
    return Passage(
        source=_shown(sources[query.doc_id], settings),
        section=section_of(document, start).get("section"),
        page=pages or None,
        ocr=ocr,
        start=start,
        end=end,
        before=text[lo:start],
        span=text[start:end],
        after=text[end:hi],
        clipped_before=lo > 0,
        clipped_after=hi < len(text),
    )


def files(caller: Caller, settings: Settings) -> dict[str, Any]:
    """The files under the documents root that the key may index: relative paths and sizes (hidden
    files and folders left out; at most MAX_FILES)."""
    if not caller.can("index"):
        raise Denied(403, f"this key may not index (its grants: {', '.join(sorted(caller.grants))})")
    if settings.documents_root is None:
        return {"files": [], "truncated": False}
    root = Path(settings.documents_root).expanduser().resolve()
    listed: list[dict[str, Any]] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if not caller.may_read(relative, root):
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            listed.append({"path": relative, "size": size})
            if len(listed) >= MAX_FILES:
                return {"files": listed, "truncated": True}
    return {"files": listed, "truncated": False}


def _owned(saver: BaseCheckpointSaver, sql: str, args: tuple) -> list[str]:
    """Thread ids from the owners table (SQLite, or PostgreSQL's pool), as threads.claim_thread reads it."""
    conn: Any = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        with saver.lock:  # type: ignore[attr-defined]
            return [row[0] for row in conn.execute(sql, args).fetchall()]
    with conn.connection() as pg:
        return [row["thread_id"] for row in pg.execute(sql.replace("?", "%s"), args).fetchall()]


def _turns(values: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation as question / answer pairs (a human message opens a turn)."""
    turns: list[dict[str, str]] = []
    for message in values.get("messages") or []:
        content = message.content if isinstance(message.content, str) else str(message.content)
        if message.type == "human":
            turns.append({"question": content, "answer": ""})
        elif message.type == "ai" and turns:
            turns[-1]["answer"] = content
    return turns


def threads(caller: Caller, saver: BaseCheckpointSaver) -> list[dict[str, Any]]:
    """The tenant's threads, newest first: id, first question, collection, last update."""
    if not caller.can("ask"):
        return []
    prefix = f"{caller.tenant}/" if caller.reads_all else "\n"  # a key that reads all sees its narrower keys' too
    sql = f"SELECT thread_id FROM {OWNERS_TABLE} WHERE tenant = ? OR substr(tenant, 1, ?) = ?"
    ids = _owned(saver, sql, (caller.thread_owner, len(prefix), prefix))
    listed = []
    for thread_id in ids:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        if found is None:
            continue  # claimed, but its first turn never ran
        values = found.checkpoint.get("channel_values", {})
        turns = _turns(values)
        title = turns[0]["question"] if turns else "(no question)"
        collection = values.get("collection")
        listed.append(
            {
                "thread_id": thread_id,
                "title": title[:200],
                "turns": len(turns),
                "collection": collection if isinstance(collection, str) else None,
                "updated": found.checkpoint.get("ts", ""),
            }
        )
    listed.sort(key=lambda t: t["updated"], reverse=True)
    return listed[:MAX_THREADS]


def thread_turns(caller: Caller, saver: BaseCheckpointSaver, thread_id: str) -> dict[str, Any]:
    """One of the tenant's threads, turn by turn; another tenant's (or none) is 404."""
    owner = _owned(saver, f"SELECT tenant AS thread_id FROM {OWNERS_TABLE} WHERE thread_id = ?", (thread_id,))
    mine = len(owner) == 1 and caller.owns(owner[0])  # a wider key's thread is not a narrower one's
    found = saver.get_tuple({"configurable": {"thread_id": thread_id}}) if mine else None
    if found is None or not caller.can("ask"):
        raise Denied(404, f"no thread {thread_id[:60]!r}")
    values = found.checkpoint.get("channel_values", {})
    collection = values.get("collection")
    return {
        "thread_id": thread_id,
        "collection": collection if isinstance(collection, str) else None,
        "turns": _turns(values),
    }
