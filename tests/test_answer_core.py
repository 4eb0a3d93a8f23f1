"""The part of a reply that answers (llm/answer_core.py): a restated question is cut away, a name is kept
whole, and replies that are answers already, yes/no replies and explanations are left as they are."""

from __future__ import annotations

import pytest

from longqa.llm.answer_core import answer_core, choice_options, chosen_option, same_answer
from longqa.llm.non_answer import non_answer
from longqa.nodes.generate import _answered


@pytest.mark.parametrize(
    ("reply", "question", "core"),
    [
        (
            "The industry William Todd Field and Zoltan Korda worked in was banking.",
            "What industry did William Todd Field and Zoltan Korda work in?",
            "banking",
        ),
        (  # a name the span cuts into is kept whole ("Colony" is a question word)
            "The colony that became the state whose official sport is jousting was the Massachusetts Bay Colony.",
            "Which colony became the state whose official sport is jousting?",
            "Massachusetts Bay Colony",
        ),
        (  # a bracket the span opens is closed
            "The usual average snowfall in the city where the band was formed is 43.8 inches (1,110 mm).",
            "What is the usual average snowfall in the city where the band was formed?",
            "43.8 inches (1,110 mm)",
        ),
        (  # a lead-in is not part of the answer; a number the question says is not new
            "According to the passage, Seth Gordon directed the 2017 film in which Nicole Kidman starred.",
            "Who directed the 2017 film in which Nicole Kidman starred?",
            "Seth Gordon",
        ),
        (  # a quoted title: the title
            'Gregor Fisher had a role in the 2003 romantic comedy "Love Actually".',
            "Which 2003 romantic comedy did Gregor Fisher have a role in?",
            "Love Actually",
        ),
        (  # a quote and a bracket the span cuts into are kept whole
            'Harold Wallis as producer and Humphrey Bogart as actor made "Casablanca" (1942).',
            "Which film was made by Harold Wallis as producer and Humphrey Bogart as actor?",
            '"Casablanca" (1942)',
        ),
        ("Paris", "Where is the Eiffel Tower?", "Paris"),  # short: an answer already
        (
            "Yes, both were born in Ohio in the same decade.",
            "Were both born in Ohio?",
            "Yes, both were born in Ohio in the same decade.",
        ),
        (  # an explanation, not a restatement: most of it is new
            "The treaty failed because the senate refused ratification after months of hostile debate.",
            "Why did the treaty fail?",
            "The treaty failed because the senate refused ratification after months of hostile debate.",
        ),
        (  # a choice between two things the question names: the option named first
            "Michael Tippett was the composer who wrote his music most recently, Luigi Cherubini.",
            "Which composer wrote his music most recently, Michael Tippett or Luigi Cherubini?",
            "Michael Tippett",
        ),
    ],
)
def test_answer_core(reply: str, question: str, core: str) -> None:
    assert answer_core(reply, question) == core


def test_lead_in_only_is_dropped_from_a_short_answer() -> None:
    assert answer_core("Based on the passages, 1,200 tonnes.", "How much cargo?") == "1,200 tonnes."


def test_chosen_option_needs_a_choice_and_a_named_option() -> None:
    assert chosen_option("It was Bob Jones.", "Who was older, Ann Smith or Bob Jones?") == "Bob Jones"
    assert chosen_option("Neither of them.", "Who was older, Ann Smith or Bob Jones?") is None
    assert chosen_option("Ann Smith.", "Who is older than Ann Smith?") is None


def test_generate_cites_the_passage_that_holds_the_core() -> None:
    """The restated reply's core is the answer, its trace keeps the model's words, and the citation is
    corrected to the passage that holds the core (the reply named the other)."""
    question = "What industry did William Todd Field and Zoltan Korda work in?"
    kept = [
        {"id": "E1", "text": "William Todd Field is an American actor.", "source": "a.md"},
        {"id": "E2", "text": "Zoltan Korda worked in banking before the war.", "source": "b.md"},
    ]
    reply = "Answer: The industry William Todd Field and Zoltan Korda worked in was banking.\nSources: E1"
    out = _answered(reply, kept, [], [], question)
    assert out["answer"] == "banking"
    assert [e["id"] for e in out["citations"]][0] == "E2"
    assert any("restates the question" in t and "was banking" in t for t in out["trace"])


@pytest.mark.parametrize("reply", ["", "   ", "???", "According to the passage,", '(((( ))))) """ x y z w v u'])
def test_degenerate_replies_come_back_as_they_are(reply: str) -> None:
    """Nothing to cut: an empty reply, punctuation alone, a bare lead-in or unbalanced brackets never raise."""
    assert answer_core(reply, "What is it, A or B?") == reply.strip()


def test_a_long_reply_of_new_words_is_kept_whole() -> None:
    """A reply at the longest the generator allows (384 tokens) of words the question lacks: kept whole."""
    reply = " ".join(f"word{i}" for i in range(400))
    assert answer_core(reply, "What is it?") == reply


@pytest.mark.parametrize(
    ("question", "reply", "option"),
    [  # HotpotQA's forms, the replies Qwen2.5-Coder-0.5B gave (evals/README, eighth round)
        (
            "Between two scientists Ernst Messerschmid and Philippe Perrin, who is older?",
            "Philippe Perrin is older.",
            "Philippe Perrin",
        ),
        (
            "Which battle, the Battle of Cold Harbor, or the Second Battle of Bull Run, was fought first?",
            "The Battle of Cold Harbor was fought first.",
            "the Battle of Cold Harbor",
        ),
        ("Between Ann Smith and Bob Jones, which one was born first?", "Ann Smith", "Ann Smith"),
    ],
)
def test_options_set_off_inside_the_question_or_between_its_names(question: str, reply: str, option: str) -> None:
    assert chosen_option(reply, question) == option
    assert non_answer(reply, question) is None  # naming an option answers the choice


def test_between_alone_offers_no_choice() -> None:
    question = "What is the difference between the model and the baseline?"
    assert choice_options(question) == []
    assert chosen_option("the model", question) is None


def test_same_answer_ignores_case_and_punctuation() -> None:
    assert same_answer("Philippe Perrin", "philippe perrin.")
    assert not same_answer("Philippe Perrin", "Ernst Messerschmid")
