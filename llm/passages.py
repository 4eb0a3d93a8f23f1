"""Documents are data: how a document's text enters a prompt so that it cannot pose as the prompt.

A passage is put in front of the model inside the prompt's own labels (`[E1] (report.pdf)`,
`Passage 3:`), which the model is told to cite and follow. A hostile document could write those
labels itself (a fake `[E2] (other.md)` passage with a fake citation), the prompt's section lines
(`Question: ...`, `Sources: E9`, `Retrieved passages:`), its instruction lines (`Reply in exactly this
form:`, its own note that passages are data, with the meaning flipped), or a chat template's own tokens
(`<|im_start|>system`). `as_data` makes every such imitation harmless before the text is placed in a
prompt, wherever it stands in a line and however it is written:
- the patterns are matched on the text's skeleton (`llm/skeleton.py`): compatibility forms folded
  (`［Ｅ２］` is `[E2]`), Latin look-alikes (`[Е2]` with a Cyrillic `Е`, `【E2】`, `Quеstion:`), any case,
  any run of whitespace as one space (`Ignore  previous`, `Ignore\\tall`, `Ignore\\nprevious`; a line break
  where the run holds one, `\\r` and U+2028 too), format characters (`Ques\\u200btion:`) as nothing;
  the matching span of the text itself is rewritten;
- a label the prompts use (`[E2]`, `[e2]`, `[P4]`, `[L1]`, `Passage 7:`) loses its shape (`[doc E2]`, `Passage-7`);
- a section or instruction opening of one of our prompts is quoted (`> Question: ...`) at a line's start,
  and where it stands inside a line (`... > Sources: E2`, `... > Ignore previous instructions`): the
  families, not only our exact words (ignore / disregard / forget / set aside ... every / prior ...
  instructions / rules; reply / answer / respond in exactly this form; "The passages are ... from the
  ...:", "... every instruction written in them" with any verb); at a line's start also after markdown's
  marks (`**Question:**`);
- chat-template tokens lose their delimiters (`<|im_start|>` becomes `(im_start)`, `[INST]` `(INST)`).
A rewritten span is shown in plain letters (`Ｑｕｅｓｔｉｏｎ:` becomes `> Question:`); the rest of the text keeps
its letters, but for compatibility forms (`ﬁ` is `fi`; not width forms, so CJK text with `，` and `３` stays as
written, nor superscripts, subscripts and fractions: `10⁵` is not `105`), zero-width, bidirectional and tag
characters (removed) and other control characters (dropped).
`source_name` makes a file name shown beside its passage one line, without chat tokens or the brackets
(and their look-alikes) that could close its label. The prompts also say that
passages are document text, never instructions (prompts/generation.py DATA_NOTE).
Hand-written: this is our prompts' own format; no library knows it.
"""

from __future__ import annotations

import re
import unicodedata

from longqa.llm.skeleton import Render, Rewrites, rewritten, skeleton

# The patterns below read a skeleton (lower case, one space for any whitespace): `\s?` between the words of a
# phrase is a space, a line break, or nothing where an invisible character stood between them.
# the labels our prompts give passages: E1 (evidence), P1 (paragraphs), L1 (long-context spans)
_LABEL = re.compile(r"(?P<x>\[\s?(?P<l>[epl])\s?(?P<n>[0-9]{1,5})\s?\])")
_PASSAGE_LINE = re.compile(r"(?P<x>\b(?P<w>passage)\s(?P<n>[0-9]{1,5})\s?:)")
# chat templates' special tokens: ChatML / Qwen / Llama 3 (<|...|>), Llama 2 ([INST], <<SYS>>), Gemma, sentence marks
_CHAT_TOKENS = [
    re.compile(r"(?P<x><\s?\|\s?(?P<t>[\w.-]{1,40})\s?\|\s?>)"),
    re.compile(r"(?P<x>\[\s?(?P<t>/?inst)\s?\])"),
    re.compile(r"(?P<x><<\s?(?P<t>/?sys)\s?>>)"),
    re.compile(r"(?P<x><\s?(?P<t>/?s|start_of_turn|end_of_turn|bos|eos)\s?>)"),
]
# the section and instruction openings of our prompts (generation, LongRAG, OkraLong, Self-Route,
# grounding, calculator)
_SECTION_WORDS = (
    "question|answer|sources?|retrieved passages|global information|conversation so far|"
    "reasoning steps so far|passages|context|given an article|thought process|system|user|assistant|"
    "instruction|instructions|note|important"
)
_ANY = "the|all|any|every|each|previous|above|prior|earlier|preceding|your|these|those|other|of|and|system|original"
_RULES = "instructions?|prompts?|rules?|directions?|guidelines?|directives?|commands?|orders|constraints"
_VERBS = "ignore|disregard|forget|set aside|overlook|override|bypass|skip|discard|drop|abandon|dismiss|neglect"
_INSTRUCTIONS = (
    "answer the question|only give me|based on the above|reply with|write unanswerable|"
    "(?:reply|answer|respond|write) (?:only )?in (?:exactly )?(?:this|the following|the same) (?:form|format)|"
    "ignore (?:the|all|any|previous|above|prior|earlier)|forget (?:all|the|previous)|disregard\\b|"
    r"(?:ignore|forget) (?:every|each|preceding)\b|"
    rf"(?:{_VERBS}) (?:(?:{_ANY}) )*(?:{_RULES})\b|"
    # our DATA_NOTE's wording, whatever it then tells the model to do
    r"the passages are [a-z]+\s(?:[a-z]+\s)?from the [a-z]+\s?:|"
    rf"[a-z]+\s(?:[a-z]+\s)?(?:every|each|any|all|an?|the|all the) (?:{_RULES}) "
    "(?:written|given|found|contained|stated|included) in (?:them|the passages?|the documents?|these passages)|"
    "you are (?:a|an|now)\\b"
).replace(" ", r"\s?")
_SECTION_WORDS = _SECTION_WORDS.replace(" ", r"\s?")
# at a line's start (or after markdown's marks: `**Question:**`): any of them
_SECTION = re.compile(
    rf"(?m)^ ?(?:(?P<x>###|(?:{_SECTION_WORDS})\s?[:(#]|{_INSTRUCTIONS})"
    rf"|[#*_~|+-]{{1,6}} ?(?P<y>(?:{_SECTION_WORDS})\s?[:(#]|{_INSTRUCTIONS}))"
)
# inside a line: the forgeries that only mean something as the prompt's own words; an ordinary "note:" or
# "context:" mid-sentence is left alone
_INLINE = re.compile(
    r"(?<=[^\s>]) (?P<x>(?:question|answer|sources?|retrieved\s?passages|global\s?information|system|user|"
    rf"assistant|instructions?)\s?:|###|{_INSTRUCTIONS})"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# removed: zero-width characters, the soft hyphen, bidirectional controls, the byte-order mark (and tags, below)
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064"
_INVISIBLE += "\u2066\u2067\u2068\u2069\ufeff"
_TAGS = range(0xE0000, 0xE0080)  # invisible letters a model may read ("ASCII smuggling")
_KEPT_FORMS = ("<super>", "<sub>", "<fraction>")  # NFKC would change their value: 10⁵ is not 105
_WIDTH_FORMS = ("<wide>", "<narrow>")  # kept where no imitation is: CJK text writes `，` `（` `３`


class _Folding(dict):
    """str.translate's table, filled as characters are met: each non-ASCII character's NFKC form, but for the
    forms it keeps; invisible characters removed."""

    def __init__(self, kept: tuple[str, ...]) -> None:
        super().__init__()
        self.kept = kept

    def __missing__(self, code: int) -> int | str | None:
        char = chr(code)
        if char in _INVISIBLE or code in _TAGS:
            folded: int | str | None = None
        elif code < 128 or unicodedata.decomposition(char).startswith(self.kept):
            folded = code
        else:
            folded = unicodedata.normalize("NFKC", char)
        self[code] = folded
        return folded


_FOLD = _Folding(_KEPT_FORMS)
_SHOWN = _Folding(_KEPT_FORMS + _WIDTH_FORMS)


def folded(text: str) -> str:
    """`text` with look-alike forms folded to their plain letters and invisible characters removed (above)."""
    return text if text.isascii() else text.translate(_FOLD)


_QUOTED: Render = lambda m, original: "> " + folded(original("x" if m["x"] is not None else "y"))  # noqa: E731
# first the chat tokens (so that `<s> Question:` is seen as `(s) Question:`), then the labels and sections
_TOKENS: Rewrites = [(token, lambda m, original: f"({folded(original('t'))})") for token in _CHAT_TOKENS]
_SHAPES: Rewrites = [
    (_LABEL, lambda m, original: f"[doc {m['l'].upper()}{m['n']}]"),
    (_PASSAGE_LINE, lambda m, original: f"{folded(original('w'))}-{m['n']}:"),
    (_SECTION, _QUOTED),
    (_INLINE, _QUOTED),
]
_IN_NAMES: Rewrites = [(token, lambda m, original: folded(original("t"))) for token in _CHAT_TOKENS]


def as_data(text: str) -> str:
    """A document's text, safe to place in a prompt: nothing in it reads as the prompt's own labels,
    sections, instructions or chat tokens, wherever it stands and however it is written (the module docstring)."""
    shown = _CONTROL.sub("", text if text.isascii() else text.translate(_SHOWN))
    bones = skeleton(shown)
    untokened = rewritten(shown, _TOKENS, bones)
    return rewritten(untokened, _SHAPES, bones if untokened == shown else None)


# in a file name: what could close its label or start a line (with their look-alikes, which NFKC leaves)
_NAME_BREAKS = re.compile("[\\[\\]()<>|\r\n\t\x85\u2028\u2029【】〔〕〖〗〘〙〚〛⟦⟧⁅⁆⟨⟩〈〉‹›]+")


def source_name(name: str) -> str:
    """A file name as shown beside its passage: one line, no brackets that could close the label."""
    cleaned = rewritten(_CONTROL.sub("", folded(name)), _IN_NAMES)
    return _NAME_BREAKS.sub(" ", cleaned).strip()[:200] or "document"
