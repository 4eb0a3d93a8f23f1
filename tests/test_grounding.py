"""Answers grounded in their evidence (issue 34): the lexical check, the model's yes/no where it is
unsure, and what the graph does with an unsupported answer (Self-Route's fallback, or the honest
"the documents do not say"). Offline: the scripted model (its verdicts are not a model's)."""

from __future__ import annotations

import json

import pytest

from longqa.contracts.verdicts import is_unanswerable
from longqa.llm.grounding import lexical_support, number_values
from tests.replies import cited_answer
from tests.test_graph_io import KEEPER_Q

PASSAGES = [
    "The lighthouse keeper of Port Verrin is Amelie Kortsen. She took the post in 1,987 after the flood.",
    "The Verrin Bridge spans 842 metres across the estuary.",
]


def analyzer_reply(qtype: str) -> str:
    return json.dumps({"question-type": qtype, "info-type": "same", "containing": "yes"})


@pytest.mark.parametrize(
    "answer,verdict",
    [
        ("Amelie Kortsen", "supported"),
        ("She became keeper in 1987.", "supported"),  # "1,987" and "1987" are one value
        ("842 metres", "supported"),
        ("Paris", "unsupported"),  # a name the passages never say
        ("Johann Sebastian Bach", "unsupported"),
        ("950 metres", "unsupported"),  # a number the passages never say
        ("Amelie Kortsen, a retired naval officer from Oslo", "unsure"),  # half of it is there: ask the model
        ("Yes", "unsure"),  # nothing to look for
    ],
)
def test_the_words_of_an_answer_are_looked_for_in_its_passages(answer, verdict):
    assert lexical_support(answer, PASSAGES, KEEPER_Q).verdict == verdict


def test_words_the_question_says_prove_nothing():
    # "lighthouse keeper" is in the question: only "Oslo" is the answer's own claim, and it is missing
    found = lexical_support("The lighthouse keeper is from Oslo", PASSAGES, KEEPER_Q)
    assert found.verdict == "unsupported" and found.missing == ["oslo"]


def test_a_computed_number_is_not_declined_by_its_words():
    found = lexical_support("The difference is 145", ["Revenue was 1,200 in 2019 and 1,345 in 2020."], computed=True)
    assert found.verdict == "unsure" and "145" in found.missing
    assert number_values("1,200.0 and -3 and 12%") == {"1200", "-3", "12"}


ARCHITECT = ["Lena Varga (1931-2004) was an American architect who designed the Orrin Library."]
ARCHITECT_Q = "What is the country of citizenship of the architect of the Orrin Library?"


@pytest.mark.parametrize(
    "answer,verdict",
    [
        ("United States", "supported"),  # the passage says "American" (seen with a 0.5B model on MuSiQue)
        ("the United States of America", "supported"),
        ("America", "supported"),
        ("Canada", "unsupported"),  # another country stays another country
        ("Northern Mariana Islands", "unsupported"),  # "American" is theirs too: the most populous keeps it
    ],
)
def test_a_country_is_held_by_any_of_its_names(answer, verdict):
    assert lexical_support(answer, ARCHITECT, ARCHITECT_Q).verdict == verdict


def test_a_people_s_adjective_is_held_by_the_country_s_name():
    found = lexical_support("She was French.", ["Marie Aubel moved to France in 1950 and painted there."])
    assert found.verdict == "supported", found
    assert lexical_support("Martinique", ["a French painter"]).verdict == "unsupported"
    # ISO codes are not names here: "in", "us", "ago" and "can" are words
    assert lexical_support("India", ["He lived in us and in a flat in Leeds."]).verdict == "unsupported"
    assert lexical_support("Angola or Canada", ["It can be dated 400 million years ago."]).verdict == "unsupported"


@pytest.mark.parametrize(
    "reply",
    [
        "The passages do not mention who keeps the lighthouse.",
        "This information is not provided in the given documents.",
        "It cannot be determined from the text.",
        "There is no information about the keeper.",
        "I don't know.",
        "Unknown",
    ],
)
def test_declines_are_recognised_beyond_the_exact_word(reply):
    assert is_unanswerable(reply)


def test_an_answer_that_mentions_a_missing_detail_is_still_an_answer():
    assert not is_unanswerable("Amelie Kortsen; the passages do not mention her age, but she took the post in 1987.")
    assert not is_unanswerable("The unknown soldier is buried at Arlington.")


# -- through the graph -------------------------------------------------------------------------------


def test_an_invented_answer_falls_back_to_the_long_context(run_graph, scripted):
    name, model = scripted({"analyzer": analyzer_reply("extractive"), "generator": "Paris\nSources: E1"})
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive-precise", question_budget=0)
    assert "self_route: unsupported by its passages from retrieval: falling back to the long context" in out["trace"]
    assert out["route"][-5:] == ["ground", "self_route", "long_context", "ground", "respond"]
    # the scripted long-context reader answers from what it reads: that answer is checked and kept
    assert out["grounding"]["verdict"] == "supported" and "Amelie Kortsen" in out["answer"]
    assert out["status"] == "answered"


def test_an_invented_answer_without_a_fallback_is_declined_honestly(run_graph, scripted):
    name, _ = scripted({"analyzer": analyzer_reply("extractive"), "generator": "Paris\nSources: E1"})
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive", question_budget=0)
    assert out["status"] == "unanswerable" and out["answer"] == "unanswerable"
    assert out["grounding"]["answer"] == "Paris" and out["grounding"]["verdict"] == "unsupported"
    assert out["grounding"]["missing"] == ["pari"]
    message = out["messages"][-1].content
    assert 'the documents do not say. The model answered "Paris"' in message
    assert out["citations"], "the passages it read are shown with the decline"


def test_a_supported_answer_is_sent_out(run_graph, scripted):
    name, _ = scripted({"analyzer": analyzer_reply("extractive"), "generator": cited_answer("Amelie Kortsen")})
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive", question_budget=0)
    assert out["status"] == "answered" and out["answer"] == "Amelie Kortsen"
    assert out["grounding"]["verdict"] == "supported" and out["grounding"]["method"] == "lexical"


@pytest.mark.parametrize("supported", [True, False])
def test_where_the_words_are_unsure_the_model_decides(run_graph, scripted, supported):
    answer = cited_answer("Amelie Kortsen")

    def half_invented(prompt: str) -> str:
        name, sources = answer(prompt).split("\n")
        return f"{name}, a retired naval officer from Oslo\n{sources}"

    name, model = scripted(
        {
            "analyzer": analyzer_reply("extractive"),
            "generator": half_invented,
            "grounding": json.dumps({"supported": supported}),
        }
    )
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive", question_budget=0)
    assert "grounding" in model.calls
    assert out["grounding"]["method"] == "model"
    assert out["status"] == ("answered" if supported else "unanswerable")
    assert [r["node"] for r in out["usage"]].count("ground") == 1  # the check is on the ledger


def test_the_model_is_not_asked_when_the_budget_cannot_pay(run_graph, scripted):
    answer = cited_answer("Amelie Kortsen")
    name, model = scripted(
        {
            "analyzer": analyzer_reply("extractive"),
            "generator": lambda p: answer(p).replace("Kortsen", "Kortsen, a retired naval officer from Oslo", 1),
        }
    )
    # a budget the generator's call leaves (almost) nothing of
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive", question_budget=700)
    assert "grounding" not in model.calls
    assert out["grounding"]["verdict"] == "unsure" and out["status"] == "answered"
    assert any("leaves no room to ask the model" in t for t in out["trace"])


def test_the_papers_baselines_are_not_grounded(run_graph, scripted):
    name, _ = scripted({"generator": "Paris\nSources: E1"})
    out = run_graph(KEEPER_Q, model=name, strategy="rag")
    assert out["answer"] == "Paris" and "ground" not in out["route"] and out.get("grounding") is None
    out = run_graph(KEEPER_Q, model=name, strategy="rag", grounding="on")
    assert out["status"] == "unanswerable" and out["grounding"]["answer"] == "Paris"
