"""Tolerant parsing of model replies: JSON somewhere in prose, Python-style dicts, True/False.
Hand-written: LangChain's JSON parser also accepts partial JSON, which is quadratic on a long
reply that is not JSON; this one is linear and reads at most MAX_PARSE_CHARS."""

from __future__ import annotations

import ast
import functools
import json
import re

_BRACES = re.compile(r"\{[^{}]*\}", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
MAX_PARSE_CHARS = 20_000


def parse_dict(text: str) -> dict | None:
    """The first JSON-like object in `text` (fenced JSON, bare JSON, a Python dict, single
    quotes, True/False), or None."""
    if not text or not text.strip():
        return None
    text = text[:MAX_PARSE_CHARS]  # bounded work: a dictionary or a verdict is never longer
    fenced = _FENCE.search(text)
    for candidate in (text.strip(), fenced.group(1).strip() if fenced else None):
        if candidate and candidate.startswith("{"):
            try:
                value = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    for m in _BRACES.finditer(text):
        candidate = m.group(0)
        for loader in (json.loads, ast.literal_eval, _relaxed_json):
            try:
                value = loader(candidate)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
    return None


def _relaxed_json(text: str):
    fixed = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", text.replace("'", '"')))
    return json.loads(fixed)


def parse_bool(text: str, key: str = "status") -> bool | None:
    """A True/False verdict: `{"status": true}` or a bare true/false/yes/no word; None if unclear."""
    data = parse_dict(text)
    if data is not None:
        value = next((v for k, v in data.items() if str(k).lower() == key), None)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
            return value.strip().lower() in ("true", "yes")
    words = re.findall(r"\b(true|false)\b", (text or "")[:MAX_PARSE_CHARS].lower())
    if len(set(words)) == 1:
        return words[0] == "true"
    return None


# -- replies that are not answers: echoed prompts, cut replies ------------------------------------

_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")
_WORD = re.compile(r"[a-z0-9]+")
ECHO_RUN = 6  # words in a row of the prompt's own instructions that make a reply an echo


def fixed_text(*templates: str) -> list[str]:
    """The literal pieces of prompt templates (what the prompt says whatever the question and the
    documents are): placeholders removed, doubled braces undone."""
    pieces: list[str] = []
    for template in templates:
        pieces += [p.replace("{{", "{").replace("}}", "}") for p in _PLACEHOLDER.split(template)]
    return [p for p in pieces if p.strip()]


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def echoes(reply: str, fixed: list[str], n: int = ECHO_RUN, quoting: str = "") -> bool:
    """Whether `reply` repeats `n` words in a row of the prompt's fixed text (its instructions or
    demonstration): a model continuing the prompt, not answering it. Quoting the documents is fine:
    a run that also occurs in `quoting` (the context shown) does not count. Linear in the sizes."""
    repeated = _runs(reply or "", n) & _fixed_runs(tuple(fixed), n)
    if not repeated or not quoting:
        return bool(repeated)
    return bool(repeated - _runs(quoting, n))  # the context is shingled only when a run matched


@functools.lru_cache(maxsize=64)
def _fixed_runs(fixed: tuple[str, ...], n: int) -> frozenset[tuple[str, ...]]:
    """The runs of a prompt's fixed texts: the same templates every call, so computed once."""
    return frozenset().union(*(_runs(f, n) for f in fixed))


def cut_at(reply: str, headers: re.Pattern[str]) -> str:
    """The reply up to the first line that opens one of the prompt's own sections (a model that
    goes on writing the next "Question:" after its answer)."""
    match = headers.search(reply or "")
    return (reply[: match.start()] if match else reply or "").strip()


def read_answer(
    text: str, truncated: bool, fixed: list[str], headers: re.Pattern[str], cap: str, quoting: str = ""
) -> tuple[str | None, str | None]:
    """(answer, None) from a reader's reply, or (None, why it is not an answer): a reply cut at its
    cap, an empty one, or one that repeats the prompt. Whatever follows the answer in a new section
    of the prompt's own shape is dropped."""
    if truncated:
        return None, f"the reply was cut at its cap ({cap}, finish_reason=length): not taken as an answer"
    if not (text or "").strip():
        return None, "the model's reply was empty"
    answer = cut_at(text, headers)
    if not answer or echoes(answer, fixed, quoting=quoting):
        return None, "the reply repeats the prompt instead of answering it: not taken as an answer"
    return answer, None
