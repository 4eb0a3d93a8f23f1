"""Labels a question names ("Listing 1", "Figure 3", "Table 2", "Section 4.2"): parsed exactly, found where
they are defined, and leading the search ranking over chunks that only share their stems."""

from __future__ import annotations

from longqa.retrieval.index.chunking import chunk_document
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.labels import Label, holding, labels_in
from longqa.retrieval.search.search import Searcher

G = 60


def test_labels_in_a_question():
    asked = labels_in("What is the caption of Listing 1, and what do Fig. 3 and table 2 show in § 4.2?")
    assert asked == [Label("listing", "1"), Label("figure", "3"), Label("table", "2"), Label("section", "4.2")]
    assert labels_in("Which lists are shown in section A.1 and Appendix B?") == [
        Label("section", "A.1"),
        Label("appendix", "B"),
    ]
    assert labels_in("How are tables and figures listed?") == []
    assert labels_in("Table 2 or Table 2?") == [Label("table", "2")]  # each once


def _chunks(text: str, granularity: int = G):
    document = document_from_text(text, source="paper.md")
    return document, chunk_document(document, granularity)


def test_a_caption_defines_a_label_and_a_sentence_mentions_it():
    text = (
        "Results are in Table 2 below, beside Table 21.\n\n"
        "Table 2: Accuracy of every model on the held-out set.\n\n"
        "Table 2.1: Per-class accuracy.\n\n"
        "Table 21. Timing of every model."
    )
    document, chunks = _chunks(text, 20)
    defined, mentioned = holding([Label("table", "2")], document, chunks)
    assert [chunks[i].text for i in defined] == ["Table 2: Accuracy of every model on the held-out set."]
    assert [chunks[i].text for i in mentioned] == ["Results are in Table 2 below, beside Table 21."]


def test_a_numbered_heading_defines_its_section():
    text = "4.1 Data\n\nWe read the data.\n\n4.2 Results\n\nSection 4.2 lists results.\n\n4.21 Other\n\nMore."
    document, chunks = _chunks(text, 8)
    defined, mentioned = holding([Label("section", "4.2")], document, chunks)
    assert any(chunks[i].text.startswith("4.2 Results") for i in defined)
    assert not any("4.21" in chunks[i].text or "4.1" in chunks[i].text for i in defined + mentioned)


def listing_library(paragraphs: int = 12) -> str:
    """Paragraphs about lists (BM25's "list" stem, the embedder's topic) and one that holds "Listing 1:"."""
    about_lists = [
        f"Lists, part 1 of {n}: a list keeps its items in order, and listing them one per line makes "
        f"long lists easy to read; nested lists indent their items, and a list of lists is listed the same way."
        for n in range(1, paragraphs + 1)
    ]
    caption = (
        "Listing 1: The parser's entry point reads the configuration file and returns the settings object "
        "that the scheduler consumes."
    )
    middle = paragraphs // 2 + 1
    return "\n\n".join(about_lists[:middle] + [caption] + about_lists[middle:])


def test_a_label_leads_the_ranking_that_its_stems_lose(make_store):
    store = make_store()
    searcher = Searcher(store, [document_from_text(listing_library(), source="guide.md")])
    question = "What is the caption of Listing 1?"
    for mode in ("hybrid", "bm25"):
        plain = searcher.search(question, k=20, granularity=G, mode=mode, labels=False)
        assert not plain[0].chunk.text.startswith("Listing 1:"), "the stems alone must lose, or this shows nothing"
        led = searcher.search(question, k=5, granularity=G, mode=mode)
        assert led[0].chunk.text.startswith("Listing 1:")
        assert led[0].score >= max(r.score for r in led[1:])
        assert len({r.chunk.index for r in led}) == len(led)  # the led chunk is not also further down


def test_a_question_naming_no_label_ranks_as_before(make_store):
    store = make_store()
    searcher = Searcher(store, [document_from_text(listing_library(), source="guide.md")])
    question = "How are nested lists indented?"
    assert [r.chunk.index for r in searcher.search(question, k=8, granularity=G)] == [
        r.chunk.index for r in searcher.search(question, k=8, granularity=G, labels=False)
    ]


def test_the_graph_reads_the_labelled_passage_of_a_long_library(run_graph):
    library = listing_library(120)  # ~4,000 words: more than the evidence budget holds
    caption = "Listing 1: The parser's entry point"

    def evidence(**settings) -> list[str]:
        out = run_graph("What is the caption of Listing 1?", model=None, inputs={"texts": [library]}, **settings)
        return [e["text"] for e in out["evidence"]]

    assert sum(len(t.split()) for t in evidence()) < len(library.split())
    assert any(caption in t for t in evidence())
    assert evidence(label_links=False), "the setting is one the graph takes"


def test_for_example_names_no_label():
    assert labels_in("For example 3 ships docked; which one left first?") == []


def test_in_a_library_of_many_documents_bm25_finds_the_labels_candidates(make_store):
    from longqa.retrieval.search.search import LINK_SCOPE_DOCS

    lists = "Lists, part 1 of {}: a list keeps its items in order; listing lists of lists helps list makers."
    about = [document_from_text(lists.format(n), source=f"{n}.md") for n in range(LINK_SCOPE_DOCS + 5)]
    caption = document_from_text("Listing 1: The scheduler's main loop.\n\nIt runs forever.", source="code.md")
    searcher = Searcher(make_store(), [*about, caption])
    plain = searcher.search("caption of Listing 1", k=3, granularity=G, mode="bm25", labels=False)
    assert not plain[0].chunk.text.startswith("Listing 1:")
    led = searcher.search("caption of Listing 1", k=3, granularity=G, mode="bm25")
    assert led[0].chunk.text.startswith("Listing 1:") and led[0].source == "code.md"
