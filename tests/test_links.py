"""Heading links: a passage is named by its title line; a question or a chunk that names the title
points at the passage (retrieval/search/links.py), and the evidence selection follows those links."""

from __future__ import annotations

from longqa.retrieval import Searcher, document_from_text
from longqa.retrieval.index.chunking import chunk_document
from longqa.retrieval.search.links import DocumentLinks, name_of, names_in, names_of, words
from longqa.retrieval.search.selection import led_by, with_bridges
from tests.test_selection import chunk

PASSAGES = """Passage 1:
Judy Lewis
Judy Lewis was an American actress and writer. She was the daughter of Clark Gable and Loretta Young.

Passage 2:
Counterfeit (band)
Counterfeit are an English punk rock band from London, formed in 2015.

Passage 3:
Clark Gable
William Clark Gable was an American film actor, often referred to as "The King of Hollywood".

Passage 4:
Harbour cranes
A counterfeit crane certificate was found at the harbour in 2019, and the cranes were inspected."""


def test_a_heading_names_what_it_titles_and_nothing_generic():
    assert name_of("Clark Gable") == ("Clark", "Gable")
    assert name_of("Elsa (Disney)") == ("Elsa",)  # the disambiguating parenthesis is not said in text
    assert name_of("## Goodwill and intangible assets") == ("Goodwill", "and", "intangible", "assets")
    assert name_of("counterfeit") is None  # lower case only: an ordinary word, not a title
    assert name_of("The Of") is None and name_of("42") is None and name_of("Al") is None


def test_a_heading_is_also_named_by_its_short_forms():
    assert names_of("Clark Gable") == [("Clark", "Gable")]
    assert names_of("The Rank Organisation") == [("The", "Rank", "Organisation"), ("Rank", "Organisation")]
    assert names_of("West Chicago, Illinois") == [("West", "Chicago", "Illinois"), ("West", "Chicago")]
    portland = names_of("Portland (community), Dodge County")
    assert portland == [("Portland", "community", "Dodge", "County"), ("Portland",)]
    assert names_of("Revenue, by segment") == [("Revenue", "by", "segment")]  # a qualifier names a place or a kind
    assert names_of("The Of") == [] and names_of("A") == []  # a short form must name something itself


def test_the_names_a_text_says():
    text = (
        "The Journal of Psychotherapy Integration is published by the American Psychological Association. "
        "He was born in Paris, France; Charles de Gaulle met the Board of Directors of the (board)."
    )
    assert names_in(text) == [
        "The Journal of Psychotherapy Integration",
        "American Psychological Association",  # "He" opens a sentence and names nothing
        "Paris",
        "France",
        "Charles de Gaulle",
        "Board of Directors",  # a connector joins capitalised words, and never ends a name
    ]
    assert names_in("in lower case only, and The, In, He") == []


def test_document_links_name_each_chunk_by_its_titles_and_keep_its_body_apart():
    document = document_from_text(PASSAGES)
    chunks = chunk_document(document, 40)
    links = DocumentLinks.build(document, chunks)
    by_name = {" ".join(n): [chunks[p[0]].text.split("\n")[1] for p in ps] for n, ps in links.names.items()}
    assert by_name["Clark Gable"] == ["Clark Gable"] and by_name["Counterfeit"] == ["Counterfeit (band)"]
    assert by_name["Passage 3"] == ["Clark Gable"]
    judy = next(i for i, c in enumerate(chunks) if "Judy Lewis was" in c.text)
    assert links.bodies[judy][:3] == ("Judy", "Lewis", "was") and "Passage" not in links.bodies[judy]  # no title line
    assert ("Judy", "Lewis") in links.carried[judy]
    # the body of Judy's passage names Clark Gable's passage, not her own
    named = links.named_in(links.bodies[judy], skip=links.carried[judy])
    assert [chunks[i].text.split("\n")[1] for i in named] == ["Clark Gable"]
    # case is kept: the harbour's "counterfeit crane" does not name the band
    harbour = next(i for i, c in enumerate(chunks) if "crane certificate" in c.text)
    assert links.named_in(links.bodies[harbour]) == []
    assert links.named_in(words("Who is younger, Judy Lewis or Clark Gable?")) == sorted(
        [judy, next(i for i, c in enumerate(chunks) if "William Clark Gable" in c.text)]
    )


def test_markdown_sections_and_heading_like_lists():
    text = (
        "# Annual report\n\n## Goodwill\n\nGoodwill rose to 4.2 million after the Delta acquisition.\n\n"
        "Revenue fell in the second half.\n\n## Delta acquisition\n\nDelta was bought in March for 9 million.\n\n"
        "- Maintenance\n- Training\n- Fuel\n\nCosts are listed above."
    )
    document = document_from_text(text)
    chunks = chunk_document(document, 20)
    links = DocumentLinks.build(document, chunks)
    carried = [sorted(" ".join(n) for n in names) for names in links.carried]
    # a section's headings name its first paragraph; a list, whose lines look like headings, names nothing
    assert carried == [["Annual report", "Goodwill"], ["Delta acquisition"], []]
    assert "Maintenance" in links.bodies[2] and "Goodwill" in links.bodies[0] and "report" not in links.bodies[0]
    # the goodwill paragraph names the acquisition's section
    assert links.named_in(links.bodies[0], links.carried[0]) == [1]
    assert links.named_in(words("What did Goodwill do after the Delta acquisition?")) == [0, 1]


def test_linked_chunks_lead_the_ranking_in_its_order_with_its_scores():
    ranked = [chunk(0, 100, score=0.9), chunk(1, 100, score=0.8), chunk(2, 100, score=0.7)]
    linked = [chunk(9, 50, score=0.0), chunk(2, 100, score=0.0), chunk(1, 100, score=0.0)]
    led = led_by(linked, ranked)
    assert [r.chunk.index for r in led] == [1, 2, 9, 0]
    assert [r.score for r in led[:2]] == [0.8, 0.7]  # a ranked chunk keeps its score
    assert [r.chunk.index for r in led_by(linked, ranked, limit=1)] == [1, 0, 2]
    assert led_by([], ranked) == ranked


def test_bridge_expansion_follows_heading_links_first():
    """The question names X's passage (ranked low); X's passage names Yves's passage, which the
    seeded search never ranks: both get in, within the budget."""
    x = chunk(5, 100, "X is a film directed by Yves")
    yves = chunk(7, 100, "Yves was born in Lyon")
    ranked = [chunk(0, 100, "films of 1990"), chunk(1, 100, "directors"), chunk(2, 100), x]
    asked: list[object] = []

    def linked(said, near):
        asked.append(said if isinstance(said, str) else said.chunk.index)
        if said == "Where was the director of X born?":
            return [x]
        return [yves] if not isinstance(said, str) and said.chunk.index == 5 else []

    chosen, bridged = with_bridges(
        "Where was the director of X born?",
        lambda q: ranked,
        budget=400,
        seeds=2,
        per_seed=1,
        bridge_share=0.5,
        linked=linked,
    )
    assert [r.chunk.index for r in chosen] == [5, 0, 7, 1] and bridged == 2
    assert asked == ["Where was the director of X born?", 5, 0]
    without, _ = with_bridges(
        "Where was the director of X born?", lambda q: ranked, budget=400, seeds=2, per_seed=1, bridge_share=0.5
    )
    assert 7 not in [r.chunk.index for r in without]


def test_searcher_follows_links_across_the_documents_of_a_library(make_store):
    store = make_store()
    head, tail = PASSAGES.split("\n\nPassage 3:")
    judy, gable = document_from_text(head), document_from_text("Passage 3:" + tail)
    searcher = Searcher(store, [judy, gable])
    searcher.indexes(40, dense=False)
    hits = searcher.named_in(40, "What was the nickname of Clark Gable?")
    assert [h.chunk.doc_id for h in hits] == [gable.doc_id] and hits[0].score == 0.0
    seed = next(r for r in searcher.search("Judy Lewis actress", k=3, granularity=40, mode="bm25"))
    assert seed.chunk.doc_id == judy.doc_id
    linked = searcher.named_in(40, seed)
    assert [h.chunk.doc_id for h in linked] == [gable.doc_id]
    assert "King of Hollywood" in linked[0].chunk.text
    assert searcher.named_in(40, "a question that names no title") == []


def test_a_name_that_titles_several_passages_points_at_the_best_ranked(make_store):
    text = (
        "Passage 1:\nLittle Shop of Horrors (film)\nLittle Shop of Horrors is a 1986 musical film by Frank Oz.\n\n"
        "Passage 2:\nLittle Shop of Horrors (musical)\nLittle Shop of Horrors is a musical with lyrics by "
        "Howard Ashman.\n\nPassage 3:\nBe Our Guest\nBe Our Guest is a song written by Howard Ashman."
    )
    store = make_store()
    document = document_from_text(text)
    searcher = Searcher(store, [document])
    searcher.indexes(40, dense=False)
    chunks = store.index(document, 40, dense=False).chunks
    assert len(chunks) == 3
    links = DocumentLinks.build(document, chunks)
    question = 'Who wrote lyrics for both "Little Shop of Horrors" and the song "Be Our Guest"?'
    assert links.mentions(words(question)) == {
        ("Little", "Shop", "of", "Horrors"): [[0], [1]],
        ("Be", "Our", "Guest"): [[2]],
    }
    # unranked: the first passage of each name; ranked: the best ranked one
    assert [h.chunk.index for h in searcher.named_in(40, question)] == [0, 2]
    ranking = [chunk(2, 10), chunk(1, 10), chunk(0, 10)]
    ranking = [r.model_copy(update={"chunk": chunks[r.chunk.index]}) for r in ranking]
    assert sorted(h.chunk.index for h in searcher.named_in(40, question, ranking)) == [1, 2]


def test_over_a_large_library_links_stay_within_the_ranked_documents(make_store, monkeypatch):
    """Above LINK_SCOPE_DOCS documents no question reads every document's titles: links are followed
    within the documents of the ranking (and the seed's own)."""
    import longqa.retrieval.search.search as search

    store = make_store()
    head, tail = PASSAGES.split("\n\nPassage 3:")
    judy, gable = document_from_text(head), document_from_text("Passage 3:" + tail)
    searcher = Searcher(store, [judy, gable])
    searcher.indexes(40, dense=False)
    monkeypatch.setattr(search, "LINK_SCOPE_DOCS", 1)
    question = "What was the nickname of Clark Gable?"
    assert searcher.named_in(40, question) == []  # nothing ranked: nothing read
    ranked = searcher.search("Clark Gable King of Hollywood", k=2, granularity=40, mode="bm25")
    assert [h.chunk.doc_id for h in searcher.named_in(40, question, ranked)] == [gable.doc_id]
    seed = next(r for r in searcher.search("Judy Lewis actress", k=3, granularity=40, mode="bm25"))
    assert searcher.named_in(40, seed, [seed]) == []  # Gable's document is neither ranked nor the seed's
    assert [h.chunk.doc_id for h in searcher.named_in(40, seed, ranked)] == [gable.doc_id]


def harbour_library() -> str:
    """30 reviews that say the question's words (and the author's name) more often than either hop does."""
    import random

    parts = [
        f"Review {i}\nReview {i} of Quiet Harbour asks where the author was born, and whether the novel's harbour is "
        f"the one Mara Tellen knew. The reviewer, writing in {1950 + i}, thinks the author Mara Tellen was born by "
        f"the sea, and that every reader of Quiet Harbour can hear it; the review ran to {i + 3} pages in issue "
        f"{20 + i} of the magazine, beside {i + 2} letters from readers who were born in harbour towns."
        for i in range(30)
    ]
    parts.append("Quiet Harbour\nQuiet Harbour is a 1952 novel by Mara Tellen about a lighthouse keeper.")
    parts.append(
        "Mara Tellen\nShe grew up in Bergen, Norway, where she had been born in 1921, and taught school there."
    )
    random.Random(0).shuffle(parts)
    return "\n\n".join(f"Passage {i}:\n{p}" for i, p in enumerate(parts, 1))


def test_the_graph_follows_both_hops_by_their_titles_and_not_without_links(run_graph):
    """No model: the question names the novel's passage, the novel's passage names the author's; the
    reviews outrank both hops in every search, so only the links bring them in."""
    question = "Where was the author of Quiet Harbour born?"
    runs = {
        on: run_graph(question, model=None, inputs={"texts": [harbour_library()]}, heading_links=on)
        for on in (True, False)
    }
    for final in runs.values():
        assert final["status"] == "evidence-only"
    shown = {on: " ".join(e["text"] for e in final["evidence"]) for on, final in runs.items()}
    assert "lighthouse keeper" in shown[True] and "Bergen" in shown[True]
    assert "lighthouse keeper" not in shown[False] and "Bergen" not in shown[False]
    import re

    spent = [int(m.group(1)) for t in runs[True]["trace"] for m in [re.search(r"\((\d+) of 900 tokens", t)] if m]
    assert spent and spent[0] <= 900  # the links take places within the same budget
