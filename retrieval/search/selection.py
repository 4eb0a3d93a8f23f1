"""Which of a ranked list of chunks the reader is shown: the best ones that fit a token budget, and
LLM-free bridge expansion for questions whose second hop the question itself does not name.

Budget: chunks are taken in rank order while they fit; one that does not fit is passed over and a
smaller one further down may still be taken. Measured against a fixed k (bench/evidence_budget.py),
a budget holds more of the answer at the same number of words, since it adapts to chunk sizes.

Bridge expansion: a multi-hop question names its first hop only ("the director of film X"). The
best first-pass chunks name the bridge ("X is directed by Y"), so searching again with the question
plus the names each of those chunks says (Y among them) finds the second hop ("Y was born in ...")
without a model. The names, not the chunk's whole text: its other words find passages like the seed
rather than the next hop (bench/README.md, "Bridge queries").

Heading links (retrieval/search/links.py), when given: the chunks whose heading the question names lead the
first ranking, and the chunks whose heading a seed names lead its bridge search ("X is directed by
Y" links to the passage titled Y, however little else it shares with the question).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..documents import ScoredChunk
from .links import names_in, words


def key_of(r: ScoredChunk) -> tuple[str, int]:
    """A chunk's identity in a ranking: (document, chunk index)."""
    return r.chunk.doc_id, r.chunk.index


def within_budget(results: Sequence[ScoredChunk], budget: int, taken: Sequence[ScoredChunk] = ()) -> list[ScoredChunk]:
    """The chunks of `results`, in rank order, that fit `budget` tokens beside the `taken` ones
    (already shown, and not taken again)."""
    seen = set(map(key_of, taken))
    used = sum(r.chunk.n_tokens for r in taken)
    chosen = []
    for r in results:
        key = key_of(r)
        if key in seen or used + r.chunk.n_tokens > budget:
            continue
        chosen.append(r)
        seen.add(key)
        used += r.chunk.n_tokens
    return chosen


def led_by(linked: Sequence[ScoredChunk], ranked: Sequence[ScoredChunk], limit: int | None = None) -> list[ScoredChunk]:
    """`ranked` led by (up to `limit` of) the `linked` chunks: those it ranks, in its order and
    with their scores, then the others in the order given."""
    place = {key_of(r): i for i, r in enumerate(ranked)}
    lead = sorted(linked, key=lambda r: place.get(key_of(r), len(ranked)))[:limit]
    lead = [ranked[place[key_of(r)]] if key_of(r) in place else r for r in lead]  # a ranked chunk keeps its score
    keys = set(map(key_of, lead))
    return lead + [r for r in ranked if key_of(r) not in keys]


def bridge_query(question: str, seed: str, by_names: bool = True) -> str:
    """The second hop's query: the question plus the names `seed` says that the question does not,
    or plus the seed's whole text when it says none (or when not `by_names`)."""
    asked = {w.lower() for w in words(question)}
    new = [n for n in names_in(seed) if not {w.lower() for w in words(n)} <= asked] if by_names else []
    return f"{question}\n{'; '.join(new) if new else seed}"


# (the question or a seed chunk, the ranking it came with) -> the chunks it names by their headings
Linked = Callable[[str | ScoredChunk, list[ScoredChunk]], list[ScoredChunk]]


def with_bridges(
    question: str,
    search: Callable[[str], list[ScoredChunk]],
    budget: int,
    seeds: int,
    per_seed: int,
    bridge_share: float,
    linked: Linked | None = None,
    question_links: int = 3,
    by_names: bool = True,
    search_all: Callable[[list[str]], list[list[ScoredChunk]]] | None = None,
) -> tuple[list[ScoredChunk], int]:
    """(chunks, how many of them the bridge searches found): a first pass of `question` within
    (1 - bridge_share) x budget, then, for each of its best `seeds` chunks, up to `per_seed` new
    chunks found by a bridge search from it, then the first ranking again while room is
    left, all within `budget` tokens. `search(query)` returns a ranked list; `linked(question or
    chunk, ranking)` the chunks it names by their headings: up to `question_links` of the question's
    lead the first ranking, and a seed's lead its bridge search. A bridge search's query is
    `bridge_query(question, seed, by_names)`: the question plus the seed's new names, or with
    `by_names=False` plus its whole text. `search_all(queries)` returns the bridge searches' rankings in
    order (the retrieve node runs them at once); by default they run one after the other. Each seed's
    new chunks are chosen in seed order either way, so the result is the same."""
    ranked = search(question)
    if linked is not None:
        ranked = led_by(linked(question, ranked), ranked, question_links)
    if seeds <= 0:
        return within_budget(ranked, budget), 0
    first = within_budget(ranked, int(budget * (1 - bridge_share)))
    chosen = list(first)
    seeded = first[:seeds]
    queries = [bridge_query(question, seed.chunk.text, by_names) for seed in seeded]
    rankings = search_all(queries) if search_all is not None else [search(q) for q in queries]
    for seed, found in zip(seeded, rankings, strict=True):
        if linked is not None:
            found = led_by(linked(seed, found), found)
        chosen += within_budget(found, budget, chosen)[:per_seed]
    bridged = len(chosen) - len(first)
    return chosen + within_budget(ranked, budget, chosen), bridged
