"""LongBench / SQuAD answer metrics: normalisation, token F1, exact match, answer containment.

`normalize_answer` is SQuAD's: lower-case, drop punctuation, drop the articles a/an/the, collapse
whitespace. `f1_score` and `exact_match` take the best score over the gold answers, as LongBench's
`qa_f1_score` and SQuAD's evaluation do.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, remove punctuation, remove articles (a, an, the), collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _golds(answers: str | Iterable[str]) -> list[str]:
    return [answers] if isinstance(answers, str) else list(answers)


def token_f1(prediction: str, truth: str) -> float:
    """Token-level F1 between one prediction and one gold answer, after normalisation."""
    pred, gold = normalize_answer(prediction).split(), normalize_answer(truth).split()
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, answers: str | Iterable[str]) -> float:
    """Best token F1 of `prediction` over the gold answers."""
    return max((token_f1(prediction, a) for a in _golds(answers)), default=0.0)


def exact_match(prediction: str, answers: str | Iterable[str]) -> float:
    """1.0 if the normalised prediction equals a normalised gold answer, else 0.0."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(a) for a in _golds(answers)))


def contains_answer(text: str, answers: str | Iterable[str]) -> bool:
    """Whether a normalised gold answer occurs in the normalised `text` on word boundaries."""
    haystack = f" {normalize_answer(text)} "
    return any(f" {a} " in haystack for a in map(normalize_answer, _golds(answers)) if a)


YES_NO = frozenset({"yes", "no"})


def is_yes_no(answers: str | Iterable[str]) -> bool:
    """Whether every gold answer is "yes" or "no" (after normalisation): containment of such an
    answer in a passage says nothing about retrieval, so the retrieval-only scores leave it out."""
    golds = [normalize_answer(a) for a in _golds(answers)]
    return bool(golds) and all(g in YES_NO for g in golds)


def units_found(passages: Iterable[str], units: Iterable[str]) -> list[bool]:
    """For each gold supporting unit (a sentence or a paragraph), whether its normalised text occurs
    on word boundaries inside one of the normalised `passages` (a unit cut in two by a passage
    boundary is not found)."""
    haystacks = [f" {normalize_answer(p)} " for p in passages]
    found = []
    for unit in units:
        needle = normalize_answer(unit)
        found.append(bool(needle) and any(f" {needle} " in h for h in haystacks))
    return found
