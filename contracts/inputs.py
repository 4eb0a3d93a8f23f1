"""Which documents a run reads: paths under the allowed root, inline texts, or a named collection.
Shared by the question graph's `prepare` and the index graph's `index_documents`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from longqa.retrieval import Document, DocumentError, document_from_text
from longqa.retrieval.loaders import printable_name

from .runtime import store_for
from .settings import Settings, running_as_server


class InputError(ValueError):
    """Bad input: reported in the run's output, never raised out of the graph."""


def allowed_path(path: str, settings: Settings) -> Path:
    """Resolve a document path; with a documents root set, refuse anything outside it. Messages name
    the path as the caller gave it, never the server's root."""
    shown = printable_name(path)
    if settings.documents_root is None and running_as_server():
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


def load_documents(state: Mapping[str, Any], settings: Settings) -> list[Document]:
    """The run's documents, each named as this caller gave it: the index is keyed by content, so the
    same text under another path is cached once but cited by the path given now."""
    store = store_for(settings)
    documents: list[Document] = []
    paths = state.get("documents") or []
    if isinstance(paths, str):
        paths = [paths]
    for path in paths:
        if not isinstance(path, str):
            raise InputError(f"'documents' must hold paths as strings (got {type(path).__name__})")
        resolved = allowed_path(path, settings)
        try:
            document = store.load(resolved)
        except DocumentError as e:  # named as the caller named it, not by the server's path
            raise DocumentError(shown_name(e.source, settings), e.reason) from None
        documents.append(document.model_copy(update={"source": shown_name(str(resolved), settings)}))
    for i, text in enumerate(_inline_texts(state.get("texts"))):
        document = document_from_text(text, source=f"text-{i + 1}", max_words=store.settings.max_words)
        store.remember_inline(document)
        documents.append(document)
    # inline texts are kept (indexed, for follow-ups) only as long as the deployment says
    store.forget_inline(settings.inline_keep_s, keep={d.doc_id for d in documents})
    if state.get("collection"):
        for doc_id in store.collection(state["collection"]):
            document = store.document(doc_id)
            documents.append(document.model_copy(update={"source": shown_name(document.source, settings)}))
    if not documents:
        raise InputError("no documents: pass 'documents' (paths), 'texts' or 'collection'")
    return documents
