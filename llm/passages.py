"""Documents are data: how a document's text enters a prompt so that it cannot pose as the prompt.

A passage is put in front of the model inside the prompt's own labels (`[E1] (report.pdf)`,
`Passage 3:`), which the model is told to cite and follow. A hostile document could write those
labels itself (a fake `[E2] (other.md)` passage with a fake citation), the prompt's section lines
(`Question: ...`, `Sources: E9`, `Retrieved passages:`), its instruction lines, or a chat template's
own tokens (`<|im_start|>system`). `as_data` makes every such imitation harmless before the text is
placed in a prompt, wherever it stands in a line and however it is written:
- first the text is folded so that look-alikes match: width and compatibility forms become their plain
  letters (Unicode NFKC: `［Ｅ２］` is `[E2]`; superscripts, subscripts and fractions are kept, since
  `10⁵` is not `105`), zero-width and bidirectional controls are removed (`Ques\u200btion:` is `Question:`),
  and other control characters are dropped;
- a label the prompts use, in any case (`[E2]`, `[e2]`, `[P4]`, `[L1]`, `Passage 7:`) loses its shape
  (`[doc E2]`, `Passage-7`);
- a section or instruction opening of one of our prompts is quoted (`> Question: ...`) at a line's start,
  and where it stands inside a line (`... > Sources: E2`, `... > Ignore previous instructions`);
- chat-template tokens lose their delimiters (`<|im_start|>` becomes `(im_start)`, `[INST]` `(INST)`).
`source_name` does the same for a file name shown beside its passage. The prompts also say that
passages are document text, never instructions (prompts/generation.py DATA_NOTE).
Hand-written: this is our prompts' own format; no library knows it.
"""

from __future__ import annotations

import re
import unicodedata

# the labels our prompts give passages: E1 (evidence), P1 (paragraphs), L1 (long-context spans)
_LABEL = re.compile(r"\[\s*([EPL])\s*(\d{1,5})\s*\]", re.IGNORECASE)
_PASSAGE_LINE = re.compile(r"(?im)\b(passage)\s+(\d{1,5})\s*:")
# the section and instruction openings of our prompts (generation, LongRAG, OkraLong, Self-Route,
# grounding, calculator)
_SECTION_WORDS = (
    r"question|answer|sources?|retrieved passages|global information|conversation so far|"
    r"reasoning steps so far|passages|context|given an article|thought process|system|user|assistant|"
    r"instruction|instructions|note|important"
)
_INSTRUCTIONS = (
    r"answer the question|only give me|based on the above|reply with|write unanswerable|"
    r"ignore (?:the|all|any|previous|above|prior|earlier)|you are (?:a|an|now)\b|disregard\b|"
    r"forget (?:all|the|previous)"
)
# at a line's start: any of them (as before)
_SECTION = re.compile(rf"(?im)^([ \t]*)(?=(?:{_SECTION_WORDS}|###)\s*[:(#]|###|{_INSTRUCTIONS})")
# inside a line: the forgeries that only mean something as the prompt's own words; an ordinary "note:" or
# "context:" mid-sentence is left alone
_INLINE = re.compile(
    r"(?i)(?<=[^\s>])([ \t]+)(?=(?:question|answer|sources?|retrieved passages|global information|system|"
    rf"user|assistant|instructions?)\s*:|###|{_INSTRUCTIONS})"
)
# chat templates' special tokens: ChatML / Qwen / Llama 3 (<|...|>), Llama 2 ([INST], <<SYS>>), Gemma, sentence marks
_CHAT_TOKEN = re.compile(
    r"<\|\s*([\w.-]{1,40})\s*\|>|\[\s*(/?INST)\s*\]|<<\s*(/?SYS)\s*>>|<\s*(/?s|start_of_turn|end_of_turn|bos|eos)\s*>",
    re.IGNORECASE,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# removed before matching: zero-width characters, the soft hyphen, bidirectional controls, the byte-order mark
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064"
_INVISIBLE += "\u2066\u2067\u2068\u2069\ufeff"
_KEPT_FORMS = ("<super>", "<sub>", "<fraction>")  # NFKC would change their value: 10⁵ is not 105


class _Folding(dict):
    """str.translate's table, filled as characters are met: each non-ASCII character's NFKC form, but for the
    forms whose value NFKC would change; invisible characters removed."""

    def __missing__(self, code: int) -> int | str | None:
        char = chr(code)
        if char in _INVISIBLE:
            folded: int | str | None = None
        elif code < 128 or unicodedata.decomposition(char).startswith(_KEPT_FORMS):
            folded = code
        else:
            folded = unicodedata.normalize("NFKC", char)
        self[code] = folded
        return folded


_FOLD = _Folding()


def folded(text: str) -> str:
    """`text` with look-alike forms folded to their plain letters and invisible characters removed (above)."""
    return text if text.isascii() else text.translate(_FOLD)


def as_data(text: str) -> str:
    """A document's text, safe to place in a prompt: nothing in it reads as the prompt's own labels,
    sections, instructions or chat tokens, wherever it stands and however it is written (the module docstring)."""
    text = _CONTROL.sub("", folded(text))
    text = _CHAT_TOKEN.sub(lambda m: f"({next(g for g in m.groups() if g)})", text)
    text = _LABEL.sub(lambda m: f"[doc {m.group(1).upper()}{m.group(2)}]", text)
    text = _PASSAGE_LINE.sub(lambda m: f"{m.group(1)}-{m.group(2)}:", text)
    text = _SECTION.sub(r"\1> ", text)
    return _INLINE.sub(r"\1> ", text)


def source_name(name: str) -> str:
    """A file name as shown beside its passage: one line, no brackets that could close the label."""
    cleaned = _CHAT_TOKEN.sub(lambda m: next(g for g in m.groups() if g), _CONTROL.sub("", folded(name)))
    return re.sub(r"[\[\]()<>|\r\n\t]+", " ", cleaned).strip()[:200] or "document"
