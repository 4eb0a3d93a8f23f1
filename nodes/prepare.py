"""prepare: take the question (or the last human chat message), load the documents (paths under
the allowed root, inline texts, or a named collection) and index them at the primary granularity
(cached by content hash), so later nodes only search. It is the turn's first node: the graph
starts the turn clean with it (graph/node.py)."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.failure import fail
from longqa.contracts.plan import run_strategy
from longqa.contracts.settings import Settings, SettingsError, settings_of
from longqa.contracts.state import State
from longqa.retrieval import DocumentError
from longqa.retrieval.index.progress import library_progress
from longqa.retrieval.read.folders import skip_summary
from longqa.retrieval.read.loaders import clean_text
from longqa.services.inputs import InputError, Opened, open_library


def _asked_in_chat(state: State) -> str:
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if last is not None and (isinstance(last, HumanMessage) or getattr(last, "type", "") == "human"):
        content = last.content if isinstance(last.content, str) else str(last.content)
        return clean_text(content).strip()
    return ""


def question_of(state: State) -> str:
    """A chat turn ends with the new human message: that is the question. Otherwise `question`
    (a thread's earlier turns end with our AI message, so a stale question is never reused)."""
    question = state.get("question") or ""
    if not isinstance(question, str):
        raise InputError(f"'question' must be a string (got {type(question).__name__})")
    return _asked_in_chat(state) or clean_text(question).strip()


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


def prepare(state: State, runtime: Runtime[Settings]) -> dict:
    """Start a turn: read the question (or the last human message), open and update the library, and set the turn's
    deadline and search query (a follow-up is searched with the question before it); bad input ends the run."""
    settings = settings_of(runtime)
    # the turn's other fields start clean in the node wrapper (graph/node.py), which also starts the
    # run's clock (its deadline): only this turn's own here
    own = {"model": settings.model}
    question = ""
    try:
        question = question_of(state)
        if not question:
            raise InputError("no question: pass 'question' or a human message")
        run_strategy(settings, state.get("strategy"))  # an unknown name ends the run here, in one line
        opened = open_library(state, settings, library_progress("prepare"))
    except (InputError, DocumentError, KeyError, SettingsError) as e:
        message = e.args[0] if isinstance(e, KeyError) else str(e)
        return fail("prepare", f"input: {message}", **own, question=question, trace=[f"prepare: {message}"])
    history = history_of(state)
    # a `question` input joins the thread as a human message, so its follow-ups see it as a chat turn does
    asked = {} if _asked_in_chat(state) else {"messages": [HumanMessage(question)]}
    previous = next((h[len("User: ") :] for h in reversed(history) if h.startswith("User: ")), "")
    # a follow-up ("and in 2024?") is searched together with the question it follows
    search_query = f"{previous} {question}" if previous else question
    return {
        **own,
        **asked,
        "question": question,
        "library": opened.library.name,
        "doc_ids": opened.doc_ids,
        "sources": opened.sources,
        "skipped": [f"{s.path}: {s.reason}" for s in opened.skipped],
        "history": history,
        "search_query": search_query,
        "trace": [f"prepare: {_described(opened)}"],
    }


def _described(opened: Opened) -> str:
    """One line: what the run searches, what its update did, what was skipped and why."""
    line = f"{len(opened.doc_ids)} document(s), {opened.words:,} words, indexed"
    if opened.update is not None and (opened.update.added or opened.update.changed or opened.update.removed):
        line += f" ({opened.update.summary(skipped=len(opened.skipped))})"
    if opened.skipped:
        line += "; " + skip_summary(opened.skipped)
    return line
