"""Scripted generator replies that cite like a careful model: the passage the answer comes from."""

from __future__ import annotations

import re
from collections.abc import Callable

_BLOCK = re.compile(r"^\[(E\d+)\] \([^\n]*\)\n(.*?)(?=^\[E\d+\] \(|\Z)", re.MULTILINE | re.DOTALL)


def cited_answer(answer: str) -> Callable[[str], str]:
    """A generator reply: `answer`, citing the first passage of the prompt that says it (else E1)."""

    def reply(prompt: str) -> str:
        ids = [m.group(1) for m in _BLOCK.finditer(prompt) if answer.lower() in m.group(2).lower()]
        return f"{answer}\nSources: {ids[0] if ids else 'E1'}"

    return reply
