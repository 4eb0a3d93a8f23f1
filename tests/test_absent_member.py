"""A "No" read from what the documents leave out (llm/absent_member.py, nodes/ground.py; issue 52): a question whether
a name belongs to a set the documents list whole, about a name they never say. Made-up corpora and names; the
subject check's decline stands for a "Yes", a sample list, a count that does not match, and a question whose only
name is missing (the shape of a question asked of another item's document)."""

from __future__ import annotations

import pytest

from longqa.llm.absent_member import absent_member, listed_set, membership
from tests.replies import cited_answer

CORPUS = (
    "Velmora is a spoken-language corpus collected in 2024 by the Harl Institute from volunteers reading donated "
    "sentences aloud. Each recording was checked by two other volunteers before it was kept.\n\n"
    "Velmora covers the following 7 languages: Quenyan, Dothric, Sindaran, Klingish, Valyrese, Lojbanic and "
    "Esperish. Quenyan and Dothric have the most hours, with over 300 hours each.\n\n"
    "The Harl Institute also hosts Ormund, a corpus of legal letters in languages such as Quenyan, Dothric and "
    "Sindaran, kept in its archive in Tessaly."
)


@pytest.mark.parametrize(
    "question,noun,count",
    [
        ("Is Arabic one of the 11 languages in CoVoST?", "languages", 11),
        ("Is Arabic one of the eleven languages in CoVoST?", "languages", 11),
        ("Was Berlin among the host cities of the games?", "cities", None),  # the noun the set is named by
        ("Are tweets in Welsh included in the datasets?", "datasets", None),
        ("Is Zulu any of the languages they test?", "languages", None),
    ],
)
def test_a_question_asking_whether_a_name_is_in_a_set(question, noun, count):
    asked = membership(question)
    assert asked is not None and asked[0] == noun and asked[1] == count


@pytest.mark.parametrize(
    "question",
    [
        "Which languages does CoVoST cover?",  # not a yes/no question
        "Is Arabic covered by CoVoST?",  # yes/no, but not asked as a member of a set
        "Is Arabic one of the 11 languages in CoVoST?" + " and" * 100,  # over MAX_QUESTION: not read
    ],
)
def test_other_questions_are_not_membership_questions(question):
    assert membership(question) is None


@pytest.mark.parametrize(
    "text,count,items",
    [
        (
            "It covers the following 3 languages: Quenyan, Dothric and Sindaran.",
            None,
            ["Quenyan", "Dothric", "Sindaran"],
        ),
        ("It covers three languages, Quenyan, Dothric and Sindaran.", None, ["Quenyan", "Dothric", "Sindaran"]),
        ("It covers languages: Quenyan (Qu), Dothric (Do), Sindaran (Si).", 3, ["Quenyan", "Dothric", "Sindaran"]),
        ("It covers languages namely Quenyan, Dothric, or Sindaran.", None, ["Quenyan", "Dothric", "Sindaran"]),
        # a sample is not the whole set; a count that does not match; no count and no announcement
        ("It covers languages such as Quenyan, Dothric and Sindaran.", None, None),
        ("It covers the following languages, including Quenyan, Dothric and Sindaran.", None, None),
        ("It covers 4 languages: Quenyan, Dothric and Sindaran.", None, None),
        ("It covers the following languages: Quenyan, Dothric and Sindaran.", 4, None),
        ("Its languages Quenyan, Dothric and Sindaran are spoken in Tessaly.", None, None),
        # two items are no list; an item of many words is prose, not an item
        ("It covers the following languages: Quenyan and Dothric.", None, None),
        (
            "It covers these languages: Quenyan, the tongue of the high elves of the western shore, and Dothric.",
            3,
            None,
        ),
        ("The weather was fine: sun, wind and rain.", 3, None),  # no sentence names the set
    ],
)
def test_a_set_listed_whole(text, count, items):
    assert listed_set("languages", count, text) == items


def _passages(*texts: str) -> list[dict]:
    return [{"id": f"E{i}", "text": t} for i, t in enumerate(texts, 1)]


def test_a_no_to_a_name_the_whole_list_leaves_out_is_kept():
    question = "Is Elvish one of the 7 languages in Velmora?"
    found = absent_member(question, "No, Elvish is not one of them.", ["Elvish"], ["Velmora"], _passages(CORPUS))
    assert found is not None and found.name == "Elvish" and found.noun == "languages" and found.passage == "E1"
    assert found.items == ("Quenyan", "Dothric", "Sindaran", "Klingish", "Valyrese", "Lojbanic", "Esperish")
    assert found.why.startswith("E1 lists the languages (Quenyan, Dothric") and 'never mention "Elvish"' in found.why


@pytest.mark.parametrize(
    "question,reply,unmentioned,said",
    [
        ("Is Elvish one of the 7 languages in Velmora?", "Yes", ["Elvish"], ["Velmora"]),  # a "Yes" is not read
        ("Is Elvish one of the 7 languages in Velmora?", "Elvish", ["Elvish"], ["Velmora"]),
        ("Is Elvish one of the 8 languages in Velmora?", "No", ["Elvish"], ["Velmora"]),  # the list is not all 8
        ("Is Elvish one of the languages of the Ormund letters?", "No", ["Elvish"], ["Ormund"]),
        # no other name the documents say: the shape of a question asked of another item's document
        ("Is Elvish one of the 7 languages?", "No", ["Elvish"], []),
        ("Is Elvish one of the 7 languages in Gondal?", "No", ["Elvish", "Gondal"], []),
        # the missing name owns the set: the question is not about whether it is a member
        ("Is Velmora one of the 7 languages in Gondal?", "No", ["Gondal"], ["Velmora"]),
    ],
)
def test_the_subject_check_stands_otherwise(question, reply, unmentioned, said):
    assert absent_member(question, reply, unmentioned, said, _passages(*CORPUS.split("\n\n"))) is None


def test_only_a_sample_in_the_passages_decides_nothing():
    sample = CORPUS.split("\n\n")[2]  # "in languages such as Quenyan, Dothric and Sindaran"
    assert (
        absent_member("Is Elvish among the languages of Ormund?", "No", ["Elvish"], ["Ormund"], _passages(sample))
        is None
    )


# -- through the graph ----------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", ["No, Elvish is not one of them", "No"])
def test_the_graph_keeps_the_no_and_cites_the_list(run_graph, scripted, reply):
    name, _ = scripted({"generator": cited_answer(reply)})
    out = run_graph("Is Elvish one of the 7 languages in Velmora?", model=name, inputs={"texts": [CORPUS]})
    assert out["status"] == "answered" and out["answer"] == reply
    grounding = out["grounding"]
    assert grounding["verdict"] == "supported" and grounding["method"] == "absence"
    assert grounding["missing"] == ["Elvish"] and "lists the languages (Quenyan" in grounding["why"]
    assert any("Lojbanic and Esperish" in c["text"] for c in out["citations"]), "the list is cited"
    assert any(t.startswith("ground: supported by what the documents leave out") for t in out["trace"])


def test_the_graph_declines_a_yes_about_a_name_the_documents_never_say(run_graph, scripted):
    name, _ = scripted({"generator": cited_answer("Yes")})
    out = run_graph("Is Elvish one of the 7 languages in Velmora?", model=name, inputs={"texts": [CORPUS]})
    assert out["status"] == "unanswerable" and out["grounding"]["method"] == "subject"
    assert 'the documents never mention "Elvish"' in out["messages"][-1].content


def test_hostile_passages_and_questions_are_bounded():
    endless = "Velmora covers the following languages: " + ", ".join(["Quenyan"] * 50_000) + " and Dothric."
    assert listed_set("languages", None, endless, owners=["Velmora"]) is None  # one sentence over MAX_SENTENCE
    assert membership("Is " + "Elvish " * 200 + "one of the 7 languages?") is None
    assert absent_member("", "No", ["Elvish"], ["Velmora"], _passages(CORPUS)) is None
    assert absent_member("Is Elvish one of the 7 languages in Velmora?", "", ["Elvish"], ["Velmora"], []) is None


def test_the_bench_finds_no_planted_question_it_would_answer(capsys):
    """bench/absent_member.py over the shared data (no model): every set and side in its table, and not one
    question asked of another item's document whose "No" the rule would keep."""
    pytest.importorskip("bench.absent_member")
    from bench import absent_member as bench
    from longqa.evals import long_contexts

    try:
        long_contexts.shared_data_dir()
    except FileNotFoundError:
        pytest.skip("../shared/data is not here")
    import sys

    argv, sys.argv = sys.argv, ["absent_member.py", "--n", "60"]
    try:
        assert bench.main() == 0
    finally:
        sys.argv = argv
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    table = {(r[0].strip(), r[1].strip()): r for r in rows if r[1].strip() in ("answerable", "planted unanswerable")}
    assert set(table) == {(s, side) for s in bench.SETS for side in ("answerable", "planted unanswerable")}
    assert all(int(table[(s, "planted unanswerable")][4]) == 0 for s in bench.SETS)
