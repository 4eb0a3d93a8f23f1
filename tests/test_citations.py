"""The generator's source lists, wherever a model writes them (issue 35): taken off the answer, and
exactly the passages named are cited. The first two replies are verbatim from Qwen2.5-Coder-1.5B-Instruct."""

from __future__ import annotations

import pytest

from longqa.llm.citations import split_sources
from longqa.llm.grounding import attributed
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


def test_a_wrong_citation_is_led_by_the_passage_that_holds_the_answer():
    shown = [
        {"id": "E1", "text": "The keeper of the Marrow light was Amelie Kortsen from 1901."},
        {"id": "E2", "text": "The harbour was dredged in 1899 by the Marrowdeep."},
        {"id": "E3", "text": "Amelie Kortsen later wrote a memoir."},
    ]
    cited, added = attributed("Amelie Kortsen", [shown[1]], shown, "Who kept the Marrow light?")
    assert [e["id"] for e in cited] == ["E1", "E3", "E2"] and added == ["E1", "E3"]
    # a right citation is left as the model gave it
    assert attributed("Amelie Kortsen", [shown[2]], shown, "Who kept the light?") == ([shown[2]], [])
    # an answer no passage holds keeps the model's citation (the grounding check judges it)
    assert attributed("Ivo Brandt", [shown[1]], shown, "Who kept the light?") == ([shown[1]], [])
    # yes / no claims nothing a passage could hold
    assert attributed("Yes", [shown[1]], shown, "Was it dredged?") == ([shown[1]], [])


def _lighthouse_text() -> str:
    topics = ["tolls", "moorings", "repairs", "ferries", "markets", "schools"]
    sections = [
        f"## The {topic}\n\n"
        + " ".join(
            f"In year {n} the board reviewed the {topic} of berth {n} and approved {n * 7} crowns." for n in range(60)
        )
        for topic in topics
    ]
    sections[2] += " The lighthouse keeper of Port Verrin is Amelie Kortsen, who lit the lamp each evening."
    return "\n\n".join(sections)


def test_the_graph_cites_the_passage_holding_the_answer_when_the_reply_names_another(run_graph, scripted):
    inputs = {"question": KEEPER_Q, "texts": [_lighthouse_text()]}
    name, _ = scripted({"generator": "Amelie Kortsen. Sources: E99"})  # no id it has: every passage is cited
    shown = run_graph(model=name, strategy="rag", inputs=inputs)["citations"]
    holding = [c["id"] for c in shown if "Kortsen" in c["text"]]
    others = [c["id"] for c in shown if "Kortsen" not in c["text"]]
    assert holding and others, [c["id"] for c in shown]
    name, _ = scripted({"generator": f"Amelie Kortsen. Sources: {others[0]}"})
    out = run_graph(model=name, strategy="rag", inputs=inputs)
    assert [c["id"] for c in out["citations"]] == [*holding, others[0]]
    assert any("which the reply did not name" in line for line in out["trace"])


def _passage(pid: str, text: str) -> dict:
    return {"id": pid, "text": text, "doc_id": "d", "source": "d.txt", "start": 0, "end": len(text), "score": 1.0}


def test_an_answer_taken_from_the_extractors_paragraphs_cites_the_paragraph():
    """The generator also reads LongRAG's I_g, written from whole source paragraphs: an answer whose words
    only such a paragraph holds cites it first (measured: such MuSiQue answers were declined as unsupported
    by the chunks), so the grounding check finds it supported; without I_g nothing changes."""
    from longqa.llm.grounding import lexical_support
    from longqa.nodes.generate import _answered, extracted_from

    kept = [_passage("E1", "Kim Il-sung founded the state in 1948 and led it until 1994.")]
    paragraph = _passage("P1", "Kim Jong-il was born to Kim Il-sung and his wife Kim Jong-suk in 1941.")
    other = _passage("P2", "The Workers' Party held its congress in 1980.")
    question = "Who is the wife of Kim Il-sung?"
    state = {
        "global_info": "Kim Il-sung's wife was Kim Jong-suk.",
        "shown": [
            {**kept[0], "reader": "generate"},
            {**paragraph, "reader": "extract"},
            {**other, "reader": "extract"},
        ],
    }
    paragraphs = extracted_from(state)
    assert [p["id"] for p in paragraphs] == ["P1", "P2"] and "reader" not in paragraphs[0]
    out = _answered("Answer: Kim Jong-suk\nSources: E1", kept, [], [], question, paragraphs)
    assert [c["id"] for c in out["citations"]] == ["P1", "E1"] and "P1, which the reply did not name" in out["trace"][0]
    assert lexical_support(out["answer"], [c["text"] for c in out["citations"]], question).verdict == "supported"
    # no global information: the extractor's paragraphs were not the generator's to read
    assert extracted_from({**state, "global_info": None}) == []
    out = _answered("Answer: Kim Jong-suk\nSources: E1", kept, [], [], question, [])
    assert [c["id"] for c in out["citations"]] == ["E1"]
    # an answer a paragraph does not hold either keeps the model's citation, for the grounding check to judge
    out = _answered("Answer: Ri Sol-ju\nSources: E1", kept, [], [], question, paragraphs)
    assert [c["id"] for c in out["citations"]] == ["E1"]
    # a decline cites nothing, paragraphs or not
    assert _answered("Answer: unanswerable", kept, [], [], question, paragraphs)["citations"] == []
