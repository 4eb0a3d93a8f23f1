"""The generator's source lists, wherever a model writes them (issue 35): taken off the answer, and
exactly the passages named are cited. The first two replies are verbatim from Qwen2.5-Coder-1.5B-Instruct."""

from __future__ import annotations

import pytest

from longqa.llm.citations import split_sources
from longqa.nodes.generate import split_citations
from tests.test_graph_io import KEEPER_Q


@pytest.mark.parametrize(
    "reply,answer,ids",
    [
        ("Valery Kritskov Sources: E3", "Valery Kritskov", ["E3"]),
        ("December 11, 1941. Sources: E1", "December 11, 1941.", ["E1"]),
        ("Paris\nSources: E1, E3", "Paris", ["E1", "E3"]),
        ("Paris\n\nSources: E1, E3\nthe model went on", "Paris", ["E1", "E3"]),
        ("Paris\nSource: E2", "Paris", ["E2"]),
        ("Paris Sources - E2, E4", "Paris", ["E2", "E4"]),
        ("Paris\nSources – E5", "Paris", ["E5"]),
        ("Paris [E3]", "Paris", ["E3"]),
        ("Paris [E1, E2]", "Paris", ["E1", "E2"]),
        ("Paris [E1][E2].", "Paris.", ["E1", "E2"]),
        ("Paris (E1; E4).", "Paris.", ["E1", "E4"]),
        ("Paris. (Sources: E1)", "Paris.", ["E1"]),
        ("Paris Sources: [E2], [E7]", "Paris", ["E2", "E7"]),
        ("Paris sources: E1 and E3", "Paris", ["E1", "E3"]),
        ("42 Sources: E1, E1", "42", ["E1"]),
        ("Answer: Paris\nSources: E2", "Paris", ["E2"]),  # the form the generator is asked for
    ],
)
def test_a_source_list_is_taken_wherever_the_model_writes_it(reply, answer, ids):
    assert split_sources(reply) == (answer, ids)


@pytest.mark.parametrize(
    "reply",
    ["The E3 expo was held in Los Angeles.", "Model E12 of the series", "Sourcebook of 1901", "Paris"],
)
def test_ids_in_the_answer_prose_are_not_sources(reply):
    assert split_sources(reply) == (reply, [])


def test_exactly_the_named_passages_are_cited():
    evidence = [{"id": f"E{i}", "text": f"passage {i}"} for i in range(1, 5)]
    answer, cited, named = split_citations("Valery Kritskov Sources: E3", evidence)
    assert (answer, [e["id"] for e in cited], named) == ("Valery Kritskov", ["E3"], True)
    # an id no passage has is ignored; with none named, every passage shown is cited (and says so)
    answer, cited, named = split_citations("Valery Kritskov Sources: E9", evidence)
    assert (answer, len(cited), named) == ("Valery Kritskov", 4, False)


def test_the_graph_cites_what_a_one_line_reply_names(run_graph, scripted):
    name, _ = scripted({"generator": "Amelie Kortsen. Sources: E1"})
    out = run_graph(KEEPER_Q, model=name, strategy="rag")
    assert out["answer"] == "Amelie Kortsen."
    assert [c["id"] for c in out["citations"]] == ["E1"]
