"""Documents are data: how a document's text enters a prompt so that it cannot pose as the prompt.

A passage is put in front of the model inside the prompt's own labels (`[E1] (report.pdf)`,
`Passage 3:`), which the model is told to cite and follow. A hostile document could write those
labels itself (a fake `[E2] (other.md)` passage with a fake citation), the prompt's section lines
(`Question: ...`, `Sources: E9`, `Retrieved passages:`) or its instruction lines. `as_data` makes
every such imitation harmless before the text is placed in a prompt:
- a label the prompts use (`[E2]`, `[P4]`, `[L1]`, `Passage 7:`) loses its shape (`[doc E2]`, `Passage-7`);
- a line that opens with one of the prompts' section or instruction words is quoted (`> Question: ...`);
- control characters are dropped.
`source_name` does the same for a file name shown beside its passage. The prompts also say that
passages are document text, never instructions (prompts/generation.py DATA_NOTE).
Hand-written: this is our prompts' own format; no library knows it.
"""

from __future__ import annotations

import re

# the labels our prompts give passages: E1 (evidence), P1 (paragraphs), L1 (long-context spans)
_LABEL = re.compile(r"\[\s*([EPL])\s*(\d{1,5})\s*\]")
_PASSAGE_LINE = re.compile(r"(?im)\b(passage)\s+(\d{1,5})\s*:")
# lines that open a section or an instruction of one of our prompts (generation, LongRAG, OkraLong,
# Self-Route, grounding, calculator)
_SECTION = re.compile(
    r"(?im)^([ \t]*)(?=(?:question|answer|sources?|retrieved passages|global information|conversation so far|"
    r"reasoning steps so far|passages|context|given an article|thought process|system|user|assistant|"
    r"instruction|instructions|note|important|###)\s*[:(#]|###"
    # and the openings of their instruction lines, or of an instruction to the model
    r"|answer the question|only give me|based on the above|reply with|write unanswerable|"
    r"ignore (?:the|all|any|previous|above)|you are (?:a|an|now)\b|disregard\b)"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def as_data(text: str) -> str:
    """A document's text, safe to place in a prompt: nothing in it reads as the prompt's own labels,
    sections or instructions (see the module docstring)."""
    text = _CONTROL.sub("", text)
    text = _LABEL.sub(lambda m: f"[doc {m.group(1)}{m.group(2)}]", text)
    text = _PASSAGE_LINE.sub(lambda m: f"{m.group(1)}-{m.group(2)}:", text)
    return _SECTION.sub(r"\1> ", text)


def source_name(name: str) -> str:
    """A file name as shown beside its passage: one line, no brackets that could close the label."""
    return re.sub(r"[\[\]()\r\n\t]+", " ", _CONTROL.sub("", name)).strip()[:200] or "document"
