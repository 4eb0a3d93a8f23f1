"""A question over some files of a library (a file or a subfolder of an indexed folder): only those
files are brought up to date, never the rest of the library, so asking one file of a folder of a
thousand reads that file alone (its stat, and its text when the stat changed)."""

from __future__ import annotations

from collections.abc import Sequence

from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import Member, Progress, Update, unchanged_update


def scoped_update(
    library: Library, members: Sequence[Member], granularity: int, progress: Progress | None = None
) -> Update | None:
    """The update of `members` alone in `library`: from their stats only, with no lock and nothing written, when
    none changed; else those that changed read again (the library's other members kept as they are). None when
    the library does not hold every member yet (a new file: the caller brings the whole folder up to date)."""
    old = library.manifest()
    if not members or not old.documents or any(m.key not in old.documents for m in members):
        return None
    held = old.model_copy(update={"documents": {m.key: old.documents[m.key] for m in members}})
    update = unchanged_update(held, members, {granularity}, True, library.store.signature(), {})
    if update is not None and not any(p.dense and library.vectors_missing(g, p) for g, p in old.parts.items()):
        return update
    return library.update(list(members), [granularity], remove_missing=False, progress=progress, collect=False)
