"""The part of a reply that answers: a small model restates the question around its answer ("The
industry William Todd Field and Zoltan Korda worked in was banking."), and only the words it adds
beyond the question claim anything. `answer_core` keeps the span from the first to the last word the
question does not say (a name it cuts into is kept whole: "the Massachusetts Bay Colony", not
"Massachusetts Bay"), so the grounding check and the citations look for the claim itself, and the user
reads the answer, not the question again. Measured with Qwen2.5-Coder-0.5B on the fourth round's
replies (evals/README.md): sentence answers restating the question were most of the answers whose
citations did not hold them.

A reply is left as it is when it is short already, opens with yes or no, adds nothing beyond the
question (a choice between two things the question names), or when what it adds is most of it (an
explanation, not a restatement). Hand-written: this is the answer-span step of extractive QA, which no
library does without a reader model.
"""

from __future__ import annotations

import re

from longqa.retrieval.bm25 import STOP_WORDS, bm25_tokens
from longqa.retrieval.search.links import names_in

SHORT_ANSWER_WORDS = 4  # a reply of at most this many words is an answer already
MAX_CORE_SHARE = 0.6  # a core of more than this share of the reply's words: the reply is not a restatement
MAX_OPTION_WORDS = 6  # an option of a choice question is a name or a short phrase, not the question's start
_TOKEN = re.compile(r"\w+(?:[.,'’-]\w+)*|\S")
_LEAD_IN = re.compile(
    r"^\s*(?:(?:according to|based on|as (?:stated|mentioned) in|from) (?:the )?(?:given |provided |above )?"
    r"(?:passages?|documents?|texts?|information|context|evidence|sources?)[^,.:]*[,:]\s*|the answer is:?\s+)",
    re.I,
)
_QUOTES = frozenset('"“”')
# the options of a choice question: the end of it, "A or B?" / "A, B or C?"; set off by commas inside it ("Which
# battle, the Battle of Cold Harbor, or the Second Battle of Bull Run, was fought first?"); or "Between A and B, who"
_CHOICE = re.compile(r"[^,:;]*?(?:,[^,:;]+)*\bor\b[^,:;?]+\?\s*$", re.I)
_CHOICE_INSIDE = re.compile(r",([^,:;?]+),?\s+or\s+([^,:;?]+),", re.I)
_BETWEEN = re.compile(r"^\s*between\s+([^,:;?]+?)\s+and\s+([^,:;?]+?)\s*,\s*(?:who|which|what)\b", re.I)
_YES_NO = re.compile(r"^\s*(?:yes|no)\b", re.I)
# words that never claim anything by themselves (a copula, "the", a preposition before the core)
_GLUE = STOP_WORDS | frozenset("was were is are been be being has have had did does do also called named known".split())


def _is_word(token: str) -> bool:
    return bool(re.match(r"\w", token))


def _says_new(word: str, asked: set[str]) -> bool:
    """Whether a word claims something the question does not say: a number, or a content word it lacks."""
    if word.lower() in _GLUE or not _is_word(word):
        return False
    stems = bm25_tokens(word)
    return any(s not in asked for s in stems)


def _whole_names(tokens: list[str], start: int, end: int, answer: str) -> tuple[int, int]:
    """The span widened to the edges of the names it cuts into (a capitalised run around its ends)."""
    names = [n.split() for n in names_in(answer)]
    for name in names:
        size = len(name)
        for i in range(len(tokens) - size + 1):
            if tokens[i : i + size] == name and i <= end and i + size - 1 >= start:
                start, end = min(start, i), max(end, i + size - 1)
    return start, end


def answer_core(answer: str, question: str) -> str:
    """The span of the answer that says what the question does not (see the module's docstring); the
    answer itself where it is no restatement."""
    text = _LEAD_IN.sub("", answer.strip()) or answer.strip()
    matches = list(_TOKEN.finditer(text))
    tokens = [m.group() for m in matches]
    words = [t for t in tokens if _is_word(t)]
    if len(words) <= SHORT_ANSWER_WORDS or _YES_NO.match(text):
        return text
    asked = set(bm25_tokens(question))
    new = [i for i, t in enumerate(tokens) if _says_new(t, asked)]
    if not new:  # nothing beyond the question: of a choice it offers, the option the reply names first
        return chosen_option(text, question) or text
    start, end = _whole_names(tokens, new[0], new[-1], text)
    start, end = _balanced(tokens, start, end)
    core_words = [t for t in tokens[start : end + 1] if _is_word(t)]
    if len(core_words) > MAX_CORE_SHARE * len(words):
        return text
    # the text from the first token to the last as the reply wrote it (its own spacing and punctuation)
    return text[matches[start].start() : matches[end].end()].strip(" ,;:") or text


def chosen_option(reply: str, question: str) -> str | None:
    """Of the options a choice question offers ("..., Michael Tippett or Luigi Cherubini?"), the one the
    reply names first; None when the question offers no choice or the reply names none of them."""
    low = reply.lower()
    options = [o for o in choice_options(question) if 1 < len(o) and len(o.split()) <= MAX_OPTION_WORDS]
    found = {o: low.find(o.lower()) for o in options}
    at = {o: i for o, i in found.items() if i >= 0}
    return min(at, key=at.get) if at else None


def same_answer(a: str, b: str) -> bool:
    """Whether two replies give the same answer: the same words, whatever their case and punctuation."""
    return " ".join(re.findall(r"\w+", a.casefold())) == " ".join(re.findall(r"\w+", b.casefold()))


def set_off_options(question: str) -> list[str] | None:
    """The two options a question sets off inside it (", A, or B,") or opens with ("Between A and B, who ..."), as
    it writes them; None for any other question."""
    match = _CHOICE_INSIDE.search(question) or _BETWEEN.search(question)
    return [o.strip(" ,") for o in match.groups()] if match else None


def choice_options(question: str) -> list[str]:
    """The options a choice question offers, as it writes them, each also as the name it holds ("two scientists
    Ernst Messerschmid" is "Ernst Messerschmid" too); [] when it offers none."""
    if set_off := set_off_options(question):
        options = set_off
    elif match := _CHOICE.search(question):
        options = re.split(r",|\bor\b", match.group(0).rstrip("?"))
    else:
        return []
    options = [o.strip(" ,") for o in options]
    named = [n for o in options for n in names_in(o) if n != o and len(n.split()) > 1]
    return [*options, *named]


def _balanced(tokens: list[str], start: int, end: int) -> tuple[int, int]:
    """The span widened over the brackets and quotes it opens or closes: "43.8 inches (1,110 mm)", "Casablanca"."""
    for _ in range(4):
        span = tokens[start : end + 1]
        if span.count("(") > span.count(")") and end + 1 < len(tokens) and tokens[end + 1] == ")":
            end += 1
        elif span.count(")") > span.count("(") and start > 0 and tokens[start - 1] == "(":
            start -= 1
        elif sum(t in _QUOTES for t in span) % 2 and start > 0 and tokens[start - 1] in _QUOTES:
            start -= 1
        elif sum(t in _QUOTES for t in span) % 2 and end + 1 < len(tokens) and tokens[end + 1] in _QUOTES:
            end += 1
        else:
            break
    return start, end
