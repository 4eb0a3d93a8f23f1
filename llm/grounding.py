"""Is an answer supported by the passages it cites? The lexical half of the grounding check, with
no model: the answer's numbers, names and content words, looked for in the cited passages.

- Numbers are compared by value, whatever their spelling, both ways (llm/numbers.py: "nine" = "9",
  "5,000,000" = "5 million" = "US$5m", "Fifty percent" = "50%", "nineteen sixty-two" = "1962"; the
  scale counts: "5 million" is not "5 billion"), words stemmed
  (bm25_tokens), names by their words, a country by any of its names ("American" holds "United States",
  llm/countries.py). Words the question already says prove nothing and are left out;
  numbers and the words of names weigh twice a plain word (a verb like "became" claims little).
- A verdict is `supported` when every number and most content words are found, `unsupported` when
  (almost) none are, else `unsure`: the model is asked (nodes/ground.py) where the budget allows.
- An arithmetic answer's result is rarely written in the passages: a number the question asks to
  compute is judged by its operands (the model is asked), never declined by the lexical check alone.
Hand-written: no library checks an answer against its sources without a model (the NLI and
attribution models that do need a download).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from longqa.llm.countries import country_words
from longqa.llm.numbers import Number, claimed_numbers, values_in
from longqa.retrieval.bm25 import bm25_tokens
from longqa.retrieval.search.links import names_in

P = TypeVar("P", bound=Mapping[str, Any])  # a passage: at least its "id" and "text"
Verdict = Literal["supported", "unsupported", "unsure"]

SUPPORTED_SHARE = 0.6  # of the answer's content words found in its passages: supported
UNSUPPORTED_SHARE = 0.25  # at most this share found (and no number): unsupported
NAME_WEIGHT = 2  # a number or a word of a name, against a plain word
_NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?")
# words an answer adds that carry no claim of their own
_FILLER = frozenset(
    "answer passag document text sourc accord base state mention also about approxim around over nearli "
    "year month day time one two three first second third yes".split()
)


@dataclass(frozen=True)
class Support:
    """The lexical check's finding: the verdict, the share of content words found, what was missing."""

    verdict: Verdict
    share: float  # of what the answer claims (names and numbers weigh twice) found in the passages
    checked: int  # content words and numbers the answer says beyond the question
    missing: list[str] = field(default_factory=list)  # numbers and words not found


def number_values(text: str) -> set[str]:
    """The numbers a text writes in digits, as canonical values: "1,200" and "1200.0" are both "1200"
    (the calculator's operands; the grounding check reads every form through llm/numbers.py)."""
    values = set()
    for raw in _NUMBER.findall(text):
        plain = raw.replace(",", "").replace("−", "-")
        try:
            value = float(plain)
        except ValueError:
            continue
        values.add(f"{value:.6f}".rstrip("0").rstrip("."))
    return values


def _content_words(text: str) -> list[str]:
    return [w for w in bm25_tokens(text) if not w.isdigit() and w not in _FILLER and len(w) > 1]


def _new_numbers(answer: str, question: str) -> tuple[list[Number], str]:
    """The numbers the answer claims beyond the question's (one per value), and the answer's words without them."""
    claimed, words = claimed_numbers(answer)
    asked = values_in(question).exact
    new = {n.value: n for n in claimed if not n.values & asked}
    return [new[v] for v in sorted(new)], words


def lexical_support(answer: str, passages: list[str], question: str = "", computed: bool = False) -> Support:
    """How far the passages hold what the answer says beyond the question. `computed`: the question
    asks for a calculation, so a number absent from the passages makes the verdict unsure, not unsupported."""
    source = "\n".join(passages)
    asked = set(bm25_tokens(question))
    terms = bm25_tokens(source)
    source_words = set(terms) | {w for name in names_in(source) for w in bm25_tokens(name)} | country_words(terms)
    numbers, rest = _new_numbers(answer, question)
    words = list(dict.fromkeys(w for w in _content_words(rest) if w not in asked))
    named = {w for name in names_in(answer) for w in bm25_tokens(name)}
    written = values_in(source)
    missing_numbers = [n.value for n in numbers if not written.holds(n)]
    missing_words = [w for w in words if w not in source_words]
    checked = len(words) + len(numbers)
    if not checked:
        return Support("unsure", 1.0, 0)
    weight = {w: NAME_WEIGHT if w in named else 1 for w in words}
    total = sum(weight.values()) + NAME_WEIGHT * len(numbers)
    lost = sum(weight[w] for w in missing_words) + NAME_WEIGHT * len(missing_numbers)
    share = (total - lost) / total
    missing = missing_numbers + missing_words
    if missing_numbers:  # a number the passages never write: unsupported unless computed, or the rest holds
        if computed or share >= SUPPORTED_SHARE:
            return Support("unsure", share, checked, missing)
        return Support("unsupported", share, checked, missing)
    if share >= SUPPORTED_SHARE:
        return Support("supported", share, checked, missing)
    if share <= UNSUPPORTED_SHARE and not numbers:
        return Support("unsupported", share, checked, missing)
    return Support("unsure", share, checked, missing)


def holds(answer: str, passage: str, question: str = "") -> bool:
    """Whether one passage by itself holds what the answer says beyond the question (lexically supported)."""
    return lexical_support(answer, [passage], question).verdict == "supported"


def attributed(answer: str, cited: list[P], shown: list[P], question: str = "") -> tuple[list[P], list[str]]:
    """The citations corrected: where no passage the model named holds the answer's words but other passages it
    was shown do, those lead the citations, then the model's own (a small model often names the wrong id).
    Returns (citations, ids added)."""
    if not answer or any(holds(answer, e["text"], question) for e in cited):
        return cited, []
    named = {e["id"] for e in cited}
    found = [e for e in shown if e["id"] not in named and holds(answer, e["text"], question)]
    return [*found, *cited], [e["id"] for e in found]
