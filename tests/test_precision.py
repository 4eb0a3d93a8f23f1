"""The precision stage's operators (retrieval/search/precision.py) and the joint CoT filter's reply parsing."""

from __future__ import annotations

import pytest

from longqa.nodes.cot import parse_joint
from longqa.retrieval.documents import Chunk, ScoredChunk
from longqa.retrieval.search.precision import (
    ELLIPSIS,
    gap_cut,
    is_boilerplate,
    pruned,
    without_boilerplate,
    without_redundant,
)


def scored(text: str, score: float, index: int = 0) -> ScoredChunk:
    chunk = Chunk(
        doc_id="d", index=index, start=0, end=len(text), paragraph_ids=[0], n_tokens=len(text.split()), text=text
    )
    return ScoredChunk(chunk=chunk, score=score, dense_score=None, bm25_score=None, granularity=150, source="d")


TOC = "Contents\n1 Introduction ........ 3\n2 Methods ........ 7\n3 Results ........ 12\n4 Discussion ........ 19"
PROSE = "The lighthouse keeper of Port Verrin is Amelie Kortsen, who took the post in 1998."


def test_boilerplate_is_a_table_of_contents_or_page_numbers_not_prose():
    assert is_boilerplate(TOC)
    assert is_boilerplate("12 13 14 15 16 17 18 19 20 — 21 22")
    assert not is_boilerplate(PROSE)
    assert not is_boilerplate(
        "| Year | Revenue |\n| 2019 | 1,200 |\n| 2020 | 1,450 |\nRevenue grew in 2020 on new contracts."
    )
    ranked = [scored(TOC, 0.9, 0), scored(PROSE, 0.5, 1)]
    assert [r.chunk.index for r in without_boilerplate(ranked)] == [1]
    assert without_boilerplate([scored(TOC, 0.9)]), "a ranking of boilerplate only is kept rather than emptied"


def test_a_chunk_a_better_one_already_holds_is_dropped():
    copy = scored(PROSE + " Amelie Kortsen.", 0.4, 2)
    other = scored("The harbour master is Tomas Lind.", 0.3, 3)
    kept = without_redundant([scored(PROSE, 0.9, 1), copy, other])
    assert [r.chunk.index for r in kept] == [1, 3]


def test_the_score_gap_keeps_the_chunks_near_the_best():
    ranked = [scored("a", 1.0, 0), scored("b", 0.9, 1), scored("c", 0.6, 2), scored("d", 0.3, 3)]
    assert [r.chunk.index for r in gap_cut(ranked, 0.5)] == [0, 1, 2]
    assert [r.chunk.index for r in gap_cut(ranked, 0.95)] == [0, 1]  # the first two always
    assert gap_cut(ranked, 0.0) == ranked


def test_sentence_pruning_keeps_the_first_and_the_question_s_sentences():
    text = (
        "Port Verrin is a fishing town. The bakery opens at six. The lighthouse keeper is Amelie Kortsen. "
        "Tourists visit in summer. Buses run hourly."
    )
    out = pruned(text, "Who is the lighthouse keeper?")
    gap = ELLIPSIS.strip()
    assert out == f"Port Verrin is a fishing town. {gap} The lighthouse keeper is Amelie Kortsen. {gap}"
    assert pruned("One sentence. Two sentences.", "keeper") == "One sentence. Two sentences."  # too short to prune


@pytest.mark.parametrize(
    ("reply", "thought", "cited"),
    [
        ('{"thought": "E2 names the keeper", "cite": ["E2"]}', "E2 names the keeper", {"E2"}),
        ('{"thought": "none helps", "cite": []}', "none helps", set()),
        ('{"thought": "x", "cite": ["E9", "E1"]}', "x", {"E1"}),  # an unknown label is ignored
        ("The keeper is in E3.\nCite: E3, E1", "The keeper is in E3.", {"E1", "E3"}),  # prose, still readable
        ("I am not sure, maybe?", "I am not sure, maybe?", None),  # unreadable: the caller keeps all
    ],
)
def test_the_joint_filter_reply_is_read_tolerantly(reply, thought, cited):
    assert parse_joint(reply, {"E1", "E2", "E3"}) == (thought, cited)


def test_the_precision_setting_reaches_the_graph(run_graph, scripted):
    """Off by default (measured); named operators run in retrieve and process_context."""
    question = "Who is the lighthouse keeper of Port Verrin?"
    plain = run_graph(question, model=None)
    assert plain["plan"]["precision"] == []
    pruned_out = run_graph(question, model=None, precision="sentences")
    assert pruned_out["plan"]["precision"] == ["sentences"]
    assert any("unrelated sentences left out" in line for line in pruned_out["trace"])
    words = sum(len(e["text"].split()) for e in pruned_out["evidence"])
    assert words < sum(len(e["text"].split()) for e in plain["evidence"])
    assert any("Amelie Kortsen" in e["text"] for e in pruned_out["evidence"])  # the answer's sentence stays
    gapped = run_graph(question, model=None, precision=["gap"], precision_gap=0.99)
    chunks = [int(line.split()[1]) for out in (plain, gapped) for line in out["trace"] if line.startswith("retrieve:")]
    assert chunks[1] < chunks[0], chunks  # only the chunks near the best score of each search
