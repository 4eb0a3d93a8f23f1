"""A small OpenAI-compatible HTTP server for tests and benchmarks: the real wire path, offline.

    with OpenAIStub(reply_fn=..., latency_s=0.0) as stub:
        settings = Settings(model="openai:stub-model", base_url=stub.base_url)  # http://127.0.0.1:PORT/v1

Standard library only (`http.server.ThreadingHTTPServer` in a daemon thread). It listens on
127.0.0.1 only, on a free port chosen by the OS, and the context manager shuts it down (open
keep-alive connections included), so nothing outlives the `with` block.

Endpoints:
- `POST /v1/chat/completions`: a `chat.completion` object, or with `"stream": true` Server-Sent
  Events (`chat.completion.chunk`s, then — when `stream_options.include_usage` is set — a final
  chunk with empty `choices` and `usage`, then `data: [DONE]`).
- `GET /v1/models`: one model, `stub-model`.
- With `llama_routes=True`, llama.cpp's extra routes: `POST /tokenize` (the stub's count, as a list
  of token ids), `POST /apply-template` (the prompt its chat template makes of `messages`) and
  `GET /props` (`default_generation_settings.n_ctx` = `context_size`).
- `template`: words the stub's chat template adds around the messages (as a real template adds a
  system prompt and role markers), counted in `usage` like the messages: a server whose count our
  own tokenizer cannot know in advance.

Like a real server it honours the request's cap: a reply longer than `max_completion_tokens` (or
`max_tokens`) words is cut there and ends with `finish_reason: "length"`.

Token counts in `usage` are THE STUB'S OWN COUNTS: by default whitespace-separated words of the
prompt (all message contents joined by newlines) and of the reply — not any real tokenizer's
numbers, but exact and deterministic, which is what tests assert on (`usage_record` takes them as
provider numbers, `estimated=False`). `count_fn` replaces the counter (the benchmark passes a
tokenizer's count).

The reply text is `reply_fn(messages) -> str` with `messages` the request's OpenAI message dicts.
The default, `scripted_reply_fn()`, hands them to `llm.scripted.ScriptedChatModel` (converted to
LangChain messages), which answers every longqa prompt kind by its contract, so the whole graph
can run over HTTP. Its answers are NOT a language model's.

Failure modes (attributes, may be changed between requests):
- `fail_first=N`: the first N chat requests get HTTP `fail_status` (500) with an OpenAI-style
  error body (and a `retry-after-ms` header of `retry_after_ms`, so client retries wait briefly);
- `delay_s`: extra sleep before answering — set it above the client's timeout to provoke one;
- `latency_s`: a fixed latency per chat request (what the benchmark's L is);
- `context_size`: prompt + cap over it gets llama.cpp's 400 `exceed_context_size_error` ("request (N
  tokens) exceeds the available context size (M tokens)");
- `schema_support=False`: a request with `response_format` gets a 400 naming it (servers without
  JSON-schema output);
- `usage_override`: a dict merged into every reply's `usage` (a server that reports nonsense);
- `trickle_s`: the reply body is sent one byte every `trickle_s` seconds (a client's per-read timeout
  never fires; only a wall-clock bound ends the wait);
- `tool_fn(body) -> {"name": ..., "arguments": {...}} | None`: for a request that offers `tools`, a
  tool call to answer with instead of text (`finish_reason: "tool_calls"`), so an agent loop runs.
Every request is recorded (thread-safe): `requests` (chat bodies), `request_headers`, `timings`
(server-side start/end, status and reply of each chat request, `time.perf_counter()` clock) and
`prompts()`.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
STUB_MODEL = "stub-model"

ReplyFn = Callable[[list[dict]], str]


def content_text(content: Any) -> str:
    """An OpenAI message `content`: a string, or a list of parts whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def prompt_text(messages: list[dict]) -> str:
    return "\n".join(content_text(m.get("content")) for m in messages)


def count_words(text: str) -> int:
    """The stub's token count: whitespace-separated words."""
    return len(text.split())


def scripted_reply_fn(replies: dict | None = None) -> ReplyFn:
    """A reply_fn answering like `ScriptedChatModel` (one instance per stub; it is thread-safe);
    `replies` overrides prompt kinds as the scripted model's own `replies` do."""
    from langchain_core.messages import convert_to_messages

    from longqa.llm.scripted import ScriptedChatModel

    model = ScriptedChatModel(replies=replies or {})

    def reply(messages: list[dict]) -> str:
        lc_messages = convert_to_messages(
            [{"role": m.get("role", "user"), "content": content_text(m.get("content"))} for m in messages]
        )
        return content_text(model.invoke(lc_messages).content)

    return reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, stub: OpenAIStub):
        self.stub = stub
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__((HOST, 0), _Handler)

    def process_request(self, request, client_address):  # track sockets so close() can cut them
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self.connections_lock:
            open_ = list(self.connections)
            self.connections.clear()
        for sock in open_:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers; every response has a length or closes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `stub.requests`
        return

    # -- helpers ---------------------------------------------------------------------------
    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        stub = self.server.stub
        if not stub.trickle_s:
            self.wfile.write(body)
            return
        for i in range(len(body)):  # a byte at a time, each within any per-read timeout
            if stub._stopping.wait(stub.trickle_s):
                return
            self.wfile.write(body[i : i + 1])
            self.wfile.flush()

    def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}}, headers)

    # -- endpoints -------------------------------------------------------------------------
    def do_GET(self) -> None:
        stub = self.server.stub
        if self.path.rstrip("/") == "/props" and stub.llama_routes:
            self._send_json(200, {"default_generation_settings": {"n_ctx": stub.context_size or 4096}})
        elif self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": STUB_MODEL, "object": "model", "created": 0, "owned_by": "longqa-openai-stub"}],
                },
            )
        else:
            self._error(404, f"no route GET {self.path}", "not_found_error")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") == "/apply-template" and self.server.stub.llama_routes:
            messages = json.loads(raw or b"{}").get("messages") or []
            self._send_json(200, {"prompt": self.server.stub.templated(messages)})
            return
        if self.path.rstrip("/") == "/tokenize" and self.server.stub.llama_routes:
            content = json.loads(raw or b"{}").get("content", "")
            self._send_json(200, {"tokens": list(range(self.server.stub.count_fn(content)))})
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, f"no route POST {self.path}", "not_found_error")
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as e:
            self._error(400, f"invalid JSON body: {e}", "invalid_request_error")
            return
        try:
            self.server.stub._chat(self, body)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            self.close_connection = True  # the client gave up (its timeout): nothing to answer


class OpenAIStub:
    """See the module docstring. `base_url` is valid inside the `with` block."""

    def __init__(
        self,
        reply_fn: ReplyFn | None = None,
        latency_s: float = 0.0,
        *,
        fail_first: int = 0,
        fail_status: int = 500,
        retry_after_ms: int | None = 20,
        delay_s: float = 0.0,
        stream_chunk_words: int = 4,
        count_fn: Callable[[str], int] = count_words,
        context_size: int | None = None,
        schema_support: bool = True,
        llama_routes: bool = False,
        usage_override: dict | None = None,
        tool_fn: Callable[[dict], dict | None] | None = None,
        trickle_s: float = 0.0,
        template: str = "",
    ):
        self.reply_fn = reply_fn or scripted_reply_fn()
        self.count_fn = count_fn
        self.latency_s = latency_s
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.retry_after_ms = retry_after_ms
        self.delay_s = delay_s
        self.stream_chunk_words = max(1, stream_chunk_words)
        self.context_size = context_size
        self.schema_support = schema_support
        self.llama_routes = llama_routes
        self.usage_override = usage_override
        self.tool_fn = tool_fn
        self.trickle_s = trickle_s
        self.template = template
        self._lock = threading.Lock()
        self._requests: list[dict] = []
        self._headers: list[dict[str, str]] = []
        self._timings: list[dict] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> OpenAIStub:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-stub-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in delay/latency
        server.shutdown()
        server.cut_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    # -- what was asked --------------------------------------------------------------------
    @property
    def requests(self) -> list[dict]:
        """Bodies of every chat request received, in arrival order (failed ones included)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        with self._lock:
            return list(self._headers)

    @property
    def timings(self) -> list[dict]:
        """Per chat request: index, start and end (server side, `time.perf_counter()` seconds), HTTP
        status (None if the client left first) and the reply text (None unless answered)."""
        with self._lock:
            return [dict(t) for t in self._timings]

    def templated(self, messages: list[dict]) -> str:
        """The prompt the model reads: the chat template's words, then the messages."""
        return (self.template + "\n" if self.template else "") + prompt_text(messages)

    def prompts(self) -> list[str]:
        return [prompt_text(b.get("messages") or []) for b in self.requests]

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._timings.clear()

    # -- the chat endpoint -----------------------------------------------------------------
    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _chat(self, handler: _Handler, body: dict) -> None:
        start = time.perf_counter()
        with self._lock:
            index = len(self._requests)
            self._requests.append(body)
            self._headers.append({k.lower(): v for k, v in handler.headers.items()})
            timing = {"index": index, "start": start, "end": None, "status": None, "reply": None}
            self._timings.append(timing)
            fail = index < self.fail_first
        try:
            self._answer(handler, body, index, fail, timing)
        finally:
            with self._lock:
                timing["end"] = time.perf_counter()

    def _answer(self, handler: _Handler, body: dict, index: int, fail: bool, timing: dict) -> None:
        self._sleep(self.delay_s)
        self._sleep(self.latency_s)
        if self._stopping.is_set():
            handler.close_connection = True
            return
        if fail:
            timing["status"] = self.fail_status
            headers = {"retry-after-ms": str(self.retry_after_ms)} if self.retry_after_ms else {}
            handler._error(
                self.fail_status,
                f"openai-stub: injected failure (request {index + 1}, first {self.fail_first} fail)",
                "server_error",
                headers,
            )
            return
        messages = body.get("messages") or []
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        if body.get("response_format") and not self.schema_support:
            timing["status"] = 400
            handler._error(400, "openai-stub: response_format is not supported", "invalid_request_error")
            return
        prompt_tokens = self.count_fn(self.templated(messages))
        if self.context_size and prompt_tokens + (cap or 0) > self.context_size:
            timing["status"] = 400
            handler._error(
                400,
                f"request ({prompt_tokens + (cap or 0)} tokens) exceeds the available context size "
                f"({self.context_size} tokens), try increasing it",
                "exceed_context_size_error",
            )
            return
        call = self.tool_fn(body) if self.tool_fn and body.get("tools") else None
        if call is not None and not body.get("stream"):
            timing["status"], timing["reply"] = 200, json.dumps(call)
            self._send_tool_call(handler, body, index, call, prompt_tokens)
            return
        try:
            reply = self.reply_fn(messages)
        except Exception as e:  # a broken reply_fn is the stub's bug: say so over the wire
            timing["status"] = 500
            handler._error(500, f"openai-stub: reply_fn raised {type(e).__name__}: {e}", "server_error")
            return
        finish = "stop"
        if cap and self.count_fn(reply) > cap:  # cut at the cap, as a real server does
            reply, finish = " ".join(reply.split()[:cap]), "length"
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": self.count_fn(reply)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        usage.update(self.usage_override or {})
        model = body.get("model") or STUB_MODEL
        ident = f"chatcmpl-stub-{index}"
        created = int(time.time())
        timing["status"], timing["reply"] = 200, reply
        if not body.get("stream"):
            handler._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "system_fingerprint": None,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply, "refusal": None},
                            "logprobs": None,
                            "finish_reason": finish,
                        }
                    ],
                    "usage": usage,
                },
            )
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self._stream(handler, ident, created, model, reply, usage if include_usage else None, finish)

    def _send_tool_call(self, handler: _Handler, body: dict, index: int, call: dict, prompt_tokens: int) -> None:
        arguments = json.dumps(call.get("arguments") or {})
        message = {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": f"call_stub_{index}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            ],
        }
        completion = self.count_fn(arguments)
        handler._send_json(
            200,
            {
                "id": f"chatcmpl-stub-{index}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or STUB_MODEL,
                "system_fingerprint": None,
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion,
                    "total_tokens": prompt_tokens + completion,
                },
            },
        )

    def _stream(
        self,
        handler: _Handler,
        ident: str,
        created: int,
        model: str,
        reply: str,
        usage: dict | None,
        finish: str = "stop",
    ) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")  # the stream ends when the connection does
        handler.end_headers()
        handler.close_connection = True

        def chunk(delta: dict, finish: str | None = None) -> None:
            payload = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            handler.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            handler.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        pieces = re.findall(r"\s*\S+", reply) or ([reply] if reply else [])
        n = self.stream_chunk_words
        for i in range(0, len(pieces), n):
            chunk({"content": "".join(pieces[i : i + n])})
        tail = reply[len("".join(pieces)) :]  # trailing whitespace, so the deltas join to the reply
        if tail:
            chunk({"content": tail})
        chunk({}, finish)
        if usage is not None:
            payload = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [],
                "usage": usage,
            }
            handler.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
