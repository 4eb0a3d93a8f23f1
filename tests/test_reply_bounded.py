"""A reply is read no further than its call asked for (llm/reply_bounds.py, llm/calls.py): a server that
ignores `max_tokens` and writes a million words (an auditor's stub: 99.5 s and 5.5 GB for 5M words, the
run then failing on an unrelated budget message) has its HTTP body read to a bound set by the cap, and its
text cut to the cap before it is counted, parsed or stored. The cut is a reply cut at its cap: the
generator asks again once and ends the run naming `max_answer_tokens`; the extractor answers without I_g;
the ledger charges the cap, not the server's count. A reply within its cap is unchanged.

The server here is a tiny one of this file's own: the project's stub (tests/openai_stub.py) honours the
cap, and it builds each reply per request, in this process, which a tracemalloc peak would count. This
one builds its bodies once, before anything is measured, and writes them from a memoryview."""

from __future__ import annotations

import asyncio
import json
import threading
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph
from longqa.llm.calls import acall_llm, call_llm
from longqa.llm.reply_bounds import reply_bytes, reply_chars

from .openai_stub import OpenAIStub
from .test_openai_wire import LIGHTHOUSE, ORCHARD, QUESTION

pytestmark = pytest.mark.integration

MODEL = "openai:stub-model"
PROMPT_TOKENS = 100  # what the stub claims every prompt costs (sane: the ledger keeps it)
SLICE = 1 << 16


def _json_body(text: str, words: int) -> bytes:
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": words, "total_tokens": PROMPT_TOKENS + words}
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "stub-model", "choices": [choice]}
    return json.dumps({**body, "usage": usage}).encode()


def _sse_body(text: str, words: int) -> bytes:
    """Server-Sent Events: the text in pieces of 4,000 characters, a finish, the usage, [DONE]."""

    def event(delta: dict, finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return (
            "data: "
            + json.dumps(
                {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [choice]}
            )
            + "\n\n"
        )

    pieces = [event({"role": "assistant", "content": ""})]
    pieces += [event({"content": text[i : i + 4000]}) for i in range(0, len(text), 4000)]
    pieces.append(event({}, "stop"))
    usage = {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": words, "total_tokens": PROMPT_TOKENS + words}
    pieces.append(
        "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [], "usage": usage}) + "\n\n"
    )
    return ("".join(pieces) + "data: [DONE]\n\n").encode()


class CapIgnoringStub:
    """Answers every chat request with `words` words, whatever its max_tokens says, and claims
    completion_tokens=words; `declare_length` False: a JSON body without Content-Length (read until
    the connection closes). Records each request's cap (`caps`) and whether it streamed (`streamed`)."""

    def __init__(self, words: int, declare_length: bool = True):
        text = " ".join(["word"] * words)
        self.json_body, self.sse_body = _json_body(text, words), _sse_body(text, words)
        self.declare_length = declare_length
        self.caps: list[int | None] = []
        self.streamed: list[bool] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.endswith("/chat/completions"):  # no llama.cpp routes: longqa counts itself
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                stub.caps.append(request.get("max_completion_tokens") or request.get("max_tokens"))
                stub.streamed.append(bool(request.get("stream")))
                stub.answer(self, bool(request.get("stream")))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    def answer(self, handler: BaseHTTPRequestHandler, stream: bool) -> None:
        body = memoryview(self.sse_body if stream else self.json_body)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        if self.declare_length and not stream:
            handler.send_header("Content-Length", str(len(body)))
        else:
            handler.send_header("Connection", "close")
            handler.close_connection = True
        handler.end_headers()
        try:
            for i in range(0, len(body), SLICE):
                handler.wfile.write(body[i : i + SLICE])
        except OSError:  # the client stopped reading: what this file tests
            handler.close_connection = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> CapIgnoringStub:
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _settings(base_url: str, **more: object) -> Settings:
    return Settings(model=MODEL, base_url=base_url, max_retries=2, **more)


# -- one call -----------------------------------------------------------------------------------------


def test_a_reply_within_its_cap_is_unchanged():
    with OpenAIStub(reply_fn=lambda m: "In 1904.\nSources: E1") as stub:
        reply = call_llm(_settings(stub.base_url), "generate", [HumanMessage("hello there")], max_tokens=64)
        areply = asyncio.run(acall_llm(_settings(stub.base_url), "generate", [HumanMessage("hi")], max_tokens=64))
    for r in (reply, areply):
        assert r.text == "In 1904.\nSources: E1" and not r.truncated and r.past_cap is None
        (record,) = r.usage
        assert record["outcome"] == "ok" and record["estimated"] is False and record["output_tokens"] == 4


def test_a_reply_the_server_cut_at_its_cap_is_unchanged():
    endless = " ".join(["and so on"] * 2000)
    with OpenAIStub(reply_fn=lambda m: endless) as stub:
        reply = call_llm(_settings(stub.base_url), "generate", [HumanMessage("hello")], max_tokens=40)
    assert reply.truncated and reply.past_cap is None and reply.text == " ".join(endless.split()[:40])
    (record,) = reply.usage
    assert record["outcome"] == "truncated" and record["output_tokens"] == 40 and record["estimated"] is False


def test_a_reply_past_its_cap_is_cut_to_it_on_arrival():
    """100,000 words (0.6 MB) fit the body's bound for 512 tokens: the text is cut before it is counted."""
    with CapIgnoringStub(100_000) as stub:
        reply = call_llm(_settings(stub.base_url), "extract", [HumanMessage("notes, please")], max_tokens=512)
    assert len(stub.json_body) < reply_bytes(512)
    assert reply.truncated and len(reply.text) <= reply_chars(512) and reply.text.startswith("word word")
    assert reply.past_cap == "a reply of 499,999 characters, cut to 2,565"
    (record,) = reply.usage  # the server's 100,000 is not believed: the cap is charged, its prompt kept
    assert record["outcome"] == "truncated" and record["output_tokens"] == 512 and record["estimated"] is True
    assert record["input_tokens"] == PROMPT_TOKENS


def _peak(run) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("declare_length", [True, False], ids=["declared", "read-to-close"])
@pytest.mark.parametrize("awaited", [False, True], ids=["sync", "async"])
def test_a_body_past_its_bound_is_not_read(declare_length, awaited):
    """1,000,000 words (4.8 MB): read no further than the bound for 384 tokens (0.6 MB), once, not retried as a
    dropped connection; a reply cut at its cap, with nothing of it kept. (Before: a peak of 19 MiB.)"""
    with CapIgnoringStub(1_000_000, declare_length=declare_length) as stub:
        settings, messages = _settings(stub.base_url), [HumanMessage("answer, please")]

        def ask():
            if awaited:
                return asyncio.run(acall_llm(settings, "generate", messages, max_tokens=384))
            return call_llm(settings, "generate", messages, max_tokens=384)

        ask()  # the client built and its modules imported, outside the measure
        reply, peak = _peak(ask)
        body = len(stub.json_body)
    assert body > 3 * reply_bytes(384) and stub.caps == [384, 384]  # one request each: no retry
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB for a {body / 2**20:.1f} MiB body"
    assert reply.truncated and reply.text == ""
    assert "more than max_tokens=384 allows: not read further" in reply.past_cap
    (record,) = reply.usage
    assert record["outcome"] == "truncated" and record["output_tokens"] == 384 and record["estimated"] is True


# -- a run -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("bounded-home")


def _context(stub: CapIgnoringStub, home) -> dict:
    return {"model": MODEL, "base_url": stub.base_url, "home": str(home), "context_window": 8000, "max_retries": 2}


def _run(stub: CapIgnoringStub, home) -> dict:
    return graph.invoke({"question": QUESTION, "texts": [LIGHTHOUSE, ORCHARD]}, context=_context(stub, home))


def _ends_naming_the_cap(out: dict) -> None:
    assert out["status"] == "error" and out["answer"] is None
    assert out["error"] == (
        "generate: the reply was cut at its cap (max_answer_tokens=384, finish_reason=length): not taken as an answer"
    )
    assert out["route"].count("generate") == 2  # asked again once
    assert out["usage"] and all(r["outcome"] == "truncated" and r["estimated"] for r in out["usage"])
    assert out["totals"]["output_tokens"] == sum(r["output_tokens"] for r in out["usage"]) < 10_000


@pytest.mark.parametrize("words", [100_000, 1_000_000])
def test_a_run_over_a_server_that_ignores_its_caps_ends_naming_the_cap(home, words):
    with CapIgnoringStub(words) as stub:
        out = _run(stub, home)
        assert set(stub.caps) == {512, 384}  # the extractor's, the generator's
    _ends_naming_the_cap(out)
    (extract,) = [t for t in out["trace"] if t.startswith("extract:")]
    how = "a reply of 499,999 characters, cut to 2,565" if words == 100_000 else "the reply's body passed 786,432 bytes"
    assert extract.startswith(f"extract: the model ran past extract_max_tokens=512 ({how}")
    assert extract.endswith("answering without I_g")
    assert sum(map(len, out["trace"])) < 10_000  # what the run keeps of the replies: the earlier one quoted, cut


def test_a_run_keeps_little_of_a_five_megabyte_reply(home):
    """The auditor's case in the graph: the reply is never held whole (before: the whole text as I_g,
    split into its words for the trace, then a budget error; a peak of 63 MiB)."""
    with CapIgnoringStub(1_000_000, declare_length=False) as stub:
        _run(stub, home)  # the library indexed, the models built, outside the measure
        out, peak = _peak(lambda: _run(stub, home))
    _ends_naming_the_cap(out)
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MiB"


def _streamed(stub: CapIgnoringStub, home) -> tuple[dict, list[int]]:
    """The LangGraph server's way: awaited, its model calls streamed (`stream_mode="messages"`)."""

    async def run() -> tuple[dict, list[int]]:
        final, sizes = {}, []
        inputs = {"question": QUESTION, "texts": [LIGHTHOUSE, ORCHARD]}
        context = {**_context(stub, home), "deadline_s": 20, "timeout_s": 5}
        async for mode, chunk in graph.astream(inputs, context=context, stream_mode=["messages", "values"]):
            if mode == "values":
                final = chunk
            else:
                sizes.append(len(str(chunk[0].content)))
        return final, sizes

    return asyncio.run(run())


def test_a_streamed_run_reads_no_reply_past_its_bound(home):
    with CapIgnoringStub(1_000_000) as stub:
        out, sizes = _streamed(stub, home)
        streamed = list(stub.streamed)
    assert streamed and all(streamed)  # the server's path: every call streamed (Server-Sent Events)
    _ends_naming_the_cap(out)
    assert sum(sizes) < 3 * reply_bytes(512), "the messages stream carried what the bound should have stopped"
