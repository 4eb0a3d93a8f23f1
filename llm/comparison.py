"""Which of two came first is looked up, not generated: for a question that offers two options and asks which is
older, younger, earlier or later ("Who was born first, Marino Girolami or Daniel Myrick?"), the date each option's
passage gives next to its name is compared. A small model reading both dates still named the wrong one (the 1.5B:
"Daniel Myrick" for a 1914 against a 1963 birth, evals/README ninth round); the arithmetic of dates is no place for
it. Undecided (None) wherever a date is missing, the two cannot be ordered at the precision both are written in, or
the question asks about an end other than a death (closed, dissolved): the generator answers then, as before.

Hand-written: date-extraction libraries (dateparser, datefinder) read one date in a string or every date-like token
in a text; the part here is which date belongs to which option, which none of them does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from longqa.llm.answer_core import set_off_options
from longqa.retrieval.search.links import names_in

NEAR = 300  # characters after an option's name where its date is looked for
MAX_QUESTION = 400  # characters: a longer question is not read as a two-option comparison (bounds the regexes' work)
MAX_OPTION = 120  # characters of one option
_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = r"(?P<{g}>jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|aug(?:ust|\.)?|"
_MONTH += r"sep(?:tember|t?\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?)"
_DATE = re.compile(
    rf"(?i)\b(?:(?P<d1>\d{{1,2}})\s+{_MONTH.format(g='m1')}\s+(?P<y1>\d{{4}})"
    rf"|{_MONTH.format(g='m2')}\s+(?:(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?P<y2>\d{{4}})"
    r"|(?P<y3>(?<![\d.,$£€-])(?:1[0-9]{3}|20[0-9]{2})(?![\d%]|\s*(?:[-–]\s*\d|km|m\b|ft|people|kg)))"
    r")\b"
)
_EARLIER = re.compile(r"(?i)\b(?:first|earlier|earliest|older|oldest|sooner)\b")
_ORDINAL = re.compile(r"(?i)\b(?:the|a|its|their|his|her)\s+first\b")  # "the first woman to ...": not a time asked
_LATER = re.compile(r"(?i)\b(?:later|latest|younger|youngest|more recent(?:ly)?|most recent(?:ly)?|newer|newest)\b")
_DEATH = re.compile(r"(?i)\b(?:die[ds]?|death|passed away)\b")  # a person's second date: "(1914 – 20 February 1994)"
_ENDS = re.compile(r"(?i)\b(?:end(?:ed|s)?|clos(?:ed|es)|dissolved|defunct|retire[ds]?|demolished|abolished)\b")
_YEAR_ASKED = re.compile(r"(?i)^\s*(?:in\s+)?(?:what|which)\s+year\b|\bthe year\b")
_AFTER_OPTION = re.compile(
    r"(?i)\s+(?:(?:was|were|is|are|has|had|did|came)\b.*|(?:opened|founded|established|formed|released|built|born|"
    r"created|published|started|launched|made|written|fought|signed|decided))$"
)
_AFTER_COLON = re.compile(r":\s*([^:;?]+?),?\s+or\s+([^:;?]+?)\s*\?\s*$", re.I)
_AT_END = re.compile(r",\s*([^,:;?]+?),?\s+or\s+([^,:;?]+?)\s*\?\s*$", re.I)
_LABEL = re.compile(r"^\s*Passage \d+:\s*\n", re.I)


@dataclass(frozen=True)
class When:
    """A date as written: its year, and its month and day where the text gives them."""

    year: int
    month: int | None = None
    day: int | None = None

    def before(self, other: When) -> bool | None:
        """Whether it is earlier; None when the two cannot be ordered at the precision both are written in."""
        for mine, theirs in ((self.year, other.year), (self.month, other.month), (self.day, other.day)):
            if mine is None or theirs is None:
                return None
            if mine != theirs:
                return mine < theirs
        return None  # the same date


@dataclass(frozen=True)
class Compared:
    """The option the dates pick, the answer (the option, or its year where the question asks for the year), each
    option's date and the passage ids they were read in."""

    option: str
    answer: str
    dates: dict[str, When]
    sources: dict[str, str]

    def expression(self) -> str:
        return " < ".join(f"{o} ({_written(w)})" for o, w in sorted(self.dates.items(), key=lambda d: _key(d[1])))


def asked(question: str) -> tuple[list[str], Literal["earlier", "later"]] | None:
    """(the two options, which one is asked for) for a question that asks which of two came first or last; None for
    any other question, or one about an end other than a death (a closing, a dissolution)."""
    if len(question) > MAX_QUESTION:
        return None
    earlier, later = bool(_EARLIER.search(_ORDINAL.sub(" ", question))), bool(_LATER.search(question))
    if earlier == later or _ENDS.search(question):
        return None
    match = _AFTER_COLON.search(question) or _AT_END.search(question)
    offered = set_off_options(question) or (list(match.groups()) if match else None)
    if not offered:
        return None
    options = [_option(o) for o in offered]
    if (
        not all(0 < len(o) <= MAX_OPTION and re.search(r"\w", o) for o in options)
        or options[0].lower() == options[1].lower()
    ):
        return None
    return options, "earlier" if earlier else "later"


def _option(text: str) -> str:
    """An option as the question names it: a leading description ("two scientists Ernst Messerschmid") left out."""
    text = _AFTER_OPTION.sub("", text.strip(" \"'"))  # "B was founded first", "B opened"
    names = [n for n in names_in(text) if len(n) < len(text)]
    if names and not text[:1].isupper():
        return max(names, key=len)
    return text


def compared(question: str, passages: list[dict]) -> Compared | None:
    """The option the passages' dates pick for a which-came-first question (its year where the question asks for the
    year); None when undecided."""
    found = asked(question)
    if not found:
        return None
    options, which = found
    death = bool(_DEATH.search(question))
    dates, sources = {}, {}
    for option in options:
        dated = date_of(option, passages, death=death)
        if dated is None:
            return None
        dates[option], sources[option] = dated
    first, second = options
    before = dates[first].before(dates[second])
    if before is None:
        return None
    option = first if before == (which == "earlier") else second
    answer = str(dates[option].year) if _YEAR_ASKED.search(question) else option
    return Compared(option=option, answer=answer, dates=dates, sources=sources)


def date_of(option: str, passages: list[dict], death: bool = False) -> tuple[When, str] | None:
    """(the date written next to the option's name, the passage id): in a passage that is about it (its title) first,
    else where the name is followed by a bracket ("Daniel Myrick (born September 3, 1963)"); the first date within
    NEAR characters after the name. `death`: the second date of the bracket after a person's name ("Marino Girolami
    (1 February 1914 – 20 February 1994)"), none where the bracket holds one date."""
    name = name_pattern(option)
    ranked = sorted(passages, key=lambda p: not _titled(name, p["text"]))
    for passage in ranked:
        text = passage["text"]
        for mention in name.finditer(text):
            after = text[mention.end() : mention.end() + NEAR]
            bracketed = after.lstrip().startswith("(")
            if death:
                dates = list(_DATE.finditer(after.split(")", 1)[0])) if bracketed else []
                if len(dates) >= 2:
                    return _when(dates[1]), passage["id"]
                continue
            if not (bracketed or _titled(name, text)):
                continue
            if date := _DATE.search(after):
                return _when(date), passage["id"]
    return None


def name_pattern(option: str) -> re.Pattern[str]:
    """The option's name as a pattern: whole words, any case, with or without a leading "the"."""
    return re.compile(r"(?<!\w)(?:the\s+)?" + re.escape(re.sub(r"(?i)^the\s+", "", option)) + r"(?!\w)", re.I)


def title_end(name: re.Pattern[str], text: str) -> int | None:
    """Where the title line that names the passage (or one of the passages merged into it) ends; None where no
    title line is the name."""
    label = _LABEL.match(text)
    body_start = label.end() if label else 0
    first = re.match(r"\s*([^\n]*)", text[body_start:])
    if first and name.fullmatch(first.group(1).strip()):
        return body_start + first.end()
    titled = re.search(r"^Passage \d+:\s*\n\s*" + name.pattern + r"\s*$", text, re.I | re.M)
    return titled.end() if titled else None


def _titled(name: re.Pattern[str], text: str) -> bool:
    """Whether the passage (or one of the passages merged into it) is about the name: its title line."""
    return title_end(name, text) is not None


def _when(match: re.Match[str]) -> When:
    year = int(match["y1"] or match["y2"] or match["y3"])
    month_word = match["m1"] or match["m2"]
    month = next((i + 1 for i, m in enumerate(_MONTHS) if month_word and m.startswith(month_word.lower()[:3])), None)
    day = match["d1"] or match["d2"]
    return When(year, month, int(day) if day and month else None)


def _key(when: When) -> tuple[int, int, int]:
    return when.year, when.month or 0, when.day or 0


def _written(when: When) -> str:
    if when.month is None:
        return str(when.year)
    month = _MONTHS[when.month - 1].capitalize()
    return f"{when.day} {month} {when.year}" if when.day else f"{month} {when.year}"
