"""Whether two both are something is looked up, not generated: for a yes/no question that asks whether two named
things share one description ("Were Daniel Mann and Todd Solondz both directors?", "Are Villa Paletti and Betrayal
at House on the Hill both board games?"), the sentence that introduces each in its own passage ("Daniel Mann ...
was an American film and television director.") is read for the description's words. Where both introductions say
every one of them, the answer is "yes", citing the two passages. A small model given both passages still answered
"No" (the 1.5B, evals/README tenth round).

Only a yes is decided: an introduction that leaves a word out ("an American indie rock band" for "American Christian
rock bands") may still be described so elsewhere, or in other words, so the generator answers then, as before.

Hand-written: the part here is which sentence introduces which name, which no parsing library does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from longqa.retrieval.bm25 import bm25_tokens
from longqa.retrieval.search.links import names_in
from longqa.retrieval.words import folded

from .comparison import name_pattern, title_end

MAX_QUESTION = 300  # characters: a longer question is not read as a shared-description question (bounds the regexes)
MAX_DESCRIPTION = 4  # words of the description: a longer one is a claim, not a kind ("born in the same city as ...")
INTRODUCTION = 300  # characters after a name where the sentence introducing it is read
_YES_NO = r"(?:are|were|is|was)"
_NAMES = r"(?P<a>[^?]{1,120}?)\s+and\s+(?P<b>[^?]{1,120}?)"
_DESCRIPTION = r"(?P<what>[^?]{1,80}?)"
_BOTH_AFTER = re.compile(rf"(?i)^\s*{_YES_NO}\s+(?:the\s+)?{_NAMES}\s+both\s+{_DESCRIPTION}\s*\?\s*$")
_BOTH_BEFORE = re.compile(rf"(?i)^\s*{_YES_NO}\s+both\s+(?:the\s+)?{_NAMES}\s+{_DESCRIPTION}\s*\?\s*$")
# a description that is a relation, a place or a time ("from the same country", "born in 1950") is not a kind
_NOT_A_KIND = re.compile(r"(?i)\b(?:in|on|at|from|by|of|with|for|to|the same|same|born|known|located|based)\b")
_ARTICLE = re.compile(r"(?i)^(?:a|an|the)\s+")
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[A-Z][a-z])\.(?=\s+[A-Z\"“(]|\s*$)")


@dataclass(frozen=True)
class Shared:
    """The answer ("yes"), the description's words, and for each name the passage id and the sentence that said
    them."""

    answer: str
    description: str
    introductions: dict[str, tuple[str, str]]

    def expression(self) -> str:
        return "; ".join(f'{name}: "{sentence}"' for name, (_, sentence) in self.introductions.items())


def asked(question: str) -> tuple[list[str], str] | None:
    """(the two names, the description they are asked to share) for "Are A and B both D?" or "Were both A and B D?"
    where D is a kind (a few words, no relation or place); None for any other question."""
    if len(question) > MAX_QUESTION:
        return None
    if match := _BOTH_AFTER.match(question):
        names, what = [match["a"], match["b"]], match["what"]
    elif match := _BOTH_BEFORE.match(question):
        # "Were both Peter Duffell and Fred Niblo actors?": the second name is the capitalised words that open the rest
        rest = f"{match['b']} {match['what']}"
        second = next((n for n in names_in(rest) if rest.startswith(n)), None)
        if second is None:
            return None
        names, what = [match["a"], second], rest[len(second) :]
    else:
        return None
    names = [n.strip(" ,\"'“”") for n in names]
    what = _ARTICLE.sub("", what.strip(" ,"))
    if (
        _NOT_A_KIND.search(what)
        or not _words(what)
        or len(what.split()) > MAX_DESCRIPTION
        or any(not n or len(n) > 120 for n in names)
        or names[0].lower() == names[1].lower()
    ):
        return None
    return names, what


def shared(question: str, passages: list[dict]) -> Shared | None:
    """ "yes" where the sentence introducing each name in its own passage says every word of the description; None
    when undecided (a name not introduced, a word left out)."""
    found = asked(question)
    if not found:
        return None
    names, what = found
    wanted = set(_words(what))
    introductions = {}
    for name in names:
        introduced = introduction(name, passages)
        if introduced is None or not wanted <= set(_words(introduced[1])):
            return None
        introductions[name] = introduced
    return Shared(answer="yes", description=what, introductions=introductions)


def introduction(name: str, passages: list[dict]) -> tuple[str, str] | None:
    """(passage id, the sentence that introduces the name): the first sentence after the title line of the passage
    the name titles; None where no passage is titled by it."""
    pattern = name_pattern(name)
    for passage in passages:
        text = passage["text"]
        end = title_end(pattern, text)
        if end is None:
            continue
        window = text[end : end + INTRODUCTION].lstrip()
        stop = _SENTENCE_END.search(window)
        sentence = window[: stop.start() + 1 if stop else len(window)].strip()
        if sentence:
            return passage["id"], sentence
    return None


def _words(text: str) -> list[str]:
    """The description's or a sentence's words as folded BM25 tokens (stemmed, stop words left out)."""
    return bm25_tokens(folded(text))
