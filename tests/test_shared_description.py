"""Whether two both are one kind, read from the sentences introducing each (llm/shared_attribute.py,
nodes/compare.py): the question forms, the introductions, what leaves it undecided, and the node in the graph (the
scripted model answers where the passages do not decide; no reply of it is a model's). Made-up people and things."""

from __future__ import annotations

import time

import pytest

from longqa.llm.shared_attribute import MAX_QUESTION, asked, introduction, shared

PEOPLE = [
    {
        "id": "E1",
        "text": "The old mill closed in 1961.\n\nPassage 84:\nTomas Reyes\nTomas Reyes, also known as Tomás Reyes "
        "Vidal (1 February 1914 – 20 February 1994), was a Chilean film and television director. He is "
        "remembered as an actor too.",
    },
    {
        "id": "E2",
        "text": "Passage 3:\nIlse Varga\nIlse Varga (born September 3, 1963) is a Hungarian independent film "
        "screenwriter and director known for her dark satire.",
    },
    {"id": "E3", "text": "Passage 9:\nOla Brandt\nOla Brandt (born 1950) is a Norwegian editor. He directed once."},
    {"id": "E4", "text": "Passage 12:\nKelso Hum\nKelso Hum is an American rock band from Dayton, formed in 2001."},
    {"id": "E5", "text": "Passage 13:\nNine Larks\nNine Larks is an American Christian rock band from Ohio."},
]


@pytest.mark.parametrize(
    "question,names,kind",
    [
        ("Were Tomas Reyes and Ilse Varga both directors?", ["Tomas Reyes", "Ilse Varga"], "directors"),
        ("Are Kelso Hum and Nine Larks both rock bands?", ["Kelso Hum", "Nine Larks"], "rock bands"),
        ("Were both Tomas Reyes and Ilse Varga film directors?", ["Tomas Reyes", "Ilse Varga"], "film directors"),
        ("Are Kelso Hum and Nine Larks, both a band?", ["Kelso Hum", "Nine Larks"], "band"),
        ("Are both Kelso Hum, and Nine Larks described as a band?", ["Kelso Hum", "Nine Larks"], "described as a band"),
    ],
)
def test_the_question_forms_that_ask_for_a_shared_kind(question, names, kind):
    assert asked(question) == (names, kind)


@pytest.mark.parametrize(
    "question",
    [
        "Were Tomas Reyes and Ilse Varga directors?",  # no "both": each may be asked apart
        "Are Kelso Hum and Nine Larks both from the same state?",  # a relation, not a kind
        "Are Kelso Hum and Nine Larks both located in Ohio?",  # a place
        "Have Tomas Reyes and Ilse Varga both been members of a jury?",  # not "are/were ... both D"
        "Which of Tomas Reyes and Ilse Varga are both directors?",  # not a yes/no question
        "Are Kelso Hum and Kelso Hum both bands?",  # one name twice
        "Are Kelso Hum and Nine Larks both very loud and long running rock bands?",  # a claim, not a kind
        "Are both Kelso Hum and nine larks bands?",  # the second name not written as a name
    ],
)
def test_other_questions_are_not_read(question):
    assert asked(question) is None


def test_yes_where_both_introductions_say_every_word_of_the_kind():
    found = shared("Were Tomas Reyes and Ilse Varga both directors?", PEOPLE)
    assert found is not None and found.answer == "yes" and found.description == "directors"
    assert found.introductions["Tomas Reyes"] == (
        "E1",
        "Tomas Reyes, also known as Tomás Reyes Vidal (1 February 1914 – 20 February 1994), was a Chilean film and "
        "television director.",
    )
    assert found.introductions["Ilse Varga"][0] == "E2"
    assert shared("Were both Tomas Reyes and Ilse Varga film directors?", PEOPLE).answer == "yes"


@pytest.mark.parametrize(
    "question",
    [
        "Were Tomas Reyes and Ola Brandt both directors?",  # "He directed once." is not in the introduction
        "Were Tomas Reyes and Ilse Varga both actors?",  # the second sentence says "actor": not the introduction
        "Are Kelso Hum and Nine Larks both Christian rock bands?",  # one word left out: may be said elsewhere
        "Were Tomas Reyes and Ada Byron both directors?",  # no passage is titled by one of them
    ],
)
def test_undecided_never_no(question):
    assert shared(question, PEOPLE) is None


def test_the_introduction_is_the_first_sentence_after_the_title():
    """A passage merged after another ("The old mill ... Passage 84:") and a name written otherwise in its sentence."""
    assert introduction("Tomas Reyes", PEOPLE)[1].startswith("Tomas Reyes, also known as")
    assert introduction("Ilse Varga Prize", PEOPLE) is None


def test_hostile_text_is_read_without_failing():
    started = time.perf_counter()
    assert asked("Are " + "Kelso and " * 500 + "both bands?") is None  # over MAX_QUESTION
    near = "Are " + "Kelso and " * ((MAX_QUESTION - 30) // 10) + "Nine both bands?"  # many "and"s, under the cap
    assert len(near) <= MAX_QUESTION and asked(near) is None  # a "name" over 120 characters: not read
    huge = [{"id": "E1", "text": "Passage 1:\nKelso Hum\n" + "Kelso Hum is a band " * 50000}]
    assert shared("Are Kelso Hum and Nine Larks both bands?", huge) is None
    assert time.perf_counter() - started < 5  # bounded work, not a speed target


# -- the node in the graph -----------------------------------------------------------------------------------------

BIOS = "\n\n".join(p["text"] for p in PEOPLE)


def test_the_introductions_answer_and_no_model_writes_it(run_graph, scripted):
    name, model = scripted({"generator": "No"})
    out = run_graph("Were Tomas Reyes and Ilse Varga both directors?", model=name, inputs={"texts": [BIOS]})
    assert out["status"] == "answered" and out["answer"] == "yes"
    assert "compare" in out["route"] and "generator" not in model.calls
    assert out["grounding"]["method"] == "computed" and out["grounding"]["verdict"] == "supported"
    cited = "\n".join(c["text"] for c in out["citations"])
    assert "television director" in cited and "screenwriter and director" in cited
    assert out["calculation"]["value"] is None and out["calculation"]["expression"].startswith("both directors: ")


def test_undecided_the_generator_answers(run_graph, scripted):
    name, model = scripted({"generator": "No"})
    out = run_graph("Were Tomas Reyes and Ola Brandt both directors?", model=name, inputs={"texts": [BIOS]})
    assert "compare" in out["route"] and "generator" in model.calls
    assert any(t.startswith("compare: the passages do not decide") for t in out["trace"]), out["trace"]


@pytest.mark.parametrize("settings", [{"strategy": "rag"}, {"shared_description": "off"}])
def test_the_papers_baselines_and_the_setting_off_do_not_compare(run_graph, scripted, settings):
    name, model = scripted({"generator": "No"})
    out = run_graph("Were Tomas Reyes and Ilse Varga both directors?", model=name, inputs={"texts": [BIOS]}, **settings)
    assert "compare" not in out["route"] and "generator" in model.calls
