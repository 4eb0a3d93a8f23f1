"""What a library's update clears:

- before it changes anything (every update, a question's too: it is the update's own recovery),
  what a killed update left: vectors it added but never published (its pending marks);
- after it publishes, this host's BM25 versions neither it nor the previous version names;
- after its lock was lost or its publish found a newer version (a stale writer): what it added
  itself, under the lock again, so it leaves no stray vectors;
- on the index path only (`collect_expired`: an index run, never a question): collections a publish
  replaced and the vectors of documents a publish removed, once `RETIRE_AFTER_S` has passed since
  (a reader may still hold the manifest that lists them: a question reads its manifest once and
  keeps it for its run), and (library_unused.py) libraries made for inline texts not used for a while.
Vectors of a document removed less than `RETIRE_AFTER_S` ago are never deleted by the first two
either: a reader of the manifest before the removal may still search them. A record stands for one
unit text (library_dense.py) and names the first document that held it: a document's
records are deleted except those whose text the published part still holds. (A record kept so is
left behind when its other holders go later: harmless, as no chunk maps to it any more.)
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .catalog import Held
from .manifest import Manifest, Part

if TYPE_CHECKING:
    from .library import Library

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
    """Delete these documents' vectors from the parts' collections (texts the parts hold stay)."""
    for g, part in parts:
        delete_documents(library.collection(g, part.collection), doc_ids, set(library.units(part).keys))


def delete_documents(collection: Any, doc_ids: list[str], keep: set[str] = frozenset()) -> None:
    """Delete the records these documents added to one Chroma collection, but those in `keep` (the
    text hashes a published part still holds), DELETE_BATCH doc ids per call."""
    for i in range(0, len(doc_ids), DELETE_BATCH):
        got = collection.get(where={"doc_id": {"$in": doc_ids[i : i + DELETE_BATCH]}}, include=[])
        ids = [h for h in got["ids"] if h not in keep]
        if ids:
            collection.delete(ids=ids)


def unheld(library: Library, doc_ids: set[str], current: Manifest) -> list[str]:
    """Those of `doc_ids` whose vectors no reader can need: not members of the `current` version,
    nor removed by a publish whose grace has not passed (an older manifest may list them)."""
    return sorted(doc_ids - set(current.doc_ids()) - set(library.catalog.removed(library.name, 0.0)))


def clear_leftovers(library: Library, current: Manifest, held: Held) -> None:
    """Before changing anything: vectors an earlier update added but never published (it was killed)."""
    pending = library.catalog.pending(library.name)
    leftovers = unheld(library, pending, current) if pending else []
    if leftovers:
        delete_vectors(library, [(g, p) for g, p in current.parts.items() if p.dense], leftovers)
    library.catalog.clear_pending(held, library.name)


def clear_after_publish(library: Library, manifest: Manifest, old: Manifest) -> None:
    """This host's BM25 versions neither this nor the previous version names (the removed documents'
    vectors wait for `collect_expired`: a reader of the previous version may still search them)."""
    keep = {p.bm25 for p in manifest.parts.values()} | {p.bm25 for p in old.parts.values()}
    for entry in library.dir.iterdir():
        if entry.is_dir() and entry.name.startswith("g") and entry.name not in keep:
            shutil.rmtree(entry, ignore_errors=True)  # readers of the previous version keep theirs


def collect_expired(library: Library, held: Held, current: Manifest) -> list[str]:
    """The index path's clean-up under the lock: delete the collections retired, and the vectors of
    the documents removed, at least `RETIRE_AFTER_S` ago (a document that is a member of `current`
    again keeps its vectors). Returns the collections deleted."""
    gone = library.catalog.retired(library.name, RETIRE_AFTER_S)
    for name in gone:
        with contextlib.suppress(Exception):  # already gone
            library.store.client.delete_collection(name)
    if gone:
        library.catalog.forget_retired(held, library.name, gone)
    due = library.catalog.removed(library.name, RETIRE_AFTER_S)
    members, dense = set(current.doc_ids()), [(g, p) for g, p in current.parts.items() if p.dense]
    if due:
        delete_vectors(library, dense, [d for d in due if d not in members])
        library.catalog.forget_removed(held, library.name, due)
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
            awaiting = set(library.catalog.removed(library.name, 0.0))  # a reader may still search them
            members = set(current.doc_ids()) | awaiting
            named = {p.collection: g for g, p in current.parts.items()}
            held = {p.collection: set(library.units(p, current).keys) for p in current.parts.values() if p.dense}
            for name in writes.created - set(named):
                with contextlib.suppress(Exception):
                    library.store.client.delete_collection(name)
            for name, doc_ids in writes.added.items():
                extra = sorted(doc_ids - members)
                if name in writes.created and name not in named or not extra:
                    continue
                delete_documents(library.store.client.get_collection(name), extra, held.get(name, set()))
    except Exception:  # noqa: BLE001 - the original error is the one to report
        log.warning("library %s: could not remove what the stale update added", library.name, exc_info=True)


def delete_library(library: Library, unused_for: float | None = None) -> bool:
    """Remove a library: its collections, retired ones included, and its catalog entries (the
    documents' cached parts stay). With `unused_for`, only if it is still unused that long."""
    library.dir.mkdir(parents=True, exist_ok=True)
    catalog = library.catalog
    with library._update_lock, catalog.lock(library.name) as held:
        if unused_for is not None and library.name not in catalog.unused(unused_for):
            return False
        retired = catalog.retired(library.name, 0.0)
        for collection in [p.collection for p in library._read_under_lock().parts.values()] + retired:
            with contextlib.suppress(Exception):
                library.store.client.delete_collection(collection)
        catalog.forget_retired(held, library.name, retired)
        library.forget_caches()
        catalog.drop(held, library.name)
    return True
