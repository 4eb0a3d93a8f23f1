"""Which of two came first, read from the dates (llm/comparison.py, nodes/compare.py): the question forms, the
dates as passages write them, what leaves it undecided, and the node in the graph (the scripted model answers
where the dates do not decide; no reply of it is a model's)."""

from __future__ import annotations

import pytest

from longqa.llm.comparison import When, asked, compared, date_of

PEOPLE = [
    {"id": "E1", "text": "Passage 3:\nIlse Varga\nIlse Varga (born September 3, 1963) is a Hungarian film editor."},
    {
        "id": "E2",
        "text": "Passage 84:\nTomas Reyes\nTomas Reyes (1 February 1914 – 20 February 1994) was a Chilean director "
        "who gained a following for his horror films.\n\nPassage 85:\nHarbour Lights\nHarbour Lights is a 1957 film.",
    },
    {"id": "E3", "text": "Passage 9:\nIlse Varga Prize\nThe Ilse Varga Prize was established in 2011 in Pécs."},
]
EVENTS = [
    {"id": "E1", "text": "Passage 1:\nSiege of Arlen\nThe Siege of Arlen was fought May 31 – June 12, 1864, in Arlen."},
    {"id": "E2", "text": "Passage 2:\nBattle of Dunmore\nThe Battle of Dunmore was fought August 28–30, 1862."},
    {"id": "E3", "text": "Passage 3:\nKelso Market\nKelso Market is a public market. It opened August 17, 1907."},
    {"id": "E4", "text": "Passage 4:\nBrannock Creamery\nBrannock Creamery was founded in 2003 by a cheesemaker."},
]


@pytest.mark.parametrize(
    "question,options,which",
    [
        ("Who was born first, Tomas Reyes or Ilse Varga?", ["Tomas Reyes", "Ilse Varga"], "earlier"),
        ("Who is younger, Tomas Reyes, or Ilse Varga?", ["Tomas Reyes", "Ilse Varga"], "later"),
        ("Which band released its first album first, Kelso Band or Arlen Band?", ["Kelso Band", "Arlen Band"], None),
        ("Between two editors Ilse Varga and Tomas Reyes, who is older?", ["Ilse Varga", "Tomas Reyes"], "earlier"),
        ("Which battle, the Siege of Arlen, or the Battle of Dunmore, was fought first?", None, "earlier"),
        ("Which university is older: University of Leeds, Arlen or Kelso College?", None, "earlier"),
        (
            "Which opened first, Kelso Market or Brannock Creamery was founded?",
            ["Kelso Market", "Brannock Creamery"],
            None,
        ),
    ],
)
def test_the_question_forms_that_offer_two_options(question, options, which):
    found = asked(question)
    assert found is not None
    if options:
        assert found[0] == options
    assert found[1] == (which or "earlier")


@pytest.mark.parametrize(
    "question",
    [
        "Who was the director of Harbour Lights?",
        "Who directed more films, Tomas Reyes or Ilse Varga?",  # no date asked
        "Which is older and younger, Tomas Reyes or Ilse Varga?",  # both directions: not a comparison it can read
        "Which market closed first, Kelso Market or Brannock Creamery?",  # an end: not what the dates next to it say
        "Is Tomas Reyes older than Ilse Varga?",  # yes/no: no options offered
        "Who was the first woman to fly the Atlantic, Tomas Reyes or Ilse Varga?",  # an ordinal, not a time asked
    ],
)
def test_other_questions_are_not_compared(question):
    assert asked(question) is None


def test_born_first_is_read_from_the_bracket_after_each_name():
    found = compared("Who was born first, Tomas Reyes or Ilse Varga?", PEOPLE)
    assert found is not None and found.answer == "Tomas Reyes" and found.option == "Tomas Reyes"
    assert found.dates == {"Tomas Reyes": When(1914, 2, 1), "Ilse Varga": When(1963, 9, 3)}
    assert found.sources == {"Tomas Reyes": "E2", "Ilse Varga": "E1"}
    assert found.expression() == "Tomas Reyes (1 February 1914) < Ilse Varga (3 September 1963)"
    assert compared("Who is younger, Tomas Reyes or Ilse Varga?", PEOPLE).answer == "Ilse Varga"


def test_a_passage_about_something_named_after_the_option_is_not_its_date():
    """'Ilse Varga Prize ... established in 2011' is not when Ilse Varga was born."""
    assert date_of("Ilse Varga", list(reversed(PEOPLE))) == (When(1963, 9, 3), "E1")
    assert date_of("Ilse Varga", [PEOPLE[2]]) is None


def test_the_death_date_is_the_second_date_of_the_bracket():
    assert compared("Who died first, Tomas Reyes or Ilse Varga?", PEOPLE) is None  # Ilse Varga's bracket has one
    assert date_of("Tomas Reyes", PEOPLE, death=True) == (When(1994, 2, 20), "E2")


def test_events_and_the_year_asked_for():
    question = "Which battle, the Siege of Arlen, or the Battle of Dunmore, was fought first?"
    assert compared(question, EVENTS).answer == "Battle of Dunmore"
    question = (
        "What is the year of the event which occurred first, Brannock Creamery was founded, or Kelso Market opened?"
    )
    found = compared(question, EVENTS)
    assert found.answer == "1907" and found.option == "Kelso Market"


@pytest.mark.parametrize(
    "passages",
    [
        PEOPLE[:1],  # one option never dated
        [
            {"id": "E9", "text": "Passage 1:\nKelso Market\nKelso Market is a public market in Kelso."}
        ],  # another document
        [  # the same year, one without a month: cannot be ordered
            {"id": "E1", "text": "Passage 1:\nIlse Varga\nIlse Varga (born 1914) is an editor."},
            {"id": "E2", "text": "Passage 2:\nTomas Reyes\nTomas Reyes (born March 1914) is a director."},
        ],
    ],
)
def test_undecided_where_the_dates_do_not_order_the_two(passages):
    assert compared("Who was born first, Tomas Reyes or Ilse Varga?", passages) is None


def test_hostile_text_is_read_without_failing():
    long = [{"id": "E1", "text": "Tomas Reyes (" + "1914 " * 20000 + ")"}, {"id": "E2", "text": "(" * 5000}]
    assert compared("Who was born first, Tomas Reyes or Ilse Varga?", long) is None
    assert asked("," * 5000 + " or " * 5000 + "first?") is None  # empty options: nothing offered


# -- the node in the graph -----------------------------------------------------------------------------------------

BIOS = "\n\n".join(p["text"] for p in PEOPLE)


def test_the_dates_answer_and_no_model_writes_it(run_graph, scripted):
    name, model = scripted({"generator": "Ilse Varga"})
    out = run_graph("Who was born first, Tomas Reyes or Ilse Varga?", model=name, inputs={"texts": [BIOS]})
    assert out["status"] == "answered" and out["answer"] == "Tomas Reyes"
    assert "compare" in out["route"] and "generator" not in model.calls
    assert out["grounding"]["method"] == "computed" and out["grounding"]["verdict"] == "supported"
    cited = "\n".join(c["text"] for c in out["citations"])
    assert "(born September 3, 1963)" in cited and "(1 February 1914" in cited
    assert out["calculation"]["expression"] == "Tomas Reyes (1 February 1914) < Ilse Varga (3 September 1963)"


def test_undecided_the_generator_answers(run_graph, scripted):
    name, model = scripted({"generator": "Tomas Reyes"})
    out = run_graph("Who died first, Tomas Reyes or Ilse Varga?", model=name, inputs={"texts": [BIOS]})
    assert "compare" in out["route"] and "generator" in model.calls
    assert any(t.startswith("compare: the passages do not decide") for t in out["trace"]), out["trace"]


@pytest.mark.parametrize("settings", [{"strategy": "rag"}, {"date_comparison": "off"}])
def test_the_papers_baselines_and_the_setting_off_do_not_compare(run_graph, scripted, settings):
    name, model = scripted({"generator": "Ilse Varga"})
    out = run_graph("Who was born first, Tomas Reyes or Ilse Varga?", model=name, inputs={"texts": [BIOS]}, **settings)
    assert "compare" not in out["route"] and "generator" in model.calls and out["answer"] == "Ilse Varga"
