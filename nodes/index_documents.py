"""index_documents: the indexing step on its own (the `index` graph): load documents, index them
at the requested granularities and, if named, save them as a collection that later runs of the
question graph can name instead of passing documents again."""

from __future__ import annotations

from langgraph.runtime import Runtime
from typing_extensions import TypedDict  # LangGraph publishes schemas from these on Python < 3.12

from longqa.contracts.inputs import InputError, load_documents
from longqa.contracts.runtime import settings_of, store_for
from longqa.contracts.settings import Settings
from longqa.retrieval import DocumentError
from longqa.retrieval.progress import embedding_progress


class IndexInput(TypedDict, total=False):
    documents: list[str]
    texts: list[str]
    collection: str  # name to save the documents under
    granularities: list[int]


class IndexOutput(TypedDict, total=False):
    doc_ids: list[str]
    collection: str | None
    chunks: dict[str, int]  # "<doc_id[:12]>@<granularity>" -> chunk count
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
    settings = settings_of(runtime)
    store = store_for(settings)
    try:
        granularities = _granularities(state.get("granularities"), settings)
        documents = load_documents({"documents": state.get("documents"), "texts": state.get("texts")}, settings)
        chunks = {}
        for document in documents:
            for granularity in granularities:
                index = store.index(document, granularity, embedding_progress("index", document.source, granularity))
                chunks[f"{document.doc_id[:12]}@{granularity}"] = len(index.chunks)
        if state.get("collection"):
            store.save_collection(state["collection"], [d.doc_id for d in documents])
    except (InputError, DocumentError, ValueError) as e:
        return {"error": f"input: {e}", "doc_ids": [], "chunks": {}, "collection": None}
    return {
        "doc_ids": [d.doc_id for d in documents],
        "collection": state.get("collection"),
        "chunks": chunks,
        "error": None,
    }
