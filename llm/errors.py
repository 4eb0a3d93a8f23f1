"""What a model server's error means: a timeout, a prompt over the context window (and the numbers
the server gives), a refused JSON schema, an error worth retrying (and how long to wait), or a
structured reply cut at its cap that is really a reply."""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage
from tenacity import RetryCallState

MAX_WAIT_S = 8.0  # longest pause between retries, whatever the server's retry-after says


def cut_structured_reply(e: BaseException) -> AIMessage | None:
    """A JSON-schema reply cut at its max_tokens: the OpenAI client raises LengthFinishReasonError
    instead of returning it. It is a reply like any other cut at its cap (the server read the prompt
    and wrote the tokens): its text, the server's usage, finish_reason "length"."""
    completion = getattr(e, "completion", None)
    if type(e).__name__ != "LengthFinishReasonError" or completion is None:
        return None
    choices = getattr(completion, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    usage = getattr(completion, "usage", None)
    counts = (
        {
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        }
        if usage is not None
        else None
    )
    return AIMessage(
        content=(getattr(message, "content", None) or ""),
        usage_metadata=counts,
        response_metadata={"finish_reason": "length"},
    )


def status_of(e: BaseException) -> int | None:
    """The HTTP status an exception from a model client carries (its own or its response's), if any."""
    status = getattr(e, "status_code", None)
    if status is None:
        status = getattr(getattr(e, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def is_timeout(e: BaseException) -> bool:
    """Whether an exception is a timeout (TimeoutError or a client's ...Timeout... error)."""
    return isinstance(e, TimeoutError) or "timeout" in type(e).__name__.lower()


_CONTEXT_LENGTH = re.compile(
    r"context[_ ]length|context size|context window|maximum context|exceed_context|too many tokens|"
    r"prompt is too long|input is too long",
    re.IGNORECASE,
)


def is_context_length(e: BaseException) -> bool:
    """Whether a 400 or 413 says the prompt exceeds the model's context window."""
    return status_of(e) in (400, 413) and bool(_CONTEXT_LENGTH.search(str(e)))


def malformed_reply(e: BaseException) -> str | None:
    """What was wrong with an endpoint's reply that the client library could not read, in words (seen: a reply with
    no choices was "IndexError: list index out of range", one whose usage held text "TypeError: unsupported operand
    type(s) for +"), or None for any other failure."""
    text = str(e)
    if isinstance(e, json.JSONDecodeError):
        return f"the endpoint's reply was not JSON ({text[:120]})"
    if isinstance(e, IndexError):
        return "the endpoint's reply held no choices (no message to read)"
    if isinstance(e, TypeError) and "unsupported operand" in text:
        return "the endpoint's reply carried usage counts that are not numbers"
    if isinstance(e, ValueError) and text.startswith("Unexpected response type"):
        return f"the endpoint's reply was not a chat completion ({text[:120]})"
    return None


def is_retryable(e: BaseException) -> bool:
    """A 429, a 5xx or a dropped connection; never a timeout (the server may still be working on
    it, and a retry starts the work over) and never another 4xx (asking again changes nothing)."""
    if is_timeout(e):
        return False
    status = status_of(e)
    if status is not None:
        return status == 429 or status >= 500
    return "connection" in type(e).__name__.lower()


def context_numbers(e: BaseException) -> tuple[int | None, int | None]:
    """(prompt tokens, context size) from a context-length error, as llama.cpp and vLLM word it:
    "request (30992 tokens) exceeds the available context size (30976 tokens)", "maximum context
    length is 4096 tokens. However, you requested 5000 tokens"."""
    if not is_context_length(e):
        return None, None
    text = str(e)
    m = re.search(r"\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"input \((\d+) tokens\) is larger than the max context size \((\d+) tokens\)", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"maximum context length is (\d+) tokens.*?(?:requested|resulted in) (\d+) tokens", text, re.S)
    if m:
        return int(m.group(2)), int(m.group(1))
    return None, None


def refuses_schema(e: BaseException) -> bool:
    """Whether a 400 or 422 says the server does not take the response-format / JSON-schema request."""
    return status_of(e) in (400, 422) and bool(re.search(r"response_format|json_schema|schema", str(e), re.I))


def retry_after(e: BaseException) -> float | None:
    """The seconds a rate-limited response asks to wait (retry-after-ms or retry-after header), if it says."""
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        if "retry-after" in headers:
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


def wait_before_retry(state: RetryCallState) -> float:
    """The server's retry-after when it gives one, else 0.5 s, 1 s, 2 s, ... (at most MAX_WAIT_S)."""
    error = state.outcome.exception() if state.outcome else None
    after = retry_after(error) if error is not None else None
    wait = after if after is not None else 0.5 * 2 ** (state.attempt_number - 1)
    return max(0.0, min(wait, MAX_WAIT_S))
