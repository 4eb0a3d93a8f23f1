"""The sources a model names in its answer, wherever it writes them, taken off the answer.

The generator is asked for a last line "Sources: E1, E3". Real models also write the list at the end
of the answer's own line (`December 11, 1941. Sources: E1`), as "Source:", "Sources -", in brackets
(`Valery Kritskov [E3]`, `[E1, E2]`, `(E2)`), or wrapped (`(Sources: E1)`). Every such list is cut from
the answer and its ids are what the answer cites. An id written in the answer's prose without a
source marker or brackets ("the E3 expo") is left alone. Hand-written: no parser exists for this
house format; each pattern is linear (no nested quantifiers over the same characters).
"""

from __future__ import annotations

import re

_ID = r"[EP]\d{1,4}"
_SEP = r"\s*(?:,|;|&|\band\b)?\s*"
# a list of ids, each optionally in its own brackets: "E1, E3", "[E1][E2]", "E1 and E2"
_IDS = rf"\[?{_ID}\]?(?:{_SEP}\[?{_ID}\]?)*"
# "Sources: E1, E3" (":" / "-" / "–" / "—" or nothing), optionally wrapped in brackets and closed by a full stop
_LABELLED = re.compile(
    rf"[(\[]?\s*\b(?:sources?|references?|citations?|evidence)\s*(?:[:\-–—]\s*|\s)(?P<ids>{_IDS})\s*[)\]]?\.?",
    re.IGNORECASE,
)
# a line that opens with "Sources:" ends the answer, whatever follows it (a list the model garbled)
_SOURCES_LINE = re.compile(r"^\s*sources?\s*[:\-–—].*", re.IGNORECASE | re.MULTILINE | re.DOTALL)
# bracketed ids without a label: "[E3]", "[E1, E2]", "(E2)", "(E1; E4)"
_BRACKETED = re.compile(rf"[\[(]\s*(?P<ids>{_ID}(?:\s*[,;]\s*{_ID})*)\s*[\])]")
_ID_RE = re.compile(_ID)
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_ANSWER_LABEL = re.compile(r"^\s*(?:final\s+)?answer\s*:\s*", re.IGNORECASE)


def split_sources(reply: str) -> tuple[str, list[str]]:
    """(the answer without its source lists, the ids named, in the order first named)."""
    ids: list[str] = []

    def take(match: re.Match) -> str:
        ids.extend(_ID_RE.findall(match.group("ids")))
        return " "

    text = reply
    line = _SOURCES_LINE.search(text)
    if line:
        ids.extend(_ID_RE.findall(line.group(0)))
        text = text[: line.start()]
    text = _BRACKETED.sub(take, _LABELLED.sub(take, text))
    answer = _SPACE_BEFORE_PUNCT.sub(r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()
    answer = _ANSWER_LABEL.sub("", answer, count=1).strip()  # the form the generator is asked for
    return answer, list(dict.fromkeys(ids))
