"""What an OpenAI-compatible server can tell about itself beyond the chat API: its own token count
(llama.cpp's `POST /tokenize`), the prompt its chat template makes of a call's messages (`POST
/apply-template`) and its context size (`GET /props`). Other servers do not have these routes: a
route the server says it lacks (404, 405, 501, a reply that is not a JSON object) is not asked again. A
route that timed out or failed on the way (a busy machine, a restart) is left alone for BACKOFF_S and then
asked again, and meanwhile `count_uncertain` says so, so that prompts are sized with a margin
(llm/budget.py). Hand-written because no client library wraps llama.cpp's extra routes."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time

import httpx
from langchain_core.messages import BaseMessage, convert_to_openai_messages

log = logging.getLogger(__name__)

TIMEOUT_S = 5.0  # llama.cpp answers these in milliseconds; a loaded machine may take a few seconds
BACKOFF_S = 30.0  # a route that failed on the way is asked again after this long
MAX_BODY = 8 << 20  # a token list of a long prompt is well under this
ABSENT = (404, 405, 501)  # the server has no such route
_MISSING: set[tuple[str, str]] = set()  # (server root, route) the server lacks: not asked again
_FAILED: dict[tuple[str, str], float] = {}  # (server root, route) -> when it last failed on the way
_LOCK = threading.Lock()


def server_root(base_url: str) -> str:
    """The server's root: llama.cpp serves /tokenize and /props beside /v1."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _request(base_url: str, method: str, route: str, **kwargs) -> dict | None:
    root = server_root(base_url)
    with _LOCK:
        if (root, route) in _MISSING or time.monotonic() - _FAILED.get((root, route), -BACKOFF_S) < BACKOFF_S:
            return None
    try:
        data = json.loads(_bounded_body(method, root + route, **kwargs))
    except httpx.HTTPStatusError as e:
        absent = e.response.status_code in ABSENT
        log.info("%s%s answered %s: using our own count", root, route, e.response.status_code)
    except ValueError:
        absent, data = True, None
        log.info("%s%s did not answer JSON: using our own count", root, route)
    except (httpx.HTTPError, TimeoutError) as e:
        absent = False
        log.info("%s%s unavailable for now (%s): using our own count, with a margin", root, route, type(e).__name__)
    else:
        if isinstance(data, dict):
            with _LOCK:
                _FAILED.pop((root, route), None)
            return data
        absent = True
    with _LOCK:
        if absent:
            _MISSING.add((root, route))
        else:
            _FAILED[(root, route)] = time.monotonic()
    return None


def count_uncertain(base_url: str) -> bool:
    """Whether the server's own count is missing only for now (a counting route failed on the way within
    BACKOFF_S): a prompt sized by our count then needs a margin, since our tokenizer is not the model's."""
    root = server_root(base_url)
    now = time.monotonic()
    with _LOCK:
        return any(r == root and now - at < BACKOFF_S for (r, _), at in _FAILED.items())


def _bounded_body(method: str, url: str, **kwargs) -> bytes:
    """The body of a reply read within TIMEOUT_S seconds in all and MAX_BODY bytes: a server that
    trickles its reply one byte at a time never trips a per-read timeout, so the wall clock bounds it."""
    started, body = time.monotonic(), bytearray()
    with httpx.stream(method, url, timeout=TIMEOUT_S, **kwargs) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_BODY or time.monotonic() - started > TIMEOUT_S:
                raise TimeoutError(f"{url}: no complete reply within {TIMEOUT_S} s and {MAX_BODY} bytes")
    return bytes(body)


def count_tokens(base_url: str, text: str) -> int | None:
    """The server's own token count of `text` (llama.cpp's /tokenize), or None where it has none."""
    data = _request(base_url, "POST", "/tokenize", json={"content": text, "add_special": True})
    tokens = (data or {}).get("tokens")
    return len(tokens) if isinstance(tokens, list) else None


def templated_tokens(base_url: str, messages: list[BaseMessage]) -> int | None:
    """The input tokens the server will charge for `messages`: its chat template applied (system
    prompt and role markers included), then counted by its own tokenizer; None where it cannot say."""
    turns = convert_to_openai_messages(messages)
    return _templated_tokens(base_url, tuple((t["role"], str(t.get("content") or "")) for t in turns))


@functools.lru_cache(maxsize=256)  # a node sizes a prompt, then the call layer checks the same one
def _templated_tokens(base_url: str, turns: tuple[tuple[str, str], ...]) -> int | None:
    messages = [{"role": role, "content": content} for role, content in turns]
    data = _request(base_url, "POST", "/apply-template", json={"messages": messages})
    prompt = (data or {}).get("prompt")
    return count_tokens(base_url, prompt) if isinstance(prompt, str) else None


@functools.lru_cache(maxsize=64)
def _context_size(base_url: str) -> int | None:
    data = _request(base_url, "GET", "/props") or {}
    settings = data.get("default_generation_settings") or {}
    n_ctx = settings.get("n_ctx") or data.get("n_ctx")
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def context_size(base_url: str) -> int | None:
    """The context size the server runs with (llama.cpp's /props), or None where it does not say."""
    return _context_size(base_url.rstrip("/"))
