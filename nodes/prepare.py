"""prepare: take the question (or the last human chat message), load the documents (paths under
the allowed root, inline texts, or a named collection) and index them at the primary granularity
(cached by content hash), so later nodes only search. Clears the per-turn lists of a thread."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graph.settings import Settings, running_as_server
from graph.state import State, fresh
from retrieval import Document, DocumentError, document_from_text

from .resources import settings_of, store_for


class InputError(ValueError):
    """Bad input: reported in the run's output, never raised out of the graph."""


def question_of(state: State) -> str:
    """A chat turn ends with the new human message: that is the question. Otherwise `question`
    (a thread's earlier turns end with our AI message, so a stale question is never reused)."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if last is not None and (isinstance(last, HumanMessage) or getattr(last, "type", "") == "human"):
        content = last.content if isinstance(last.content, str) else str(last.content)
        if content.strip():
            return content.strip()
    return (state.get("question") or "").strip()


def history_of(state: State, turns: int = 3) -> list[str]:
    """The last `turns` exchanges before the current question, without our citation blocks."""
    messages = list(state.get("messages") or [])
    if messages and getattr(messages[-1], "type", "") == "human":
        messages = messages[:-1]
    lines = []
    for m in messages[-2 * turns :]:
        content = m.content if isinstance(m.content, str) else str(m.content)
        role = {"human": "User", "ai": "Assistant"}.get(getattr(m, "type", ""), None)
        if role and content.strip():
            lines.append(f"{role}: {content.split(chr(10) * 2 + 'Sources:')[0].strip()}")
    return lines


def allowed_path(path: str, settings: Settings) -> Path:
    """Resolve a document path; with a documents root set, refuse anything outside it."""
    p = Path(path).expanduser()
    if settings.documents_root is None and running_as_server():
        raise InputError(f"{path}: this server reads no files (its LONGQA_DOCUMENTS_ROOT is not set); "
                         "pass the text in 'texts' or name an indexed 'collection'")
    if settings.documents_root is not None:
        root = Path(settings.documents_root).expanduser().resolve()
        p = (root / p).resolve() if not p.is_absolute() else p.resolve()
        if not p.is_relative_to(root):
            raise InputError(f"{path}: outside the allowed documents root {root} (LONGQA_DOCUMENTS_ROOT)")
    return p


def load_documents(state: State, settings: Settings) -> list[Document]:
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


def prepare(state: State, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    reset = {"hits": fresh(), "usage": fresh(), "steps": fresh(), "verdicts": fresh(), "route": fresh("prepare"),
             "answer": None, "status": None, "draft": None, "error": None, "global_info": None,
             "cot": None, "evidence": [], "citations": [], "paragraphs": [], "sub_questions": [], "hops": 0,
             "primary": [], "analysis": {}, "plan": {}, "model": settings.model}
    question = question_of(state)
    try:
        if not question:
            raise InputError("no question: pass 'question' or a human message")
        documents = load_documents(state, settings)
        store = store_for(settings)
        for document in documents:
            store.index(document, settings.primary_granularity)
    except (InputError, DocumentError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) else str(e)
        return {**reset, "question": question, "status": "error", "error": f"input: {message}",
                "trace": fresh(f"prepare: {message}")}
    words = sum(d.n_words for d in documents)
    history = history_of(state)
    previous = next((h[len("User: "):] for h in reversed(history) if h.startswith("User: ")), "")
    # a follow-up ("and in 2024?") is searched together with the question it follows
    search_query = f"{previous} {question}" if previous else question
    return {**reset, "question": question, "doc_ids": [d.doc_id for d in documents], "history": history,
            "search_query": search_query,
            "trace": fresh(f"prepare: {len(documents)} document(s), {words:,} words, indexed")}
