"""Which documents a run reads: paths under the allowed root, inline texts, or a named collection.
Shared by the question graph's `prepare` and the index graph's `index_documents`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from longqa.retrieval import Document, document_from_text

from .runtime import store_for
from .settings import Settings, running_as_server


class InputError(ValueError):
    """Bad input: reported in the run's output, never raised out of the graph."""


def allowed_path(path: str, settings: Settings) -> Path:
    """Resolve a document path; with a documents root set, refuse anything outside it."""
    p = Path(path).expanduser()
    if settings.documents_root is None and running_as_server():
        raise InputError(
            f"{path}: this server reads no files (its LONGQA_DOCUMENTS_ROOT is not set); "
            "pass the text in 'texts' or name an indexed 'collection'"
        )
    if settings.documents_root is not None:
        root = Path(settings.documents_root).expanduser().resolve()
        p = (root / p).resolve() if not p.is_absolute() else p.resolve()
        if not p.is_relative_to(root):
            raise InputError(f"{path}: outside the allowed documents root {root} (LONGQA_DOCUMENTS_ROOT)")
    return p


def load_documents(state: Mapping[str, Any], settings: Settings) -> list[Document]:
    store = store_for(settings)
    documents: list[Document] = []
    for path in state.get("documents") or []:
        documents.append(store.load(allowed_path(path, settings)))
    for i, text in enumerate(state.get("texts") or []):
        document = document_from_text(text, source=f"text-{i + 1}", max_words=store.settings.max_words)
        store.remember(document)
        documents.append(document)
    if state.get("collection"):
        documents.extend(store.document(d) for d in store.collection(state["collection"]))
    if not documents:
        raise InputError("no documents: pass 'documents' (paths), 'texts' or 'collection'")
    return documents
