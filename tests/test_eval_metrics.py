"""LongBench's answer metric (evals/metrics.py) against hand-computed cases."""

from __future__ import annotations

import pytest

from longqa.evals.metrics import (
    contains_answer,
    exact_match,
    f1_score,
    is_yes_no,
    normalize_answer,
    token_f1,
    units_found,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower"),  # case + leading article
        ("a cat, an owl and the dog.", "cat owl and dog"),  # every article, punctuation
        ("Theatre and Anatomy", "theatre and anatomy"),  # articles only as whole words
        ("  New\tYork\n City  ", "new york city"),  # any whitespace collapses
        ("U.S.A.", "usa"),  # punctuation inside a word is removed, not spaced
        ("rock-and-roll", "rockandroll"),
        ("$1,496.5", "14965"),
        ("THE", ""),  # nothing left
        ("", ""),
    ],
)
def test_normalisation(text, expected):
    assert normalize_answer(text) == expected


def test_token_f1_hand_computed():
    # identical after normalisation
    assert token_f1("The cat sat on the mat.", "a cat sat on a mat") == 1.0
    # 2 of 2 predicted tokens right, 2 of 4 gold tokens found: P=1, R=0.5, F1=2/3
    assert token_f1("cat sat", "the cat sat on the mat") == pytest.approx(2 / 3)
    # repeated tokens count once per occurrence: common=1, P=1/2, R=1 -> 2/3
    assert token_f1("cat cat", "cat") == pytest.approx(2 / 3)
    # P=1/3 (3 predicted), R=1/2 (2 gold) -> 2*(1/3)(1/2)/(5/6) = 0.4
    assert token_f1("Paris is nice", "Paris France") == pytest.approx(0.4)
    assert token_f1("London", "Paris") == 0.0


def test_multiple_gold_answers_take_the_best():
    golds = ["London", "Paris, France"]
    assert f1_score("paris", golds) == pytest.approx(2 / 3)  # vs "paris france": P=1, R=1/2
    assert f1_score("Paris France", golds) == 1.0
    assert exact_match("the Paris, France!", golds) == 1.0
    assert exact_match("Paris", golds) == 0.0
    assert f1_score("Paris", "Paris") == 1.0  # a single gold as a string


def test_empty_prediction_scores_zero():
    assert f1_score("", ["Paris"]) == 0.0
    assert exact_match("", ["Paris"]) == 0.0
    assert f1_score("the", ["Paris"]) == 0.0  # normalises to nothing
    assert f1_score("Paris", []) == 0.0  # no gold: nothing to match


def test_case_punctuation_and_articles_do_not_matter_for_em():
    assert exact_match("  THE   Beatles. ", ["Beatles"]) == 1.0
    assert exact_match("Beatles band", ["Beatles"]) == 0.0


def test_containment_on_word_boundaries():
    assert contains_answer("It closed in 1987 after the flood.", ["1987"])
    assert not contains_answer("It closed in 19870.", ["1987"])
    assert contains_answer("spans 615 Metres across", ["615 metres", "x"])
    assert not contains_answer("anything", ["the"])  # an answer that normalises to nothing matches nothing


def test_yes_no_answers():
    assert is_yes_no(["yes"]) and is_yes_no(["No."]) and is_yes_no("YES")
    assert not is_yes_no(["yes", "Paris"]) and not is_yes_no([])


def test_units_found_per_passage():
    passages = ["The keeper is Amelie Kortsen. She was born in Haldane.", "The bridge spans 615 metres."]
    assert units_found(passages, ["the keeper is Amelie Kortsen", "Bridge spans 615 metres.", "born in Brennvik"]) == [
        True,
        True,
        False,
    ]
    # a unit cut across two passages is not found
    assert units_found(["She was born", "in Haldane."], ["She was born in Haldane."]) == [False]
    assert units_found(passages, []) == []
