"""Put back together words a PDF extractor broke apart: letter-spaced headings ("T a b l e 1 .",
drawn with tracking, which every extractor measured reads as separate letters) and words split
where glyphs are placed one by one ("mo del", "pro duced").

A split is only undone when the whole word occurs intact elsewhere in the same document (its own
vocabulary) and a piece is not a word there: no dictionary ships with longqa, and a document names
its own terms. Letter-spaced runs whose words the document does not know are still joined, and cut
again where the case or the kind of character changes ("Table1.Interface" -> "Table 1. Interface").
Hand-written: no permissively licensed extractor measured repairs these (bench/README.md).
"""

from __future__ import annotations

import functools
import re
from collections import Counter

MAX_PARTS = 6  # pieces of one word rejoined at most ("pro duc ed" is 3)
MIN_LETTERS = 3  # single letters in a row that make a letter-spaced run
MIN_SPELLED = 5  # single letters that make a run joined even when it spells no word the document knows
MAX_LETTER_GAP = 4  # spaces a layout extractor may print beside a wide letter of a letter-spaced word
MAX_RUN = 200  # tokens in a letter-spaced run considered at most (a bound on the work per line)
# short words that stand on their own: a piece that is one of these is a word, not a fragment
_SHORT_WORDS = frozenset("a i an in on of to is it as at be by or we he if no so up us do go me my am".split())
_TOKEN = re.compile(r"\S+")
_HYPHEN_END = re.compile(r"(?<![\w-])(?P<head>[^\W\d_]+)-[ \t]*$")
_LEADING_WORD = re.compile(r"^\s*(?P<word>[^\W\d_][^\s]*)\s?")
_PUNCT = ".,;:!?)]"
_OPENING = "([\"'“‘"
_CLOSING = ".,;:!?)]\"'”’"
_CUT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])|(?<=[.,;:!?])(?=\w)")


def repair_words(pages: list[str]) -> list[str]:
    """The pages with letter-spaced runs and split words rejoined (see the module's docstring);
    line breaks and the spacing of aligned table columns (three or more spaces) are kept."""
    vocabulary = _vocabulary(pages)
    return [
        "\n".join(_rejoin_hyphenated([_repair_line(line, vocabulary) for line in page.split("\n")], vocabulary))
        for page in pages
    ]


def _rejoin_hyphenated(lines: list[str], vocabulary: Counter[str]) -> list[str]:
    """A word hyphenated at a line's end ("discov-" / "ered ...") moved whole onto the first line:
    without its hyphen when the document knows the joined word or a part is not a word itself,
    with it otherwise ("mixed-mode")."""
    for i in range(len(lines) - 1):
        m = _HYPHEN_END.search(lines[i])
        if not m:
            continue
        nxt = _LEADING_WORD.match(lines[i + 1])
        if not nxt or not nxt.group("word")[0].islower():
            continue
        head, tail = m.group("head"), nxt.group("word")
        tail_core = _core(tail)
        joined = head + tail_core
        keep = not vocabulary[joined.lower()] and _known(head, vocabulary) and _known(tail_core, vocabulary)
        lines[i] = lines[i][: m.start("head")] + (head + "-" + tail if keep else head + tail)
        lines[i + 1] = lines[i + 1][: nxt.start("word")] + lines[i + 1][nxt.end() :]
    return lines


def _vocabulary(pages: list[str]) -> Counter[str]:
    words: Counter[str] = Counter()
    for page in pages:
        for token in _TOKEN.findall(page):
            core = _core(token)
            if len(core) >= 2 and core.isalpha():
                words[core.lower()] += 1
    return words


@functools.lru_cache(maxsize=65_536)
def _core(token: str) -> str:
    """The token without its opening and closing punctuation ("(model)," -> "model")."""
    return token.lstrip(_OPENING).rstrip(_CLOSING)


def _known(word: str, vocabulary: Counter[str]) -> bool:
    w = word.lower()
    return w in _SHORT_WORDS or vocabulary[w] >= 2


def _repair_line(line: str, vocabulary: Counter[str]) -> str:
    if " " not in line.strip():
        return line
    out: list[str] = []
    for run in _runs(line):
        if isinstance(run, str):
            out.append(run)
            continue
        tokens = [t for t, _ in run]
        repaired = _repair_run(tokens, vocabulary) if len(tokens) > 1 else tokens
        out.append("".join(t + gap for t, gap in run) if repaired == tokens else " ".join(repaired) + run[-1][1])
    return "".join(out)


def _runs(line: str) -> list[str | list[tuple[str, str]]]:
    """The line as its leading blank and runs of (token, the gap after it): tokens one or two
    spaces apart, or up to four beside a single letter (a letter-spaced heading); wider gaps part
    table cells."""
    matches = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(line)]
    out: list[str | list[tuple[str, str]]] = [line[: matches[0][1]]]
    run: list[tuple[str, str]] = []
    for k, (token, _, end) in enumerate(matches):
        gap = line[end : matches[k + 1][1]] if k + 1 < len(matches) else line[end:]
        run.append((token, gap))
        nxt = matches[k + 1][0] if k + 1 < len(matches) else ""
        joins = nxt and (len(gap) <= 2 or (len(gap) <= MAX_LETTER_GAP and 1 in (len(token), len(nxt))))
        if not joins:
            out.append(run)
            run = []
    return out


def _repair_run(tokens: list[str], vocabulary: Counter[str]) -> list[str]:
    if _has_letter_run(tokens[:MAX_RUN]):
        tokens = _join_letter_spaced(tokens[:MAX_RUN], vocabulary) + tokens[MAX_RUN:]
    # a split word has a piece that is no word: where MAX_PARTS tokens in a row are all words, no join starts
    fragment = [_core(t).isalpha() and not _known(_core(t), vocabulary) for t in tokens]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        starts = i + 1 < len(tokens) and tokens[i][0].isalpha() and tokens[i + 1][0].islower()
        joined = _join_split_word(tokens, i, vocabulary) if starts and any(fragment[i : i + MAX_PARTS]) else None
        if joined:
            word, i = joined
            out.append(word)
        else:
            out.append(tokens[i])
            i += 1
    return out


def _join_split_word(tokens: list[str], i: int, vocabulary: Counter[str]) -> tuple[str, int] | None:
    """("model", i + 2) for tokens ["mo", "del", ...] at i: the longest join the document knows,
    of pieces that are not all words themselves, with no punctuation inside."""
    for j in range(min(len(tokens), i + MAX_PARTS), i + 1, -1):
        parts = tokens[i:j]
        if any(p[-1] in _PUNCT or not p[0].isalpha() for p in parts[:-1]) or not parts[-1][0].isalpha():
            continue
        if any(p[:1].isupper() for p in parts[1:]):
            continue
        word = "".join(parts)
        core = _core(word)
        if core.isalpha() and vocabulary[core.lower()] >= 1:
            if not all(_known(_core(p), vocabulary) for p in parts):
                return word, j
    return None


def _join_letter_spaced(tokens: list[str], vocabulary: Counter[str]) -> list[str]:
    """Each stretch of short tokens (two characters at most) holding MIN_LETTERS single letters in
    a row, joined and cut again into the words the document knows, or at case and digit changes."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        j = i
        while j < len(tokens) and len(tokens[j]) <= 2 and not (j > i and _numbers(tokens[j - 1], tokens[j])):
            j += 1
        if j == i:  # a longer token
            out.append(tokens[i])
            i += 1
            continue
        stretch = tokens[i:j]
        segmented = _segment("".join(stretch), vocabulary) if _has_letter_run(stretch) else []
        letters = sum(len(t) == 1 and t.isalpha() for t in stretch)
        if segmented and (letters >= MIN_SPELLED or any(_known(_core(w), vocabulary) for w in segmented)):
            out.extend(segmented)
        else:
            out.extend(stretch)
        i = j
    return out


def _numbers(a: str, b: str) -> bool:
    """Two numbers side by side (table cells, "1 2"): not one letter-spaced word."""
    return a[0].isdigit() and b[0].isdigit()


def _has_letter_run(tokens: list[str]) -> bool:
    run = 0
    for t in tokens:
        run = run + 1 if len(t) == 1 and t.isalpha() else 0
        if run >= MIN_LETTERS:
            return True
    return False


def _segment(text: str, vocabulary: Counter[str]) -> list[str]:
    """ "Table1.InterfaceIntroduction" -> ["Table", "1.", "Interface", "Introduction"]; a piece
    made of known words with no case change between them ("tablesummary") is split by them."""
    pieces: list[str] = []
    for piece in _CUT.split(text):
        if not piece:
            continue
        if piece[0] in _PUNCT and pieces:
            pieces[-1] += piece
            continue
        pieces.extend(_split_known(piece, vocabulary))
    return pieces


def _split_known(piece: str, vocabulary: Counter[str]) -> list[str]:
    core = _core(piece)
    if not core.isalpha() or _known(core, vocabulary) or len(core) > 40:
        return [piece]
    # fewest known words covering the piece exactly (dynamic programming over cut points)
    n = len(piece)
    best: list[list[str] | None] = [None] * (n + 1)
    best[0] = []
    for end in range(1, n + 1):
        for start in range(max(0, end - 30), end):
            prev = best[start]
            word = piece[start:end]
            core = _core(word)
            if (
                prev is not None
                and len(word) >= 2
                and core.isalpha()
                and (vocabulary[core.lower()] or _known(core, vocabulary))
            ):
                if best[end] is None or len(prev) + 1 < len(best[end]):
                    best[end] = [*prev, word]
    return best[n] or [piece]
