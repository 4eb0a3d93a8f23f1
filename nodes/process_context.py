"""process_context: OkraLong's context processor (appendix C.3) and LongRAG's chunk→paragraph
mapping f_m. Retrieved chunks become passages: neighbours merged, extended by the plan's
tokens (arithmetic), cut tables and announced lists recovered, ordered by document position and labelled E1, E2, ...
When the plan runs the extractor, the chunks are also mapped to their whole source paragraphs
(capped in tokens) for it."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.plan import Plan, plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, Hit, State, evidence_from_passage, scored_from
from longqa.retrieval import (
    Passage,
    extend,
    merge_chunks,
    merge_passages,
    recover_lists,
    recover_tables,
    source_paragraphs,
)
from longqa.retrieval.read.ocr import location
from longqa.retrieval.search.precision import pruned
from longqa.retrieval.search.sections import section_of
from longqa.services.stores import searcher_for


def _evidence(passages: list[Passage], hits: list[Hit], prefix: str, documents: dict) -> list[Evidence]:
    # each passage with its page in a paged document, and whether OCR read it (its citation says so)
    return [
        {**evidence_from_passage(p, f"{prefix}{i}", hits), **location(documents[p.doc_id], p.start, p.end)}
        for i, p in enumerate(passages, 1)
    ]


def build_passages(hits: list[Hit], documents: dict, plan: Plan) -> tuple[list[Passage], int]:
    """Merge, extend, recover tables and announced lists, merge again (extension can make passages touch)."""
    passages = merge_chunks([scored_from(h) for h in hits], documents)
    recovered = 0
    if plan.extend_tokens or plan.recover_tables or plan.recover_lists:
        grown = []
        for p in passages:
            document = documents[p.doc_id]
            if plan.extend_tokens:
                p = extend(p, document, plan.extend_tokens, plan.extend_tokens)
            if plan.recover_tables:  # a whole table, if it fits what the plan shows at most
                p = recover_tables(p, document, max_tokens=plan.evidence_size)
                recovered += p.tables_recovered
            if plan.recover_lists:  # the whole list a chunk cuts into, within the same bound
                p = recover_lists(p, document, max_tokens=plan.evidence_size)
            grown.append(p)
        passages = merge_passages(grown, documents)
    return passages, recovered


def process_context(state: State, runtime: Runtime[Settings]) -> dict:
    """Turn the retrieved chunks into evidence passages per the plan (merged, extended, tables recovered, sentences
    pruned) and, when the plan extracts, the source paragraphs for the extractor."""
    settings = settings_of(runtime)
    plan = plan_of(state)
    hits = state.get("hits") or []
    names = state.get("sources") or {}  # each document as this run's caller named it
    searcher = searcher_for(settings, state["library"], state["doc_ids"])
    documents = {  # only the documents evidence comes from: a library may hold thousands
        d.doc_id: d.model_copy(update={"source": names.get(d.doc_id, d.source)})
        for d in (searcher.document(i) for i in dict.fromkeys(h["doc_id"] for h in hits))
    }
    passages, recovered = build_passages(hits, documents, plan)
    evidence = _evidence(passages, hits, "E", documents)
    note = f"process_context: {len(hits)} chunk(s) -> {len(evidence)} passage(s)"
    evidence = [{**e, **section_of(documents[e["doc_id"]], e["start"])} for e in evidence]  # cited as where it is
    if "sentences" in plan.precision:  # the precision stage inside passages: what its query names
        words = sum(len(e["text"].split()) for e in evidence)
        evidence = [{**e, "text": pruned(e["text"], e["query"] or state["question"])} for e in evidence]
        note += f", {words - sum(len(e['text'].split()) for e in evidence)} word(s) of unrelated sentences left out"
    update: dict = {"evidence": evidence}
    if recovered:
        note += f", {recovered} table(s) recovered"
    if plan.extract:
        ranked = sorted(hits, key=lambda h: -h["score"])
        paragraphs = source_paragraphs([scored_from(h) for h in ranked], documents, settings.paragraph_cap_tokens)
        update["paragraphs"] = _evidence(paragraphs, hits, "P", documents)
        note += f", {len(paragraphs)} source paragraph(s) for the extractor"
    return {**update, "trace": [note]}
