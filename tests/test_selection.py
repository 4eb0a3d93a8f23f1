"""Evidence selection: the best chunks within a token budget, and LLM-free bridge expansion."""

from __future__ import annotations

from longqa.retrieval.documents import Chunk, ScoredChunk
from longqa.retrieval.selection import with_bridges, within_budget


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
        "Where was the director of X born?\nX is directed by Yves",
        "Where was the director of X born?\nX premiered in 1990",
    ]
    assert [r.chunk.index for r in chosen] == [0, 1, 7, 2] and bridged == 2
    assert sum(r.chunk.n_tokens for r in chosen) <= 400
    plain, none = with_bridges("q", search, budget=400, seeds=0, per_seed=1, bridge_share=0.3)
    assert [r.chunk.index for r in plain] == [0, 1, 2, 3] and none == 0
