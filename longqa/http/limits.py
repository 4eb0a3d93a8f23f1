"""What one request to a longqa server may send and how long it may take to send it: deployment
settings read from the environment when a server starts (README, "Security")."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field

from longqa.contracts.environment import env_float, env_int

MAX_JSON_DEPTH = 400  # objects and arrays nested in a request body


class ServerLimits(BaseModel):
    """What one request may send and how long it may take: body size, question length, body deadline (read from the
    environment when a server starts)."""

    max_body_bytes: int = Field(
        default_factory=lambda: env_int("LONGQA_MAX_BODY_MB", 16, highest=1024)() * 2**20,
        description="largest request body (LONGQA_MAX_BODY_MB, default 16): refused as it is read, never held whole",
    )
    max_question_chars: int = Field(
        default_factory=env_int("LONGQA_MAX_QUESTION_CHARS", 8000, highest=10_000_000),
        description="longest question, or chat message, in characters (LONGQA_MAX_QUESTION_CHARS, default 8,000)",
    )
    body_timeout_s: float = Field(
        default_factory=env_float("LONGQA_BODY_TIMEOUT_S", 30.0),
        description="seconds a client has to send its whole body (LONGQA_BODY_TIMEOUT_S, default 30)",
    )
    max_index_jobs_per_key: int = Field(
        default_factory=env_int("LONGQA_MAX_INDEX_JOBS", 1, lowest=1, highest=1024),
        description="index runs one API key may have under way at once; one more is 429 (LONGQA_MAX_INDEX_JOBS, "
        "default 1)",
    )
    header_timeout_s: float = Field(
        default_factory=env_float("LONGQA_HEADER_TIMEOUT_S", 10.0),
        description="seconds a connection has to send a request's headers (LONGQA_HEADER_TIMEOUT_S, default 10)",
    )


def json_depth_over(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether objects and arrays nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children: Iterator[Any] = iter(item.values() if isinstance(item, dict) else item)
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def question_problem(payload: Mapping[str, Any], limit: int) -> str | None:
    """Why a run's question (or a chat message) is too long, or None."""
    question = payload.get("question")
    if isinstance(question, str) and len(question) > limit:
        return f"'question' is {len(question):,} characters; this server takes at most {limit:,}"
    messages = payload.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else message
        if len(str(content)) > limit:
            return f"messages[{i}] is over {limit:,} characters, the most this server takes"
    return None
