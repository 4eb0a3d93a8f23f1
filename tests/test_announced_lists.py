"""Announced lists recovered whole (retrieval/search/lists.py, context.py `recover_lists`): a passage cutting into a
list its document announces grows from the announcing sentence to the last item; captions, unannounced lines and
lists past the bound stay as they were; and the context processor does it for the default, not for Std-RAG."""

from __future__ import annotations

import time

from longqa.analyzer.schema import Analysis
from longqa.contracts.plan import plan
from longqa.contracts.settings import Settings
from longqa.nodes.process_context import build_passages
from longqa.retrieval.documents import Document
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.context import Passage, recover_lists
from longqa.retrieval.search.lists import MAX_ITEM_LINES, lists_near

INTRO = "Harbour traffic grew in the decade. Pilots were scarce and the tide tables were revised twice."
LABELLED = (
    "Setup. We compare our router (TideNet) to the following set of baselines:\n"
    "[leftmargin=4mm]\n"
    "Greedy berth: each ship takes the first free berth.\n"
    "Queue model: ships wait in arrival order and are served by the nearest crane.\n"
    "Tide window: berths are given only at high water, as the port did before 1990."
)
BULLETED = "The pilots checked three things:\n- the draught\n- the wind at the quay\n- the tide gauge"
AFTER = "Results. TideNet cut waiting times by a third over the season, and the pilots reported fewer delays."


def _document(*parts: str) -> Document:
    return document_from_text("\n".join(parts), source="port.md")


def _passage(document: Document, start: int, end: int) -> Passage:
    return Passage(
        doc_id=document.doc_id, source="port.md", start=start, end=end, text=document.text[start:end], chunk_indexes=[0]
    )


def test_a_labelled_list_is_found_from_its_announcing_sentence_to_its_last_item():
    document = _document(INTRO, LABELLED, AFTER)
    text = document.text
    (span,) = lists_near(text, 0, len(text))
    assert text[span[0] : span[1]].startswith("We compare our router (TideNet) to the following set of baselines:")
    assert text[span[0] : span[1]].endswith("as the port did before 1990.")


def test_a_passage_holding_the_first_item_grows_over_the_whole_list():
    document = _document(INTRO, LABELLED, AFTER)
    text = document.text
    first = text.index("Greedy berth")
    grown = recover_lists(_passage(document, text.index("Setup."), first + 30), document)
    assert "Queue model:" in grown.text and grown.text.endswith("before 1990.") and grown.text.startswith("Setup.")
    assert "Results." not in grown.text
    middle = text.index("Queue model")  # a passage inside the list grows back to the announcement too
    grown = recover_lists(_passage(document, middle, middle + 20), document)
    assert grown.text.startswith("We compare our router") and "Tide window" in grown.text


def test_a_bulleted_list():
    document = _document(INTRO, BULLETED, AFTER)
    text = document.text
    grown = recover_lists(_passage(document, text.index("three things"), text.index("- the draught") + 5), document)
    assert grown.text.endswith("- the tide gauge") and grown.text.startswith("The pilots checked three things:")


def test_what_is_not_an_announced_list_stays_as_it_was():
    captions = _document("Table 3:", "Cranes: 4 on the east quay.", "Berths: 12 in all.", "Ships: 40 a day.", AFTER)
    assert lists_near(captions.text, 0, len(captions.text)) == []  # a caption's label announces nothing
    lone = _document("We list the cranes:", "Crane A: the east quay.", AFTER)  # one item: no list
    assert lists_near(lone.text, 0, len(lone.text)) == []
    document = _document(INTRO, LABELLED, AFTER)
    away = _passage(document, 0, len(INTRO))  # does not cut into the list
    assert recover_lists(away, document) == away


def test_a_list_past_the_bound_stays_cut():
    document = _document(INTRO, LABELLED, AFTER)
    text = document.text
    cut = _passage(document, text.index("Greedy berth"), text.index("Greedy berth") + 20)
    assert recover_lists(cut, document, max_tokens=10) == cut


def test_hostile_lists_are_read_within_bounds():
    items = "\n".join(f"- item {i}" for i in range(5000))
    document = _document("These are the items:", items)
    text = document.text
    started = time.perf_counter()
    spans = lists_near(text, 0, 200)
    assert len(spans) == 1 and text[spans[0][0] : spans[0][1]].count("\n") == MAX_ITEM_LINES  # no more lines
    colons = _document(":\n" * 50000)
    assert lists_near(colons.text, 0, len(colons.text)) == []
    assert time.perf_counter() - started < 5  # bounded work, not a speed target


def _hit(document: Document, start: int, end: int) -> dict:
    return {
        "doc_id": document.doc_id,
        "source": "port.md",
        "index": 0,
        "granularity": 150,
        "start": start,
        "end": end,
        "paragraph_ids": [0],
        "n_tokens": 20,
        "text": document.text[start:end],
        "score": 1.0,
        "dense_score": None,
        "bm25_score": None,
        "query": "What baselines does TideNet compare to?",
    }


def test_the_default_plan_reads_the_whole_list_and_std_rag_does_not():
    document = _document(INTRO, LABELLED, AFTER)
    text = document.text
    hits = [_hit(document, text.index("Setup."), text.index("Greedy berth") + 20)]  # the announcement, one item
    default = plan(Analysis(question_type="extractive", info_pattern="same", evidence="yes"), Settings())
    rag = plan(Analysis(question_type="extractive", info_pattern="same", evidence="yes"), Settings(), "rag")
    (whole,), _ = build_passages(hits, {document.doc_id: document}, default)
    assert default.recover_lists and "Queue model" in whole.text and whole.text.endswith("before 1990.")
    (cut,), _ = build_passages(hits, {document.doc_id: document}, rag)
    assert not rag.recover_lists and "Queue model" not in cut.text
