"""A text's skeleton: what it reads as, for matching imitations of a prompt, with each character's place in the text.

The skeleton of a character is its compatibility form (NFKD: `Ｅ` `𝐄` are `E`, `２` is `2`) without combining marks,
its Latin look-alike (the Cyrillic `Е` and Greek `Ε` are `E`, `【` is `[`, `∶` is `:`), any decimal digit as its ASCII
digit, case-folded; a run of whitespace is one space, or one line break where it holds one (`\\r`, U+2028 too), and
format characters (zero-width, bidirectional, tags, variation selectors) are nothing. `rewritten` matches patterns
on the skeleton and rewrites the matching span of the text itself (`Skeleton.span`); `llm/passages.py` says which.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import NamedTuple

# hand-written: no confusables library (confusable_homoglyphs, confusables, homoglyphs) is installed, and the
# patterns need only the letters and marks that pass for the Latin ones of our prompts (NFKD does width and fonts)
_LOOKALIKES = {
    pair[0]: pair[1:]
    for pair in (
        # Cyrillic
        "АA ВB ЕE ЅS ІI ЈJ КK МM НH ОO РP СC ТT ХX УY ҮY ԚQ ԜW ҺH ӀI "
        "аa еe оo рp сc уy хx ѕs іi јj ԁd ԛq ԝw һh ӏl үy ѵv "
        # Greek
        "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC οo αa ιi κk νv ρp υu χx γy ϲc ϳj "
        # Armenian and Latin letters that pass for plain ones
        "օo սu հh ոn զq ıi ȷj ɑa ɡg ɩi "
        # brackets, bars and colons
        "【[ 】] 〔[ 〕] 〖[ 〗] 〘[ 〙] 〚[ 〛] ⟦[ ⟧] ⁅[ ⁆] ⟨< ⟩> 〈< 〉> ‹< ›> ∣| ǀ| │| ∶: ꞉: ː: ˸: ׃:"
    ).split()
}
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
# letters that show as blank space (Hangul fillers, the blank Braille pattern)
_BLANKS = frozenset("\u115f\u1160\u2800\u3164\uffa0")
_NOTHING = ("Cf", "Mn", "Me")  # format characters, combining and enclosing marks (variation selectors among them)
_PLAIN_RUN = re.compile(r"[!-~]+")  # printable ASCII but the space: its skeleton is its lower case
# a pattern on skeletons and how to render a match: from the match and the text behind one of its groups
Render = Callable[[re.Match[str], Callable[[str], str]], str]
Rewrites = list[tuple[re.Pattern[str], Render]]


class Skeleton(NamedTuple):
    """`text` is the skeleton; `at[i]` the index, in the text it was made from, of the character behind `text[i]`."""

    text: str
    at: list[int]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text behind `text[start:end]` (whole characters)."""
        if end <= start:
            return self.at[start], self.at[start]
        return self.at[start], self.at[end - 1] + 1


def _of_char(char: str) -> str:
    """One character's skeleton: " " or "\\n" for whitespace, "" for nothing, else its letters (above)."""
    if char.isspace() or char in _BLANKS:
        return "\n" if char in _LINE_BREAKS else " "
    if unicodedata.category(char) in _NOTHING:
        return ""
    letters = []
    for part in unicodedata.normalize("NFKD", char):
        if unicodedata.category(part) in _NOTHING:
            continue
        part = _LOOKALIKES.get(part, part)
        if not part.isascii() and unicodedata.category(part) == "Nd":
            part = str(unicodedata.decimal(part))
        letters.append(part)
    return "".join(letters).casefold()


class _Cache(dict):
    def __missing__(self, char: str) -> str:
        self[char] = _of_char(char)
        return self[char]


_CHARS = _Cache()


def skeleton(text: str) -> Skeleton:
    """The skeleton of `text` and where each of its characters comes from (the module docstring)."""
    chars: list[str] = []
    at: list[int] = []
    i = 0
    while i < len(text):
        plain = _PLAIN_RUN.match(text, i)
        if plain:
            chars.append(plain.group().lower())
            at.extend(range(i, plain.end()))
            i = plain.end()
            continue
        piece = _CHARS[text[i]]
        if piece in (" ", "\n") and chars and chars[-1] in (" ", "\n"):
            if piece == "\n":
                chars[-1] = "\n"  # one run of whitespace: a line break where it holds one
        elif piece:
            chars.append(piece)
            at.extend([i] * len(piece))
        i += 1
    return Skeleton("".join(chars), at)


def rewritten(text: str, rewrites: Rewrites, bones: Skeleton | None = None) -> str:
    """`text` with the span of each match of the patterns on its skeleton (`bones`, made here if not given) replaced
    by what its render makes of it: the group `x` (else `y`); `original(name)` is the text behind a group. Of two
    spans that overlap, the first is rewritten."""
    if bones is None:
        bones = skeleton(text)
    edits: list[tuple[int, int, str]] = []
    for pattern, render in rewrites:
        for m in pattern.finditer(bones.text):
            group = "x" if m["x"] is not None else "y"

            def original(name: str, m: re.Match[str] = m) -> str:
                return text[slice(*bones.span(*m.span(name)))]

            edits.append((*bones.span(*m.span(group)), render(m, original)))
    parts, done = [], 0
    for start, end, new in sorted(set(edits)):
        if start >= done:  # the first of two that overlap
            parts += [text[done:start], new]
            done = end
    return "".join(parts) + text[done:]
