"""long_context: the long-context reader (Self-Route's second step; the `lc` baseline; OkraLong's
precise mode). The whole document when it fits the model's window; otherwise the top chunks by
dense similarity (200 by default), put back in document order and cut to the window. Without a
model the chosen spans are returned as the evidence (what the reader would be given), unread."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.runtime import searcher_for, settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import Evidence, State, evidence_from_chunk, evidence_from_document, shown_by
from longqa.contracts.verdicts import is_unanswerable
from longqa.llm.calls import LLMError, call_llm
from longqa.llm.models import context_window
from longqa.prompts import self_route
from longqa.retrieval.tokens import default_counter

PROMPT_OVERHEAD_TOKENS = 200  # the instructions around the context, generously


def select_context(state: State, settings: Settings, budget: int) -> tuple[list[Evidence], str]:
    """(spans, how they were chosen): whole documents if they fit `budget` tokens, else top chunks."""
    searcher = searcher_for(settings, state["doc_ids"])
    counter = default_counter()
    header = counter.count("\n\nPassage 999:\n")  # what each span adds around its text in the prompt
    sizes = counter.count_many([d.text for d in searcher.documents])
    if sum(sizes) + header * len(sizes) <= budget:
        spans = [evidence_from_document(d, f"L{i}") for i, d in enumerate(searcher.documents, 1)]
        return spans, f"whole document(s), {sum(sizes):,} tokens"
    results = searcher.search(
        state["question"],
        k=settings.lc_top_chunks,
        granularity=settings.primary_granularity,
        depth=settings.lc_top_chunks,
        mode="dense",
    )
    chosen, used = [], 0
    for r in results:  # best first until the window is full, then back into document order
        if used + r.chunk.n_tokens + header > budget:
            break
        chosen.append(r)
        used += r.chunk.n_tokens + header
    order = {d.doc_id: i for i, d in enumerate(searcher.documents)}
    chosen.sort(key=lambda r: (order[r.chunk.doc_id], r.chunk.start))
    spans = [evidence_from_chunk(r, f"L{i}", state["question"]) for i, r in enumerate(chosen, 1)]
    return spans, (
        f"document exceeds the window ({sum(sizes):,} > {budget:,} tokens): top {len(spans)} of "
        f"{len(results)} dense chunks, {used:,} tokens, in document order"
    )


def long_context(state: State, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    question = state["question"]
    budget = (
        context_window(settings)
        - settings.max_answer_tokens
        - PROMPT_OVERHEAD_TOKENS
        - default_counter().count(question)
    )
    spans, how = select_context(state, settings, max(budget, 0))
    if not settings.has_llm:
        return {"evidence": spans, "route": ["long_context"], "trace": [f"long_context: {how}; no model to read it"]}
    context = "\n\n".join(f"Passage {i}:\n{s['text']}" for i, s in enumerate(spans, 1))
    prompt = self_route.LONG_CONTEXT.format(context=context, question=question)
    shown = shown_by("long_context", spans)
    try:
        reply, record = call_llm(settings, "long_context", [HumanMessage(prompt)])
    except LLMError as e:
        return {"error": str(e), "shown": shown, "route": ["long_context"], "trace": [f"long_context: {how}; {e}"]}
    answer = "unanswerable" if is_unanswerable(reply) else reply.strip()
    return {
        "answer": answer,
        "citations": [] if answer == "unanswerable" else spans,
        "shown": shown,
        "usage": [record],
        "route": ["long_context"],
        "trace": [f"long_context: {how}"],
    }
