"""Hybrid search: min-max fusion on hand-computed cases, the three modes, exact tokens, validation,
several documents, and BM25-only search that never embeds."""

from __future__ import annotations

import pytest

from longqa.contracts.plan import weights_toward
from longqa.contracts.settings import Settings
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.search import Searcher, fuse, min_max

from .conftest import RARE_CODE, harbor_text

G = 40  # the session index (conftest.harbor_index) is built at this granularity


# -- fusion arithmetic ---------------------------------------------------------------------------------


def test_min_max_scales_to_unit_range():
    assert min_max({("d", 0): 2.0, ("d", 1): 4.0, ("d", 2): 3.0}) == {("d", 0): 0.0, ("d", 1): 1.0, ("d", 2): 0.5}
    assert min_max({}) == {}


def test_min_max_equal_scores_have_no_say():
    assert min_max({("d", 0): 0.3, ("d", 1): 0.3}) == {("d", 0): 0.0, ("d", 1): 0.0}
    assert min_max({("d", 5): -2.0}) == {("d", 5): 1.0}  # a list of one: its best


def test_fuse_3_to_2_with_items_missing_from_one_list():
    dense = {"a": 0.9, "b": 0.5, "c": 0.1}  # normalised: a 1, b 0.5, c 0
    sparse = {"a": 2.0, "b": 10.0, "d": 6.0}  # normalised: a 0, b 1, d 0.5
    fused = dict(fuse(dense, sparse, (3.0, 2.0)))
    assert fused == pytest.approx({"a": 3 / 5, "b": (3 * 0.5 + 2 * 1) / 5, "c": 0.0, "d": 2 * 0.5 / 5})
    assert [k for k, _ in fuse(dense, sparse, (3.0, 2.0))] == ["b", "a", "d", "c"]


def test_fuse_1_to_1():
    ranked = fuse({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 5.0, "c": 2.5}, (1.0, 1.0))
    assert ranked == [("a", 0.5), ("b", 0.5), ("c", 0.25)]  # a tie keeps key order


def test_fuse_weights_decide_the_winner():
    dense, sparse = {"sem": 1.0, "exact": 0.0}, {"sem": 0.0, "exact": 9.0}
    settings = Settings()
    assert fuse(dense, sparse, weights_toward("semantic", settings))[0] == ("sem", pytest.approx(0.6))
    assert fuse(dense, sparse, weights_toward("exact", settings))[0] == ("exact", pytest.approx(0.6))


def test_fuse_all_equal_lists():
    ranked = dict(fuse({"a": 0.4, "b": 0.4}, {"a": 7.0}, (1.0, 1.0)))
    assert ranked == {"a": 0.5, "b": 0.0}  # the equal dense list has no say: BM25 alone ranks


def test_fuse_one_empty_list():
    assert fuse({}, {"x": 3.0, "y": 1.0}, (0.0, 1.0)) == [("x", 1.0), ("y", 0.0)]
    assert fuse({}, {}, (1.0, 1.0)) == []


def test_weights_toward_patterns():
    settings = Settings()
    assert weights_toward("semantic", settings) == (3.0, 2.0)
    assert weights_toward("exact", settings) == (2.0, 3.0)
    assert weights_toward("same", settings) == (1.0, 1.0)


# -- searching the session index ----------------------------------------------------------------------


@pytest.fixture
def searcher(harbor_index):
    store, document = harbor_index
    return Searcher(store, [document])


def test_dense_mode_has_only_dense_scores(searcher):
    results = searcher.search("Which storm closed the harbor entrance?", k=4, granularity=G, mode="dense")
    assert len(results) == 4
    assert "storm" in results[0].chunk.text
    assert all(r.dense_score is not None and r.bm25_score is None for r in results)
    assert results[0].score == 1.0  # min-max: the best dense hit
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert [r.dense_score for r in results] == sorted((r.dense_score for r in results), reverse=True)
    assert all(r.granularity == G and r.source == "harbor.md" for r in results)


def test_bm25_mode_has_only_bm25_scores_and_finds_exact_tokens(searcher):
    results = searcher.search(f"ticket {RARE_CODE}", k=3, granularity=G, mode="bm25")
    assert RARE_CODE in results[0].chunk.text
    assert all(r.bm25_score is not None and r.bm25_score > 0 and r.dense_score is None for r in results)
    assert results[0].bm25_score == max(r.bm25_score for r in results)


def test_bm25_mode_with_no_matching_term_returns_nothing(searcher):
    assert searcher.search("what is it", granularity=G, mode="bm25") == []  # stop words only


def test_hybrid_mode_has_both_scores_where_available(searcher):
    results = searcher.search("winter storm harbor entrance closed", k=10, granularity=G, depth=10)
    assert len(results) == 10
    assert "storm" in results[0].chunk.text
    assert any(r.dense_score is not None and r.bm25_score is not None for r in results)
    assert all(r.dense_score is not None or r.bm25_score is not None for r in results)
    assert all(0.0 <= r.score <= 1.0 for r in results)
    # a chunk ranked by both retrievers has its raw component scores, not the normalised ones
    both = next(r for r in results if r.dense_score is not None and r.bm25_score is not None)
    assert both.bm25_score > 1.0 or both.dense_score < 1.0


def test_hybrid_with_zero_dense_weight_ranks_like_bm25(searcher):
    query = f"faulty winch {RARE_CODE}"
    hybrid = searcher.search(query, k=3, granularity=G, weights=(0.0, 1.0))
    bm25 = searcher.search(query, k=3, granularity=G, mode="bm25")
    assert bm25, "the code's chunk has BM25 terms"
    assert [r.chunk.index for r in hybrid[: len(bm25)]] == [r.chunk.index for r in bm25]
    assert [r.score for r in hybrid[: len(bm25)]] == pytest.approx([r.score for r in bm25])
    assert all(r.score == 0.0 for r in hybrid[len(bm25) :]), "dense-only hits weigh nothing here"
    assert RARE_CODE in hybrid[0].chunk.text and hybrid[0].dense_score is not None


def test_bm25_finds_a_bare_rare_code(searcher):
    [top] = searcher.search(RARE_CODE, k=1, granularity=G, mode="bm25")
    assert RARE_CODE in top.chunk.text
    assert top.score == 1.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"k": 0}, "k and depth must be positive"),
        ({"k": -3}, "k and depth must be positive"),
        ({"depth": 0}, "k and depth must be positive"),
    ],
)
def test_k_and_depth_validation(searcher, kwargs, message):
    with pytest.raises(ValueError, match=message):
        searcher.search("storm", granularity=G, **kwargs)


@pytest.mark.parametrize("query", ["", "   \n"])
def test_empty_query(searcher, query):
    with pytest.raises(ValueError, match="empty query"):
        searcher.search(query, granularity=G)


def test_k_larger_than_depth_still_returns_k(searcher):
    assert len(searcher.search("harbor cargo terminal", k=7, granularity=G, depth=2)) == 7


def test_searcher_needs_a_document(harbor_index):
    with pytest.raises(ValueError, match="at least one document"):
        Searcher(harbor_index[0], [])


# -- BM25-only search -----------------------------------------------------------------------------------


def test_bm25_search_at_a_new_granularity_embeds_nothing(harbor_index):
    store, document = harbor_index
    g = 52  # built nowhere else
    before = store.embedder.calls
    built = store.build(document, g, dense=False)
    results = Searcher(store, [document]).search(RARE_CODE, k=3, granularity=g, mode="bm25")
    assert built.chunked and built.embedded == 0
    assert results and all(r.dense_score is None for r in results)
    assert store.embedder.calls == before, "a BM25-only search embedded text"
    hybrid = store.build(document, g)  # a dense search needs the vectors: now, and only now, embedded
    assert not hybrid.chunked and hybrid.embedded == hybrid.index.n_units > 0
    assert store.embedder.calls == before + hybrid.index.n_units
    assert store.build(document, g).embedded == 0


# -- several documents ---------------------------------------------------------------------------------

BAKERY = (
    "# Bakery notes\n\nThe sourdough starter is fed with rye flour every morning. "
    "Ticket QK-9050 covers the broken proofing cabinet.\n\n"
    "Croissants need cold butter and three folds. The bakery opens at six.\n\n"
    "Customers asked for more seeded loaves and fewer sweet pastries.\n"
)


def test_several_documents_in_one_searcher(make_store):
    store = make_store()
    harbor = document_from_text(harbor_text(8), source="harbor.md")
    bakery = document_from_text(BAKERY, source="bakery.md")
    searcher = Searcher(store, [harbor, bakery, harbor])
    assert [d.source for d in searcher.documents] == ["harbor.md", "bakery.md"]

    top = searcher.search("QK-9050", k=1, granularity=G, mode="bm25")[0]
    assert top.source == "bakery.md" and "QK-9050" in top.chunk.text
    assert top.chunk.doc_id == bakery.doc_id
    top = searcher.search(RARE_CODE, k=1, granularity=G, mode="bm25")[0]
    assert top.source == "harbor.md" and RARE_CODE in top.chunk.text

    top = searcher.search("How often is the sourdough starter fed?", k=1, granularity=G, mode="dense")[0]
    assert top.source == "bakery.md" and "starter" in top.chunk.text
    results = searcher.search("bakery croissants and harbor storm", k=10, granularity=G)
    assert {r.source for r in results} == {"harbor.md", "bakery.md"}
    for r in results:
        document = harbor if r.source == "harbor.md" else bakery
        assert document.text[r.chunk.start : r.chunk.end] == r.chunk.text
    assert len({(r.chunk.doc_id, r.chunk.index) for r in results}) == len(results)


def test_the_library_bm25_ranks_like_rank_bm25():
    """The library's BM25 (bm25s, Lucene IDF, one sparse matrix) agrees with rank-bm25's Okapi on what
    is relevant; unknown terms give nothing, not an error."""
    from rank_bm25 import BM25Okapi

    from longqa.retrieval.bm25 import bm25_tokens
    from longqa.retrieval.index.library.library_bm25 import LibraryBM25

    docs = [f"chunk {i} about harbour cargo and cranes number {i}" for i in range(60)]
    docs[17] = "the mooring winch ticket ZX-4471 on berth seven is faulty"
    docs[42] = "winch maintenance on berth seven and the mooring lines"
    corpus = [bm25_tokens(d) for d in docs]
    okapi, ours = BM25Okapi(corpus), LibraryBM25.build(["doc"], [corpus])
    for query in ["mooring winch on berth seven", "ZX-4471", "cranes number 5"]:
        best = int(okapi.get_scores(bm25_tokens(query)).argmax())
        top = ours.top(query, 3, None)
        assert top and next(iter(top)) == ("doc", best)
    assert set(ours.top("mooring winch berth", 2, None)) == {("doc", 17), ("doc", 42)}
    assert ours.top("zebra", 5, None) == {}
