"""Does a library mention what a question is about? The names a question says ("Edna St. Vincent
Millay", "Aschenbrödel"), looked up in the searched documents' vocabulary. A name the documents never
say means the question is about something they do not cover: whatever a model answers from them is
about something else (our addition to Self-Route, issue 34: small models never decline on their own).

- Words are compared as BM25 tokens with accents folded, a word of five letters or more also said when
  the documents say one within one edit of it (retrieval/words.py), so a typo in a question is not a decline.
- A one-word name that opens the question is left out: grammar, not a name, may have capitalised it;
  so are words of one or two letters ("US" in a text that writes "United States").
- A question that names nothing the documents miss is still about something else when three or more of
  its own words (four letters or more, stop words aside) are never said there: "the world's
  fourth-largest tyre maker" over a report on shipyards.
"""

from __future__ import annotations

import re

from ..bm25 import STOP_WORDS, bm25_tokens
from ..words import Vocabulary, folded
from .links import names_in

MIN_WORD_LENGTH = 3  # "US", "UK", "EU": abbreviations a text often spells out, too short to tell
# Measured on the shared data (HotpotQA + MuSiQue, 150 each at seed 5, and each question over another
# item's document): names alone flag 2 of 250 answerable and 158 of 203 elsewhere (77.8%); names or 3+
# unsaid words flag the same 2 answerable and 166 elsewhere (81.8%); 2+ words flag 8 answerable. Held out
# (seed 9, 250 / 192): names alone 2 and 147 (76.6%), names or 3+ words 2 and 154 (80.2%).
MIN_UNSAID_WORDS = 3
MIN_CONTENT_LENGTH = 4  # a word's token length from which an unsaid word counts
# Words that say what is asked of the documents (a computation, the answer's form) or where it is written (a table,
# the report), never what it is about: an arithmetic question over a table ("the percentage change in the value of
# raw materials between 2018 and 2019") says three or more of them and the table none, so 4 of 30 answerable TAT-QA
# questions were declined on them (issue 52); a paper's questions ask "the author's opinion", "the proposed
# technique", what "could further" improve it. They never count as unsaid (as BM25 tokens: stemmed, folded).
FORM_WORDS = frozenset(
    bm25_tokens(
        "percentage percent change difference nominal average mean median ratio proportion share total sum "
        "increase decrease growth rate value amount number count between compared respectively combined overall "
        "calculate computed table figure chart section paper document report text passage page information data "
        "provide provided show shown list listed mention mentioned state stated according describe described "
        "author authors opinion proposed current additional further could cannot would should might"
    )
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def question_names(question: str) -> dict[str, list[str]]:
    """The names a question says, each with its words as folded BM25 tokens (names with none left
    out, and a one-word name that only opens the question)."""
    names: dict[str, list[str]] = {}
    opening = question.lstrip(" \"'“‘([")
    for name in names_in(question):
        if opening.startswith(name):
            if " " not in name and not name.isupper():
                continue
            words = name.split(" ")  # "Did Margaret Wilson ...": the question's own first word is no name
            while words[1:] and words[0].lower() in STOP_WORDS:
                words.pop(0)
            name = " ".join(words)
        tokens = [t for t in bm25_tokens(folded(name)) if len(t) >= MIN_WORD_LENGTH]
        if tokens:
            names[name] = tokens
    return names


def unsaid_words(question: str, vocabulary: Vocabulary, form_words: frozenset[str] = FORM_WORDS) -> list[str]:
    """The question's own words (stop words, short tokens and `form_words` aside) the documents never say, once each."""
    unsaid: dict[str, str] = {}
    for word in _WORD.findall(question):
        tokens = [t for t in bm25_tokens(folded(word)) if len(t) >= MIN_CONTENT_LENGTH and t not in form_words]
        if tokens and not all(map(vocabulary.says, tokens)):
            unsaid.setdefault(" ".join(tokens), word)
    return list(unsaid.values())


def unmentioned(question: str, vocabulary: Vocabulary, form_words: frozenset[str] = FORM_WORDS) -> list[str]:
    """What the question is about that the documents never say: its names of which some word is never
    said, in the question's order; else its own unsaid words (`form_words` aside), when there are
    MIN_UNSAID_WORDS or more."""
    names = [name for name, tokens in question_names(question).items() if not all(map(vocabulary.says, tokens))]
    if names:
        return names
    words = unsaid_words(question, vocabulary, form_words)
    return words if len(words) >= MIN_UNSAID_WORDS else []
