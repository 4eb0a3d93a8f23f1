"""What one request to a longqa server may send and how long it may take to send it: deployment
settings read from the environment when a server starts (README, "Security")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from longqa.contracts.environment import env_float, env_int

MAX_JSON_DEPTH = 400  # objects and arrays nested in a request body
MAX_JSON_CONTAINERS = 100_000  # objects and arrays in one request body (256 texts and their lists need a few hundred)
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')  # a JSON string, escapes included: its brackets are text


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


def json_shape_problem(raw: bytes, depth: int = MAX_JSON_DEPTH, containers: int = MAX_JSON_CONTAINERS) -> str | None:
    """Why a JSON body holds too many objects and arrays or nests them too deep, read from its bytes before it is
    parsed (seen: 16 MiB of `{}` took 5 s and 800 MB to parse and walk); None when it does not. The brackets
    outside strings are counted with numpy in one pass, not walked item by item."""
    structure = np.frombuffer(_JSON_STRING.sub(b'""', raw), dtype=np.uint8)
    opens = (structure == ord("[")) | (structure == ord("{"))
    count = int(opens.sum())
    if count > containers:
        return f"the body holds {count:,} objects and arrays; at most {containers:,}"
    if count == 0:
        return None
    closes = (structure == ord("]")) | (structure == ord("}"))
    levels = np.cumsum(opens.astype(np.int32) - closes.astype(np.int32))
    return f"the body nests deeper than {depth} levels" if int(levels.max()) > depth else None


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
