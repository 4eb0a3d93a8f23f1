"""Heading links: a passage is named by its title line; a question or a chunk that names the title
points at the passage (retrieval/links.py), and the evidence selection follows those links."""

from __future__ import annotations

from longqa.retrieval import Searcher, document_from_text
from longqa.retrieval.chunking import chunk_document
from longqa.retrieval.links import DocumentLinks, name_of, words
from longqa.retrieval.selection import led_by, with_bridges
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


def test_document_links_name_each_chunk_by_its_titles_and_keep_its_body_apart():
    document = document_from_text(PASSAGES)
    chunks = chunk_document(document, 40)
    links = DocumentLinks.build(document, chunks)
    by_name = {" ".join(n): [chunks[i].text.split("\n")[1] for i in idx] for n, idx in links.names.items()}
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
