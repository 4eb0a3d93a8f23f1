"""How much of a model's reply is read: what its call asked for (`max_tokens`), never what a server
chose to send. A server that ignores `max_tokens` (an auditor's stub wrote 5,000,000 words to a call
capped at 512 tokens) would otherwise have the whole reply parsed, tokenised, stored and streamed.

- The HTTP body: the httpx clients the OpenAI client is built with (`bounded_client`,
  `bounded_async_client`) wrap each response's stream in a hook; past `reply_bytes(max_tokens)`, the
  cap read from the request itself, it stops with `ReplyTooLong`, so nothing further is read. This
  holds for a JSON body and a streamed one (Server-Sent Events, ~250 bytes a token). Compression is
  declined (`Accept-Encoding: identity`); a body compressed anyway is bounded `ENCODED_SHARE` times
  tighter on the wire.
- The text (`kept_reply`, applied by llm/calls.py to every reply, of any provider, before it is
  counted or stored): at most `reply_chars(max_tokens)` characters, then `max_tokens` tokens.
Either passed, the reply ran past its cap: llm/calls.py keeps it as a reply cut at its cap
(`finish_reason="length"`, `PAST_CAP` in its metadata saying how). A provider reached without an
OpenAI-compatible client gets the text bound only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import httpx

from longqa.retrieval.tokens import default_counter

PAST_CAP = "longqa_past_cap"  # a reply's metadata: how it ran past its cap
REPLY_CHARS_PER_TOKEN = 8  # generous (English runs ~4 a token): a reply within its cap stays whole
REPLY_CHARS_FLOOR = 2_000  # a small cap (a filter verdict's 48 tokens) still keeps a chatty reply's start
BODY_BYTES_PER_TOKEN = 1_024  # a streamed token is one event of ~250 bytes; JSON escapes a character in <= 12
BODY_BYTES_FLOOR = 256 << 10  # the envelope (ids, usage), and room for a small cap's stream
BODY_BYTES_UNCAPPED = 16 << 20  # a request without max_tokens (none of ours): still bounded
ENCODED_SHARE = 8  # a body compressed though asked not to be: bounded this many times tighter on the wire
_LIMITS = httpx.Limits(max_connections=1000, max_keepalive_connections=100)  # the OpenAI client's own defaults


class ReplyTooLong(Exception):
    """A reply's body passed what its call's `max_tokens` allows: not read further. Not an HTTP error
    (the client would take it for a dropped connection, which is retried): llm/calls.py finds it under
    the client's own exception (`overlong`)."""

    def __init__(self, limit: int, max_tokens: int | None):
        cap = f"max_tokens={max_tokens}" if max_tokens else "a request without max_tokens"
        super().__init__(f"the reply's body passed {limit:,} bytes, more than {cap} allows: not read further")


def reply_chars(max_tokens: int) -> int:
    """The most characters of a reply read for a call capped at `max_tokens` tokens."""
    return max(REPLY_CHARS_FLOOR, max_tokens * REPLY_CHARS_PER_TOKEN)


def reply_bytes(max_tokens: int | None) -> int:
    """The most bytes of a reply's HTTP body read for a call capped at `max_tokens` tokens."""
    return BODY_BYTES_FLOOR + max_tokens * BODY_BYTES_PER_TOKEN if max_tokens else BODY_BYTES_UNCAPPED


def kept_reply(text: str, max_tokens: int) -> tuple[str, str | None]:
    """`text` cut to what a call capped at `max_tokens` asked for, and how it ran past (None: it did
    not). Over `reply_chars` it cannot be a reply the server cut at its cap: its start is kept, cut
    again to `max_tokens` tokens by the offline counter and marked " [...]"; the rest is never counted."""
    if len(text) <= reply_chars(max_tokens):
        return text, None
    kept = text[: reply_chars(max_tokens)]
    spans = default_counter().spans(kept)
    if len(spans) > max_tokens:
        kept = kept[: spans[max_tokens - 1][1]].rstrip() + " [...]"
    return kept, f"a reply of {len(text):,} characters, cut to {len(kept):,}"


def overlong(error: BaseException | None) -> ReplyTooLong | None:
    """The `ReplyTooLong` behind `error` (the OpenAI client raises its connection error from it, and
    LangChain may wrap that again), or None."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, ReplyTooLong):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _limit(response: httpx.Response) -> tuple[int, int | None]:
    """The response's bound in bytes on the wire, and the cap its request asked for."""
    try:
        body = json.loads(response.request.content or b"{}")
    except (httpx.RequestNotRead, ValueError):
        body = None
    asked = [body.get(k) for k in ("max_completion_tokens", "max_tokens")] if isinstance(body, dict) else []
    cap = max([c for c in asked if type(c) is int and c > 0], default=None)
    encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
    limit = reply_bytes(cap) // (ENCODED_SHARE if encoded else 1)
    declared = response.headers.get("content-length") or "0"
    if declared.isdigit() and int(declared) > limit:  # stopped before a byte is read
        raise ReplyTooLong(limit, cap)
    return limit, cap


class _Bounded(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body stream (sync or async, as the one it wraps) that stops with `ReplyTooLong` past `limit` bytes."""

    def __init__(self, stream: httpx.SyncByteStream | httpx.AsyncByteStream, limit: int, cap: int | None):
        self._stream, self._limit, self._cap, self._read = stream, limit, cap, 0

    def _counted(self, chunk: bytes) -> bytes:
        self._read += len(chunk)
        if self._read > self._limit:
            raise ReplyTooLong(self._limit, self._cap)
        return chunk

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:  # type: ignore[union-attr]
            yield self._counted(chunk)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:  # type: ignore[union-attr]
            yield self._counted(chunk)

    def close(self) -> None:
        self._stream.close()  # type: ignore[union-attr]

    async def aclose(self) -> None:
        await self._stream.aclose()  # type: ignore[union-attr]


def _bound(response: httpx.Response) -> None:
    """The sync client's response hook: the body is read through `_Bounded`."""
    response.stream = _Bounded(response.stream, *_limit(response))


async def _abound(response: httpx.Response) -> None:
    """The async client's response hook."""
    response.stream = _Bounded(response.stream, *_limit(response))


def bounded_client(timeout_s: float) -> httpx.Client:
    """An httpx client for the OpenAI client's sync calls: no reply read past its cap's bound."""
    hooks = {"response": [_bound]}
    headers = {"Accept-Encoding": "identity"}
    return httpx.Client(timeout=timeout_s, limits=_LIMITS, follow_redirects=True, headers=headers, event_hooks=hooks)


def bounded_async_client(timeout_s: float) -> httpx.AsyncClient:
    """`bounded_client` for awaited calls (one per event loop: llm/models.py `chat_model_for_loop`)."""
    hooks = {"response": [_abound]}
    headers = {"Accept-Encoding": "identity"}
    return httpx.AsyncClient(
        timeout=timeout_s, limits=_LIMITS, follow_redirects=True, headers=headers, event_hooks=hooks
    )
