"""long_context: the long-context reader (Self-Route's second step; the `lc` baseline; OkraLong's
precise mode). The whole document when it fits the model's window; otherwise the top chunks by
dense similarity (200 by default), put back in document order and cut to the window. Without a
model the chosen spans are returned as the evidence (what the reader would be given), unread.
How large the window's room is (the answer's cap, the question budget, the server's own count, a
prompt the server refused as too long) is the model-node driver's (llm/window.py): this node fills
the room it is given."""

from __future__ import annotations

import re

from langgraph.runtime import Runtime

from longqa.contracts.failure import fail
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, State, evidence_from_chunk, evidence_from_document, shown_by
from longqa.contracts.verdicts import is_unanswerable
from longqa.llm.answer_core import answer_core
from longqa.llm.citations import split_sources
from longqa.llm.model_node import LLMError, ModelSteps, Room, Window, ask, model_node
from longqa.llm.parsing import fixed_text, read_answer
from longqa.llm.passages import as_data
from longqa.prompts import self_route
from longqa.retrieval.tokens import default_counter
from longqa.services.stores import searcher_for

_FIXED = fixed_text(self_route.LONG_CONTEXT)
_HEADERS = re.compile(self_route.ECHO_HEADERS)


def select_context(state: State, settings: Settings, room: Room) -> tuple[list[Evidence], str]:
    """(spans, how they were chosen): whole documents if they fit the `room`, else top chunks."""
    searcher = searcher_for(settings, state["library"], state["doc_ids"])
    counter = default_counter()
    header = counter.count("\n\nPassage 999:\n")  # what each span adds around its text in the prompt
    # every word is at least one token: a library with more words than the budget is not read whole
    words = searcher.n_words()
    size = f"{words:,} words"
    if room.holds([words]):
        sizes = counter.count_many([d.text for d in searcher.documents])
        size = f"{sum(sizes):,} tokens"
        if room.holds(sizes, header):
            names = state.get("sources")
            spans = [evidence_from_document(d, f"L{i}", names) for i, d in enumerate(searcher.documents, 1)]
            return spans, f"whole document(s), {size}"
    results = searcher.search(
        state["question"],
        k=settings.lc_top_chunks,
        granularity=settings.primary_granularity,
        depth=settings.lc_top_chunks,
        mode="dense",
    )
    # best first until the window is full, then back into document order
    n, used = room.fill([r.chunk.n_tokens for r in results], header)
    chosen = results[:n]
    order = {d.doc_id: i for i, d in enumerate(searcher.documents)}
    chosen.sort(key=lambda r: (order[r.chunk.doc_id], r.chunk.start))
    spans = [evidence_from_chunk(r, f"L{i}", state["question"], state.get("sources")) for i, r in enumerate(chosen, 1)]
    return spans, (
        f"document exceeds the window ({size} > {room.tokens:,} tokens): top {len(spans)} of "
        f"{len(results)} dense chunks, {used:,} tokens, in document order"
    )


@model_node
def long_context(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    question = state["question"]
    cap = settings.long_context_max_tokens
    # as much of the documents as the model's window holds (the driver says how much: `Room`)
    reading = Window(
        lambda room: select_context(state, settings, room), lambda spans: _prompt(spans, question), question
    )
    try:
        reply = yield ask(settings, "long_context", reading, send=settings.has_llm, max_tokens=cap)
    except LLMError as e:
        return _failed(str(e), e.kept, e.chosen or "", e.notes)
    spans, how, trace = reply.kept, reply.chosen or "", list(reply.notes)
    if not settings.has_llm:
        selection = f"{how}; no model to read it"
        return {
            "evidence": spans,
            "long_context_selection": selection,
            "trace": [f"long_context: {selection}"],
        }
    shown = shown_by("long_context", spans)
    quoting = "\n".join([question, *(s["text"] for s in spans)])
    text, problem = read_answer(
        reply.text, reply.truncated, _FIXED, _HEADERS, f"long_context_max_tokens={cap}", quoting=quoting
    )
    if text is None:
        return _failed(f"long_context: {problem}", spans, how, trace)
    # a reader may still name passages it was not asked to (seen: "Pellham Yard [E1]", whose "e1" then counted
    # as a word of support): the names are cut as the generator's are (llm/citations.py)
    text = split_sources(_PASSAGE_NAMED.sub("", text))[0] or text
    answer = "unanswerable" if is_unanswerable(text) else answer_core(text, question)
    if answer != text and answer != "unanswerable":
        trace.append(f"long_context: the answer is {answer!r}; the rest of the reply restates the question")
    return {
        "answer": answer,
        "citations": [] if answer == "unanswerable" else spans,
        "shown": shown,
        "long_context_selection": how,
        "trace": [*trace, f"long_context: {how}"],
    }


# "(Passage 2)", "[Passages 1 and 3]": the long context's own labels, named after the answer
_PASSAGE_NAMED = re.compile(r"\s*[\[(]\s*passages?\s+\d{1,4}(?:\s*(?:,|and|&)\s*\d{1,4})*\s*[\])]", re.IGNORECASE)


def _prompt(spans: list[Evidence], question: str) -> str:
    context = "\n\n".join(f"Passage {i}:\n{as_data(s['text'])}" for i, s in enumerate(spans, 1))
    return self_route.LONG_CONTEXT.format(context=context, question=question)


def _failed(error: str, spans: list[Evidence], how: str, trace: list[str]) -> dict:
    selection = f"{how}; {error}"
    return fail(
        "long_context",
        error,
        shown=shown_by("long_context", spans),
        long_context_selection=selection,
        trace=[*trace, f"long_context: {selection}"],
    )
