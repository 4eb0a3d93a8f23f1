"""Numbers compared by value, not by spelling, for the grounding check (issue 52): "nine" = "9",
"5,000,000" = "5 million" = "US$5m", "Fifty percent" = "50%" = "50 per cent", "nineteen sixty-two" =
"1962", "third" = "3rd", "three quarters" = "3/4" = "0.75"; and the scale counts: "5 million" is not
"5 billion".

Number words become digits through text2num's `alpha2digit` (English): well kept (Allo-Media, MIT, a
Rust core with no dependencies, offline), it reads cardinals and ordinals inside a text, hyphenated and
spaced ("twenty-one", "one hundred and five", "two thousand and three", "third" -> "3rd"), and its
threshold leaves the words "one" and "first" alone where they are rarely numbers ("no one", "the first
of them"). Tried beside it: word2number reads one number per string, not a text; number-parser is
older and has no threshold; numerizer splits years ("19 60 2") and has no threshold; quantulum3 misses
ordinals and years, reads "US$5m" as 5 metre-dollars and takes seconds to import. What none of them
reads is the small regexes here: years said in pairs ("nineteen sixty-two"), a digit before a scale
word ("5 million") or a suffix ("5m", "1.5bn"), percent, currency signs and codes, simple fractions.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from text_to_num import alpha2digit

SOURCE_THRESHOLD = 0  # a passage: every number word is a number (a superset to look answers up in)
CLAIM_THRESHOLD = 2  # an answer: "one", "first" and "zero" stay words (a pronoun or an adverb more often)
_PLACES = Decimal("0.000001")
_UNITS = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUE = {w: i + 1 for i, w in enumerate(_UNITS)} | {w: i + 10 for i, w in enumerate(_TEENS)}
_WORD_VALUE |= {w: 10 * (i + 2) for i, w in enumerate(_TENS)}
_ALT = "|".join
# a year said in pairs: "nineteen sixty-two", "nineteen oh five", "twenty twenty-one"
_YEAR = re.compile(
    rf"(?i)\b(?P<century>{_ALT(_TEENS[1:])}|twenty)[\s-]+(?:(?P<tens>{_ALT(_TENS)})(?:[\s-]+(?P<unit>{_ALT(_UNITS)}))?"
    rf"|(?P<teen>{_ALT(_TEENS)})|o(?:h)?[\s-]+(?P<oh>{_ALT(_UNITS)}))\b"
)
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6}
_DENOMINATORS |= {"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_FRACTION_WORDS = re.compile(
    rf"(?i)\b(?P<count>a|an|one|{_ALT(_UNITS[1:])}|\d{{1,2}})[\s-]+(?P<part>halves|half|"
    rf"{_ALT(d for d in _DENOMINATORS if d not in ('half', 'halves'))})s?\b|\bhalf\b"
)
_AND_A_HALF = re.compile(rf"(?i)\b(?P<whole>\d+|{_ALT(_UNITS + _TEENS + _TENS)})\s+and\s+a\s+half\b")
_SCALE_WORDS = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_SCALE_SUFFIXES = {"bn": 10**9, "mn": 10**6, "mln": 10**6, "tn": 10**12, "trn": 10**12}
_LETTERS = {"k": 10**3, "m": 10**6, "b": 10**9}  # "5m": 5 million, or 5 metres: ambiguous without a currency
# a digit and its scale word ("1.4 millions" too), kept together through alpha2digit
_DIGIT_SCALE = re.compile(rf"(?i)(\d)\s+({_ALT(_SCALE_WORDS)})s?\b")
_CODES = "USD|EUR|GBP|JPY|CNY|RMB|INR|CHF|AUD|CAD|HKD|SGD|NZD|SEK|NOK|DKK|KRW|BRL|ZAR|MXN|RUB"
_CURRENCY_WORDS = r"(?i:dollars?|euros?|pounds?(?: sterling)?|yen|yuan|rupees?|francs?|cents?)"
_NUMBER = re.compile(
    rf"(?<![\w.])(?P<currency>(?:[A-Z]{{0,2}}\$|[€£¥₹₩₽]|(?:{_CODES})\s?|Rs\.?\s?))?(?P<sign>[-−])?"
    r"(?P<digits>\d{1,3}(?:[,\u00a0\u202f\u2009]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:/(?P<denominator>\d{1,2})(?![\d/]))?(?:(?P<ordinal>st|nd|rd|th)(?![^\W\d_]))?"
    rf"(?:\s?(?P<scale>(?i:{_ALT(_SCALE_WORDS)}|{_ALT(_SCALE_SUFFIXES)}))(?i:s)?\b|(?P<letter>[kKmMbB])(?!\w))?"
    rf"(?:\s?(?P<currency_after>{_CODES}|{_CURRENCY_WORDS})\b)?"
    r"(?:\s?(?P<percent>%|(?i:per\s?cent|percent|pct)\b))?"
)


@dataclass(frozen=True)
class Number:
    """A number a text writes: as written, its value, every value it may mean, and whether it is bare."""

    text: str  # as read (number words as digits)
    value: str  # canonical: "5000000", "0.75", "1962"
    values: frozenset[str]  # what it may mean: a percent is also its fraction, "5m" also 5 (metres)
    bare: bool  # no scale, unit, percent or currency: it may stand for a passage's "5 million" in millions


@dataclass(frozen=True)
class Values:
    """The numbers of a passage, to look an answer's numbers up in."""

    exact: frozenset[str]
    loose: frozenset[str]  # the digits before a scale word, a fraction's parts: what only a bare number matches

    def holds(self, number: Number) -> bool:
        """Whether the passage writes this number, in any form (a bare number also as a scale's digits)."""
        return bool(number.values & self.exact) or (number.bare and bool(number.values & self.loose))


def canonical(value: Decimal) -> str:
    """A value as one string: "1200", "0.75", "-3" (six decimal places at most)."""
    try:
        text = f"{value.quantize(_PLACES):f}"
    except InvalidOperation:  # more digits than the decimal context holds: the value as it is
        text = f"{value:f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def _year(match: re.Match) -> str:
    century = _WORD_VALUE.get(match["century"].lower(), 20)
    if match["tens"]:
        rest = _WORD_VALUE[match["tens"].lower()] + (_WORD_VALUE[match["unit"].lower()] if match["unit"] else 0)
    else:
        rest = _WORD_VALUE[(match["teen"] or match["oh"]).lower()]
    return str(century * 100 + rest)


def _fraction(match: re.Match) -> str:
    if not match["part"]:  # "half" by itself
        return "0.5"
    count = match["count"].lower()
    top = int(count) if count.isdigit() else _WORD_VALUE.get(count, 1)
    return canonical(Decimal(top) / Decimal(_DENOMINATORS[match["part"].lower()]))  # "halves" is a key


def _and_a_half(match: re.Match) -> str:
    whole = match["whole"].lower()
    return canonical(Decimal(int(whole) if whole.isdigit() else _WORD_VALUE[whole]) + Decimal("0.5"))


def _vulgar(text: str) -> str:
    """Unicode fractions as decimals: "2½" -> "2.5"."""

    def value(match: re.Match) -> str:
        whole = Decimal(match.group(1) or 0)
        return canonical(whole + Decimal(str(unicodedata.numeric(match.group(2)))))

    return re.sub(r"(\d*)([\u00bc-\u00be\u2150-\u215e])", value, text)


@functools.lru_cache(maxsize=2048)
def digits_for_words(text: str, threshold: int = SOURCE_THRESHOLD) -> str:
    """The text with its number words written as digits ("nine" -> "9", "nineteen sixty-two" -> "1962",
    "three quarters" -> "0.75"), a digit and its scale word kept together ("5million")."""
    text = _AND_A_HALF.sub(_and_a_half, _vulgar(_YEAR.sub(_year, text)))
    text = _DIGIT_SCALE.sub(r"\1\2", _FRACTION_WORDS.sub(_fraction, text))
    try:  # "five million" -> "5000000", "a million" -> "a 1000000"
        return alpha2digit(text, "en", threshold=threshold)
    except (ValueError, TypeError, OverflowError):  # the words are left as they are: an honest, smaller reading
        return text


def _read(match: re.Match) -> Number | None:
    try:
        digits = Decimal(re.sub(r"[,\u00a0\u202f\u2009]", "", match["digits"]))
    except InvalidOperation:
        return None
    sign = -1 if match["sign"] else 1
    currency = bool(match["currency"] or match["currency_after"])
    if match["denominator"]:
        if int(match["denominator"]) == 0:
            return None
        value = sign * digits / Decimal(match["denominator"])
        return Number(match.group(0), canonical(value), frozenset({canonical(value)}), False)
    scale = match["scale"] or ""
    factor = _SCALE_WORDS.get(scale.lower()) or _SCALE_SUFFIXES.get(scale.lower())
    letter = _LETTERS.get((match["letter"] or "").lower())
    value = sign * digits * (factor or letter or 1)
    values = {canonical(value)}
    if letter and not currency:  # "5m" is 5 million or 5 metres
        values.add(canonical(sign * digits))
    if match["percent"]:
        values.add(canonical(value / 100))
    bare = not (factor or letter or match["percent"] or currency)
    return Number(match.group(0), canonical(value), frozenset(values), bare)


def numbers_in(text: str, threshold: int = SOURCE_THRESHOLD) -> tuple[list[Number], str]:
    """The numbers a text writes, in any form, and the text without them (its words, for the word check)."""
    converted = digits_for_words(text, threshold)
    found: list[Number] = []
    for match in _NUMBER.finditer(converted):
        number = _read(match)
        if number:
            found.append(number)
    return found, _NUMBER.sub(" ", converted)


def claimed_numbers(answer: str) -> tuple[list[Number], str]:
    """The numbers an answer claims ("one" and "first" left as words) and its text without them."""
    return numbers_in(answer, CLAIM_THRESHOLD)


@functools.lru_cache(maxsize=512)
def values_in(text: str) -> Values:
    """Every value a passage (or a question) writes, to look an answer's numbers up in."""
    exact: set[str] = set()
    loose: set[str] = set()
    converted = digits_for_words(text)
    for match in _NUMBER.finditer(converted):
        number = _read(match)
        if not number:
            continue
        exact |= number.values
        if not number.bare:  # "5 million" also holds a bare 5 (an answer in millions), "3/4" its 3 and 4
            loose.add(canonical(Decimal(re.sub(r"[,\u00a0\u202f\u2009]", "", match["digits"]))))
        if match["denominator"]:
            loose.add(str(int(match["denominator"])))
    return Values(frozenset(exact), frozenset(loose))
