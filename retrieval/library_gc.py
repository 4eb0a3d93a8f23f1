"""What a library's update clears, on the index path only (a question never runs any of it):

- before it changes anything, what a killed update left: vectors it added but never published
  (its pending marks), removals it published but did not finish;
- after it publishes, the removed documents' vectors and BM25 versions no manifest names;
- collections a publish replaced, once `RETIRE_AFTER_S` has passed since (a reader may still hold
  the manifest that names the old one: a question reads its manifest once and keeps it for its run);
- after its lock was lost or its publish found a newer version (a stale writer): what it added
  itself, under the lock again, so it leaves no stray vectors.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .catalog import Held
from .manifest import Manifest, Part

if TYPE_CHECKING:
    from .library import Library
    from .store import IndexStore

log = logging.getLogger(__name__)

RETIRE_AFTER_S = 900.0  # a replaced collection is kept this long: longer than any question's run
DELETE_BATCH = 500  # doc ids per Chroma delete


@dataclass
class Writes:
    """What one update wrote to Chroma: doc ids whose vectors it added, by collection, and the
    collections it created."""

    added: dict[str, set[str]] = field(default_factory=dict)
    created: set[str] = field(default_factory=set)


def delete_vectors(library: Library, parts: Iterable[tuple[int, Part]], doc_ids: list[str]) -> None:
    """Delete these documents' vectors from the parts' collections."""
    for g, part in parts:
        delete_documents(library.collection(g, part.collection), doc_ids)


def delete_documents(collection: Any, doc_ids: list[str]) -> None:
    """Delete these documents' vectors from one Chroma collection, DELETE_BATCH ids per call."""
    for i in range(0, len(doc_ids), DELETE_BATCH):
        collection.delete(where={"doc_id": {"$in": doc_ids[i : i + DELETE_BATCH]}})


def clear_leftovers(library: Library, current: Manifest, held: Held) -> None:
    """Before changing anything: vectors an earlier update added but never published (it was
    killed), and removals a killed update published but did not finish."""
    leftovers = set(current.removed) | library.catalog.pending(library.name)
    leftovers -= set(current.doc_ids())
    if leftovers:
        delete_vectors(library, [(g, p) for g, p in current.parts.items() if p.dense], sorted(leftovers))
    library.catalog.clear_pending(held, library.name)


def clear_after_publish(library: Library, manifest: Manifest, old: Manifest) -> None:
    """The removed documents' vectors, and BM25 versions neither this nor the previous version names."""
    if manifest.removed:
        delete_vectors(library, [(g, p) for g, p in manifest.parts.items() if p.dense], manifest.removed)
    keep = {p.bm25 for p in manifest.parts.values()} | {p.bm25 for p in old.parts.values()}
    for entry in library.dir.iterdir():
        if entry.is_dir() and entry.name.startswith("g") and entry.name not in keep:
            shutil.rmtree(entry, ignore_errors=True)  # readers of the previous version keep theirs


def collect_retired(library: Library, held: Held) -> list[str]:
    """Delete the collections retired at least `RETIRE_AFTER_S` ago; return their names."""
    gone = library.catalog.retired(library.name, RETIRE_AFTER_S)
    for name in gone:
        with contextlib.suppress(Exception):  # already gone
            library.store.client.delete_collection(name)
    if gone:
        library.catalog.forget_retired(held, library.name, gone)
    return gone


def abandon(library: Library, writes: Writes) -> None:
    """After a lost lock or a stale publish, under the lock again: delete the vectors this update
    added that the published version does not hold, and the collections it created that the
    published version does not name. A failure here leaves them to the next update's pending marks."""
    if not writes.added and not writes.created:
        return
    try:
        with library.catalog.lock(library.name):
            current = library._read_under_lock()
            members = set(current.doc_ids())
            named = {p.collection: g for g, p in current.parts.items()}
            for name in writes.created - set(named):
                with contextlib.suppress(Exception):
                    library.store.client.delete_collection(name)
            for name, doc_ids in writes.added.items():
                extra = sorted(doc_ids - members)
                if name in writes.created and name not in named or not extra:
                    continue
                delete_documents(library.store.client.get_collection(name), extra)
    except Exception:  # noqa: BLE001 - the original error is the one to report
        log.warning("library %s: could not remove what the stale update added", library.name, exc_info=True)


def forget_unused(store: IndexStore, older_than_s: float, keep: set[str] = frozenset()) -> int:
    """Delete the libraries made for inline texts that were not used for `older_than_s` seconds."""
    from .library import USED_MARK, Library

    removed = 0
    for mark in (store.settings.home / "libraries").glob(f"*/{USED_MARK}"):
        name = mark.parent.name
        try:
            age = time.time() - float(mark.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if age >= older_than_s and name not in keep:
            Library(store, name).delete()
            removed += 1
    return removed
