"""Evidence selection: the best chunks within a token budget, and LLM-free bridge expansion."""

from __future__ import annotations

from longqa.retrieval.documents import Chunk, ScoredChunk
from longqa.retrieval.search.selection import bridge_query, with_bridges, within_budget


def chunk(i: int, tokens: int, text: str = "", score: float = 1.0) -> ScoredChunk:
    c = Chunk(
        doc_id="d", index=i, start=10 * i, end=10 * i + 5, paragraph_ids=[i], n_tokens=tokens, text=text or f"chunk {i}"
    )
    return ScoredChunk(chunk=c, score=score, granularity=150)


def test_within_budget_takes_rank_order_and_passes_over_what_does_not_fit():
    ranked = [chunk(0, 100), chunk(1, 120), chunk(2, 90), chunk(3, 30), chunk(4, 10)]
    assert [r.chunk.index for r in within_budget(ranked, 250)] == [0, 1, 3]  # 2 does not fit; 3 does
    assert [r.chunk.index for r in within_budget(ranked, 350)] == [0, 1, 2, 3, 4]
    assert within_budget(ranked, 50) == [ranked[3], ranked[4]]
    assert within_budget([], 500) == []
    # beside chunks already taken: none twice, and their tokens count
    assert [r.chunk.index for r in within_budget(ranked, 250, taken=[ranked[1]])] == [0, 3]  # 120+100+30


def test_bridge_expansion_follows_the_best_chunks():
    """Q names film X; chunk 0 says X was directed by Yves; the second hop (chunk 7, about Yves) only
    turns up when the search is seeded with chunk 0."""
    first = [chunk(0, 100, "X is directed by Yves"), chunk(1, 100, "X premiered in 1990"), chunk(2, 100), chunk(3, 100)]
    second_hop = chunk(7, 100, "Yves was born in Lyon")
    queries: list[str] = []

    def search(query: str) -> list[ScoredChunk]:
        queries.append(query)
        return [first[0], second_hop, *first[1:]] if "Yves" in query else first

    chosen, bridged = with_bridges(
        "Where was the director of X born?", search, budget=400, seeds=2, per_seed=1, bridge_share=0.3
    )
    assert queries[0] == "Where was the director of X born?"
    assert queries[1:] == [
        "Where was the director of X born?\nYves",  # the seed's names the question does not say
        "Where was the director of X born?\nX premiered in 1990",  # it says none new: its whole text
    ]
    assert [r.chunk.index for r in chosen] == [0, 1, 7, 2] and bridged == 2
    assert sum(r.chunk.n_tokens for r in chosen) <= 400
    queries.clear()
    by_text, _ = with_bridges(
        "Where was the director of X born?", search, budget=400, seeds=2, per_seed=1, bridge_share=0.3, by_names=False
    )
    assert queries[1] == "Where was the director of X born?\nX is directed by Yves" and by_text == chosen
    plain, none = with_bridges("q", search, budget=400, seeds=0, per_seed=1, bridge_share=0.3)
    assert [r.chunk.index for r in plain] == [0, 1, 2, 3] and none == 0


def test_bridge_searches_run_at_once_choose_what_one_after_the_other_chose():
    """`search_all` gets every bridge query in seed order; the seeds still pick in that order."""
    first = [chunk(0, 100, "X is directed by Yves"), chunk(1, 100, "X premiered in Lyon"), chunk(2, 100)]
    overlap = [chunk(7, 100, "Yves"), chunk(8, 100, "Lyon")]  # both seeds find 7 first: the second takes 8

    def search(query: str) -> list[ScoredChunk]:
        return overlap + first if "\n" in query else first

    batches: list[list[str]] = []

    def search_all(queries: list[str]) -> list[list[ScoredChunk]]:
        batches.append(queries)
        return [search(q) for q in reversed(queries)][::-1]  # answered out of order, returned in order

    args = ("Where was the director of X born?", search, 500, 2, 1, 0.4)
    together, bridged = with_bridges(*args, search_all=search_all)
    assert batches == [["Where was the director of X born?\nYves", "Where was the director of X born?\nLyon"]]
    assert together == with_bridges(*args)[0] and [r.chunk.index for r in together] == [0, 1, 2, 7, 8]
    assert bridged == 2


def test_a_bridge_query_is_the_question_plus_the_names_the_seed_adds():
    question = "Who is the sibling of the performer of Decade?"
    seed = (
        "Decade (Neil Young album)\nDecade is a compilation album by Canadian musician Neil Young, released "
        "in 1976 on Reprise Records. It was his first compilation album."
    )
    assert bridge_query(question, seed) == f"{question}\nNeil Young; Canadian; Reprise Records"
    lower = "a seed in lower case says no name"
    assert bridge_query(question, lower) == f"{question}\n{lower}"


def test_a_bridge_search_by_the_seeds_names_finds_the_hop_its_whole_text_misses(make_store):
    """The seed (Decade) shares its many words with other compilation albums; only its names lead to
    the second hop (Scott Young, whose passage names Neil Young), which the question never names."""
    from longqa.retrieval import Searcher, document_from_text

    albums = "\n\n".join(
        f"Passage {i}:\n{name} (album)\n{name} is a {kind} album released in 1976, collecting {what} recorded "
        "between 1966 and 1976."
        for i, (name, kind, what) in enumerate(
            [
                ("Greatest Hits", "compilation", "singles"),
                ("Anthology", "compilation", "album tracks"),
                ("Retrospective", "double", "singles and album tracks"),
                ("Collected", "compilation", "songs and singles"),
            ],
            2,
        )
    )
    text = (
        "Passage 1:\nDecade (Neil Young album)\nDecade is a compilation album by Canadian musician Neil Young, "
        "released in 1976 on Reprise Records. The compilation album collects songs, singles and album tracks "
        f"recorded between 1966 and 1976.\n\n{albums}\n\nPassage 6:\nScott Young (writer)\nScott Young was a "
        "Canadian journalist. His son Neil Young is a musician and his daughter Astrid Young a singer."
    )
    searcher = Searcher(make_store(), [document_from_text(text)])
    question = "Who is the sibling of the performer of Decade?"

    def search(query: str) -> list[ScoredChunk]:
        return searcher.search(query, k=10, granularity=60, mode="bm25")

    assert "Decade" in search(question)[0].chunk.text  # the first hop: the seed
    shown = {
        by_names: [r.chunk.text for r in with_bridges(question, search, 120, 1, 1, 0.5, by_names=by_names)[0]]
        for by_names in (True, False)
    }
    assert any("Scott Young" in t for t in shown[True])
    assert not any("Scott Young" in t for t in shown[False])
