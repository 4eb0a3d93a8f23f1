"""A "No" read from what the documents leave out (issue 52). "Is Arabic one of the 11 languages in CoVoST?",
asked of a paper that lists CoVoST's eleven languages and never says "Arabic": the subject check
(retrieval/search/mentions.py) would decline any reply, since the documents never name what was asked about.
Where the question asks whether a name belongs to a set ("one of", "any of", "among", "included in" the set's
noun), the other names it says are in the documents, and a passage lists that set whole, the name's absence from
the list and from every document is the answer: the model's "No" stands, citing the list. A list is whole when
it has as many items as a count the question or its sentence gives ("11 languages"), or when it is announced
("the following", "namely", a colon) with no "such as" or "including" that would make it a sample. A "Yes",
or any other reply, is still declined. Hand-written: no library reads an inline enumeration against a question."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..retrieval.bm25 import bm25_tokens
from ..retrieval.words import folded
from .non_answer import YES_NO_QUESTION, YES_NO_REPLY
from .numbers import digits_for_words

MAX_QUESTION = 300  # characters: a longer question is not read as a membership question
MAX_SENTENCE = 1_500  # characters of one listing sentence; a longer one is not read
MAX_ITEM_WORDS = 5  # an item of a list ("Mongolian", "Chinese (Zh)", "the Penn Treebank")
MIN_ITEMS = 3

_COUNTS = (
    "two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|seven|eigh|nine)teen"
    "|twenty|thirty|forty|fifty"
)
_COUNT = rf"(?:(?P<count>\d{{1,3}}|(?:{_COUNTS})(?:-[a-z]+)?)\s+)?"
# the set's noun phrase, up to three words, ends where a preposition, a pronoun or the question's end follows;
# its last word names the set ("the host cities of the games": cities)
_SET_NOUN = (
    r"(?P<phrase>(?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z][\w-]{2,40})"
    r"(?=\s+(?:in|of|for|at|on|by|from|with|that|which|who|they|we|he|she|it|you)\b|\s*[?.,;:]|\s*$)"
)
_MEMBERSHIP = re.compile(
    r"(?i)\b(?:(?:one|any|either|part|each)\s+of|among|amongst|included\s+in|listed\s+in|in\s+the\s+list\s+of)\s+"
    rf"(?:(?:the|its|their|these|those|his|her)\s+)?{_COUNT}{_SET_NOUN}"
)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?](?=\s|$)|$)")  # "Table 3.1" and "e.g." may split one: its list stays whole
_SAMPLE = re.compile(r"(?i)\b(?:such\s+as|including|includes|include|like|e\.g|for\s+example|among\s+them|etc)\b")
_ANNOUNCED = re.compile(r"(?i)(?:\bfollowing\b|\bnamely\b|:)")
_PARENTHESES = re.compile(r"\([^()]{0,40}\)")
_LEAD = re.compile(r"(?i)^\W*(?:(?:namely|which\s+are|that\s+are|are|were)\b\W*)?")
_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


@dataclass(frozen=True)
class AbsentMember:
    """The name the question asks about, the set it asks whether the name is in, and the passage that lists it."""

    name: str
    noun: str
    passage: str  # the listing passage's id
    items: tuple[str, ...]

    @property
    def why(self) -> str:
        shown = ", ".join(self.items[:12]) + (", ..." if len(self.items) > 12 else "")
        return f'{self.passage} lists the {self.noun} ({shown}); the documents never mention "{self.name}"'


def _count(text: str | None) -> int | None:
    if not text:
        return None
    digits = digits_for_words(text)
    return int(digits) if digits.isdigit() else None


def membership(question: str) -> tuple[str, int | None, str] | None:
    """(the set's noun, the count the question gives, the question before the phrase) for "Is X one of the 11
    Ys?", else None."""
    if len(question) > MAX_QUESTION or not YES_NO_QUESTION.match(question):
        return None
    match = _MEMBERSHIP.search(question)
    if not match:
        return None
    return match["phrase"].split()[-1], _count(match["count"]), question[: match.start()]


def _items(listed: str) -> list[str]:
    """The items of an enumeration ("French, German, Dutch and Chinese"), parentheses dropped; [] when any part
    is too long to be an item."""
    listed = _LEAD.sub("", _PARENTHESES.sub(" ", listed)).strip().rstrip(".!?")
    parts = [p.strip(" \t\"'“”") for p in _SEPARATOR.split(listed)]
    parts = [p for p in parts if p]
    if len(parts) < MIN_ITEMS or any(len(p.split()) > MAX_ITEM_WORDS for p in parts):
        return []
    return parts


def _count_before(before: str) -> int | None:
    """The count a sentence puts just before the set's noun ("the following 11 languages", "eleven spoken ...")."""
    found = re.search(r"(\d{1,3})\s+(?:[\w-]+\s+)?$", digits_for_words(before[-60:]))
    return int(found.group(1)) if found else None


def _says_one_of(sentence: str, names: Sequence[str]) -> bool:
    """The sentence says every word of one of the names (folded BM25 tokens)."""
    words = set(bm25_tokens(folded(sentence)))
    return any(all(t in words for t in bm25_tokens(folded(name))) for name in names)


def listed_set(noun: str, count: int | None, text: str, owners: Sequence[str] = ()) -> list[str] | None:
    """The whole list of the set `noun` names in a sentence of `text` that says one of `owners` (when given): after
    the noun, announced or with as many items as the count (the question's, else one the sentence puts before the
    noun); None when none is."""
    stem = bm25_tokens(noun)
    if not stem:
        return None
    for sentence in _SENTENCE.findall(text):
        if len(sentence) > MAX_SENTENCE or (owners and not _says_one_of(sentence, owners)):
            continue
        for word in re.finditer(r"[\w-]+", sentence):
            if bm25_tokens(word.group(0)) != stem:
                continue
            before, after = sentence[: word.start()], sentence[word.end() :]
            announced = _ANNOUNCED.search(before[-30:] + after[:10])
            if _SAMPLE.search(after[:40]):
                continue
            items = _items(after.split(":", 1)[1] if ":" in after[:40] else after)
            stated = count or _count_before(before)
            if items and (len(items) == stated or (stated is None and announced)):
                return items
    return None


def absent_member(
    question: str, reply: str, unmentioned: Sequence[str], said: Sequence[str], passages: Sequence[Mapping[str, Any]]
) -> AbsentMember | None:
    """Whether the reply is a "No" that the documents' whole list of the asked-about set supports: the one name
    they never say is asked about before the set, some other name of the question is one they say, and a passage
    lists the set whole in a sentence that says that other name (the set's owner: CoVoST's languages)."""
    asked = membership(question)
    opens = YES_NO_REPLY.match(reply)
    if not asked or len(unmentioned) != 1 or not said or not opens or opens.group(1).lower() != "no":
        return None
    noun, count, before = asked
    name = unmentioned[0]
    if name not in before:  # "Is Arabic one of ...": the name is the candidate, not the set's owner
        return None
    for passage in passages:
        items = listed_set(noun, count, passage["text"], owners=said)
        if items:
            return AbsentMember(name=name, noun=noun, passage=passage["id"], items=tuple(items))
    return None
