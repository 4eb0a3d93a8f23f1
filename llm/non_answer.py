"""Replies that answer nothing (issue 48). A small model may give back the question itself (Qwen2.5-
Coder-0.5B's whole reply to "From where do buses leave the city CKIS-FM serves?" was that question), a
passage's label ("E2", "Passage 3", the file name), a heading of its passages ("1.2 Built-in global
variables"), or a sentence whose every word the question already says. Every word of such a reply is
in the passages, so the lexical check (llm/grounding.py) cannot decline it: `non_answer` says why it
is no answer, and the ground node declines it as it declines an unsupported one.

Kept as answers: a reply opening with yes or no; a statement restating a yes/no question (it affirms
it); the option a choice question offers ("..., A or B?") or one of the names a comparison question
names; any reply that names a number, a name or a word the question does not say ("Paris", "9").
Hand-written: no library judges whether a reply answers a question without a reader model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from longqa.llm.answer_core import MAX_OPTION_WORDS, chosen_option
from longqa.llm.numbers import claimed_numbers, values_in
from longqa.llm.passages import source_name
from longqa.retrieval.bm25 import bm25_tokens
from longqa.retrieval.index.chunking import is_heading
from longqa.retrieval.search.links import names_in

RESTATED_SHARE = 0.5  # of the question's words a reply that adds nothing repeats: it restates the question
ECHOED_SHARE = 0.6  # of them a reply written as a question repeats, adding at most one plain word: an echo
# words that say something about the documents or the reply, never about what was asked
_SAYS_NOTHING = frozenset(
    bm25_tokens(
        "answer passage document text source context information evidence according based states mentions says "
        "describes refers discusses explains provided given question asked excerpt chunk reference citation "
        "following above also called named known located situated"
    )
)
# what a heading adds to its topic without saying anything about it
_HEADING_WORDS = frozenset(
    bm25_tokens(
        "overview introduction summary background conclusion contents chapter section part appendix table figure "
        "notes abstract preface index"
    )
)
_ID = r"\[?[EP]\d{1,4}\]?"
_LABEL_WORD = r"(?:passages?|documents?|sources?|evidence|excerpts?|chunks?|context|references?|citations?)"
_LABEL = re.compile(
    rf"(?i)^\W*(?:{_LABEL_WORD}\b\W*(?:#|no\.?)?\s*(?:{_ID}|\d{{1,4}})?|{_ID})"
    rf"(?:\s*(?:,|;|&|\band\b)\s*(?:{_ID}|\d{{1,4}}))*\W*$"
)
_PLACEHOLDER = re.compile(r"^\W*<[^<>]*>\W*$")  # the reply form's "<the answer, in a few words>"
_NUMBERING = re.compile(r"(?i)^\W*(?:(?:chapter|section|part|appendix|table|figure)\s+)?[\dIVXivx]+(?:\.\d+)*[.):]?\s+")
_COMPARISON = re.compile(r"(?i)\b(?:and|or|vs|versus|between|both|than)\b")
_ASKS_TITLE = re.compile(r"(?i)\b(?:title[sd]?|headings?|sections?|chapters?|parts?|appendix|called|named)\b")
YES_NO_REPLY = re.compile(r"(?i)^\W*(yes|no)\b")  # a reply that opens with a yes or a no: which
YES_NO_QUESTION = re.compile(  # a question a yes or a no answers
    r"(?i)^\W*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall|may|might|must)\b"
)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w%$€£]+", " ", text.lower()).split())


def adds(reply: str, question: str, ignore: frozenset[str] = frozenset()) -> list[str]:
    """What a reply says beyond the question: its numbers whose values the question does not write, and
    its words (stemmed) the question does not say, less those that say nothing about what was asked."""
    numbers, rest = claimed_numbers(reply)
    asked_values = values_in(question).exact
    asked = set(bm25_tokens(question))
    new_numbers = [n.value for n in numbers if not n.values & asked_values]
    words = [w for w in bm25_tokens(rest) if w not in asked and w not in _SAYS_NOTHING and w not in ignore]
    return list(dict.fromkeys(new_numbers + words))


def _label(reply: str, question: str, passages: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the reply is a passage's label, file name or the reply form's placeholder, else None."""
    if _PLACEHOLDER.match(reply):
        return "it copies the reply form's placeholder"
    asked = set(bm25_tokens(question))
    if _LABEL.match(reply) and not asked & set(bm25_tokens(re.sub(r"[EP]\d+", " ", reply))):
        return "it names a passage's label, not an answer"
    names = [source_name(p.get("source") or "") for p in passages]
    files = {_plain(n) for n in names} | {_plain(re.split(r"[\\/]", n)[-1]) for n in names}
    if _plain(reply) in files - {""} and not asked & {"file", "document"}:
        return "it names the passage's file, not an answer"
    return None


def _heading(reply: str, question: str, passages: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the reply is a heading of a passage that names only the question's topic, else None."""
    plain = _plain(reply)
    for passage in passages:
        lines = [passage.get("section") or "", *(passage.get("text") or "").splitlines()]  # the heading it is under
        for line in lines:
            if not is_heading(line):
                continue
            heading = line.strip().lstrip("#").strip()
            if plain in (_plain(heading), _plain(_NUMBERING.sub("", heading))):
                if not adds(_NUMBERING.sub("", heading), question, _HEADING_WORDS):
                    return "it copies a heading of the passages, which names only the question's topic"
    return None


def _kept_without_new_words(reply: str, question: str) -> bool:
    """Replies that add no word and still answer: yes or no, a yes/no question affirmed, a choice's option (not
    the question given back, which names every option)."""
    if reply.rstrip().endswith("?"):
        return False
    if YES_NO_REPLY.match(reply) or chosen_option(reply, question):
        return True
    if YES_NO_QUESTION.match(question):
        return True
    # one of the things a comparison compares: "Between Tom Hanks and Jerry Lewis, who is older?" "Tom Hanks";
    # "Which battle, the Battle of Cold Harbor, or the Second Battle of Bull Run, was fought first?" (an option's size)
    short = len(reply.split()) <= MAX_OPTION_WORDS and bool(names_in(reply))
    return short and bool(_COMPARISON.search(question)) and f" {_plain(reply)} " in f" {_plain(question)} "


def non_answer(reply: str, question: str, passages: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Why the reply answers nothing (it restates the question, copies a passage's label or a heading, or
    names nothing beyond the question's words), or None where it answers (see the module's docstring)."""
    reply = reply.strip()
    if not reply:
        return None
    label = _label(reply, question, passages)
    if label:
        return label
    heading = _heading(reply, question, passages)
    if heading:  # an answer where the question asks for a section ("Which section describes ...?"), or where the
        # heading is a choice's option (a passage titled with it: "Which is a comedy film, A or B?" "B")
        return None if _ASKS_TITLE.search(question) or _kept_without_new_words(reply, question) else heading
    new = adds(reply, question)
    asked = set(bm25_tokens(question))
    repeated = len(asked & set(bm25_tokens(reply))) / len(asked) if asked else 0.0
    if new:  # a question asked back with one word changed is still the question
        echoed = reply.endswith("?") and len(new) <= 1 and repeated >= ECHOED_SHARE
        return "it asks the question back" if echoed and not set(names_in(reply)) - set(names_in(question)) else None
    if _kept_without_new_words(reply, question):
        return None
    if reply.endswith("?") or repeated >= RESTATED_SHARE:
        return "it restates the question"
    return "it names nothing beyond the question's own words"
