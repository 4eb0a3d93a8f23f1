"""Tolerant parsing of model replies: JSON somewhere in prose, Python-style dicts, True/False."""

from __future__ import annotations

import ast
import json
import re

from langchain_core.exceptions import OutputParserException
from langchain_core.output_parsers import JsonOutputParser

_BRACES = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_dict(text: str) -> dict | None:
    """The first JSON-like object in `text` (fenced JSON, bare JSON, a Python dict, single
    quotes, True/False), or None."""
    if not text or not text.strip():
        return None
    try:
        value = JsonOutputParser().parse(text)
        if isinstance(value, dict):
            return value
    except OutputParserException:
        pass
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
    words = re.findall(r"\b(true|false)\b", (text or "").lower())
    if len(set(words)) == 1:
        return words[0] == "true"
    return None
