"""The CoT-guided filter's survivors (contracts/verdicts.py kept_evidence): where the question was split, each
sub-question's best chunk is read whatever the filter said (measured with the 1.5B model: the filter dropped one
side of a comparison, evals/README ninth round)."""

from __future__ import annotations

from longqa.contracts.verdicts import best_of_every_question, kept_evidence

A, B = "When was Tomas Reyes born?", "When was Ilse Varga born?"


def _passage(id: str, start: int, end: int, query: str) -> dict:
    return {
        "id": id,
        "doc_id": "d",
        "source": "s",
        "start": start,
        "end": end,
        "text": id,
        "score": 1.0,
        "query": query,
    }


def _hit(query: str, start: int, end: int, score: float) -> dict:
    return {"doc_id": "d", "start": start, "end": end, "score": score, "query": query, "text": "..."}


EVIDENCE = [_passage("E1", 0, 500, B), _passage("E2", 1000, 1200, A), _passage("E3", 2000, 2600, A)]
# E3 holds A's best chunk and a weak chunk of B's; B's best chunk is in E1
HITS = [_hit(A, 2000, 2300, 0.9), _hit(A, 1000, 1200, 0.6), _hit(B, 0, 500, 0.86), _hit(B, 2300, 2600, 0.5)]


def _verdicts(*kept: str) -> list[dict]:
    return [{"evidence_id": e["id"], "keep": e["id"] in kept, "parsed": True} for e in EVIDENCE]


def test_a_sub_question_whose_best_chunk_the_filter_dropped_gets_it_back():
    kept, note = kept_evidence(EVIDENCE, _verdicts("E3"), HITS)
    assert [e["id"] for e in kept] == ["E1", "E3"]  # in the evidence's order
    assert note == f"filter: kept 1 of 3 chunk(s); E1 kept too, the best for {B!r}"


def test_nothing_is_added_where_the_filter_kept_each_best_or_the_question_was_not_split():
    kept, note = kept_evidence(EVIDENCE, _verdicts("E1", "E3"), HITS)
    assert [e["id"] for e in kept] == ["E1", "E3"] and note == "filter: kept 2 of 3 chunk(s)"
    one_query = [h for h in HITS if h["query"] == A]
    kept, note = kept_evidence(EVIDENCE, _verdicts("E2"), one_query)
    assert [e["id"] for e in kept] == ["E2"] and note == "filter: kept 1 of 3 chunk(s)"
    assert kept_evidence(EVIDENCE, _verdicts("E2"))[0] == [EVIDENCE[1]]  # no hits given: the filter's word


def test_none_kept_still_keeps_all_and_no_verdicts_is_no_filter():
    assert kept_evidence(EVIDENCE, _verdicts(), HITS) == (EVIDENCE, "filter: no chunk passed; keeping all 3")
    assert kept_evidence(EVIDENCE, [], HITS) == (EVIDENCE, None)


def test_the_best_passage_of_each_query():
    assert best_of_every_question(EVIDENCE, HITS) == {"E3": A, "E1": B}
    assert best_of_every_question(EVIDENCE, []) == {}
    assert best_of_every_question([], HITS) == {}  # a best chunk no passage holds adds nothing
