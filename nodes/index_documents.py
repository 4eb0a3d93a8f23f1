"""index_documents: the indexing step on its own (the `index` graph): bring a library up to date
with files, folders and texts at the requested granularities — a named collection that later runs
of the question graph can name instead of passing documents again, or the library made for these
paths. Only new and changed files are embedded; removed ones leave the library."""

from __future__ import annotations

import asyncio
import logging
import threading

from langchain_core.runnables import RunnableLambda
from langgraph.runtime import Runtime, get_runtime
from typing_extensions import TypedDict  # LangGraph publishes schemas from these on Python < 3.12

from longqa.contracts.settings import Settings, settings_of
from longqa.retrieval import DocumentError
from longqa.retrieval.cancel import Cancelled, cancelled_by
from longqa.retrieval.index.progress import library_progress
from longqa.services.inputs import InputError, index_library

log = logging.getLogger(__name__)


class IndexInput(TypedDict, total=False):
    """The index graph's input: documents (or texts) to index as one library, folder patterns, its name and chunk
    sizes."""

    documents: list[str]  # files and folders (walked recursively)
    include: list[str]  # glob patterns a file found in a folder must match (any)
    exclude: list[str]  # glob patterns a file found in a folder must not match
    texts: list[str]
    collection: str  # the library's name; it then holds exactly these documents
    granularities: list[int]


class IndexOutput(TypedDict, total=False):
    """The index graph's output: the library, its documents, chunks per size, version, changes and skipped files, or
    the input error."""

    doc_ids: list[str]
    collection: str | None
    chunks: dict[str, int]  # "<granularity>" -> chunks in the library at that size
    version: int  # the library's version after this run
    changes: dict[str, list[str]]  # "added", "changed", "removed" -> documents by name
    skipped: list[str]  # "file: reason" for each file found in a folder that could not be indexed
    error: str | None


MAX_GRANULARITIES = 3  # each one is a whole index: embedding time and disk


def _granularities(value: object, settings: Settings) -> list[int]:
    if value is None or value == []:
        return [settings.primary_granularity]
    if not isinstance(value, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in value):
        raise InputError("'granularities' must be a list of whole numbers (chunk sizes in tokens)")
    sizes = list(dict.fromkeys(value))
    if len(sizes) > MAX_GRANULARITIES:
        raise InputError(f"at most {MAX_GRANULARITIES} granularities per run (got {len(sizes)})")
    for g in sizes:
        if not 8 <= g <= 4096:
            raise InputError(f"granularity {g} is outside 8..4096 tokens")
    return sizes


def index_documents(state: IndexInput, runtime: Runtime[Settings]) -> IndexOutput:
    """Index the input as one library at the asked chunk sizes (default: the primary one); bad input ends with
    `error`, never an exception."""
    settings = settings_of(runtime)
    try:
        granularities = _granularities(state.get("granularities"), settings)
        opened = index_library(state, settings, granularities, library_progress("index"))
    except (InputError, DocumentError, ValueError) as e:
        return {"error": f"input: {e}", "doc_ids": [], "chunks": {}, "collection": None, "skipped": []}
    manifest, update = opened.library.manifest(), opened.update
    return {
        "doc_ids": opened.doc_ids,
        "collection": state.get("collection") or opened.library.name,
        "chunks": {str(g): part.n_chunks for g, part in sorted(manifest.parts.items()) if g in granularities},
        "version": manifest.version,
        "changes": {"added": update.added, "changed": update.changed, "removed": update.removed},
        "skipped": [f"{s.path}: {s.reason}" for s in opened.skipped],
        "error": None,
    }


def index_node() -> RunnableLambda:
    """`index_documents` as the index graph runs it: in the caller's thread under `invoke` (the CLI,
    `longqa serve`, which stop a run themselves); under `ainvoke` (the LangGraph server) in a worker
    thread that stops at its next file or embedding batch once the run is cancelled, as when its
    waiting client disconnects (longqa/http/disconnect.py), instead of indexing on for nobody."""

    def run(state: IndexInput) -> IndexOutput:
        return index_documents(state, get_runtime())

    async def arun(state: IndexInput) -> IndexOutput:
        runtime, cancelled = get_runtime(), threading.Event()

        def work() -> IndexOutput:
            try:
                with cancelled_by(cancelled):
                    return index_documents(state, runtime)
            except Cancelled:
                log.warning("index_documents: its run was cancelled; stopped within the step")
                raise

        try:
            return await asyncio.to_thread(work)
        except asyncio.CancelledError:
            cancelled.set()  # the thread raises `Cancelled` at its next check and ends
            raise

    return RunnableLambda(run, afunc=arun, name="index_documents")
