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


def index_documents(state: IndexInput, runtime: Runtime[Settings]) -> IndexOutput:
    settings = settings_of(runtime)
    store = store_for(settings)
    try:
        documents = load_documents({"documents": state.get("documents"), "texts": state.get("texts")}, settings)
        chunks = {}
        for document in documents:
            for granularity in state.get("granularities") or [settings.primary_granularity]:
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
