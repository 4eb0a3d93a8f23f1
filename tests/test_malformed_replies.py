"""An endpoint whose reply the client library cannot read (no choices, not JSON, HTML, usage counts that are text)
ends the call with what was wrong in words, not the library's IndexError or TypeError: a server on 127.0.0.1
that answers every request with one fixed body."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.llm.calls import LLMError, call_llm

COMPLETION = '{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '


def _server(body: bytes, content_type: str) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


USAGE = '"usage": {"prompt_tokens": "many", "completion_tokens": "few", "total_tokens": "lots"}}'
MESSAGE = '"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}], '


@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        (COMPLETION + '"choices": []}', "application/json", "the endpoint's reply held no choices"),
        ('{"id": "x", "choices": [', "application/json", "the endpoint's reply was not JSON"),
        ("<html><body>502 Bad Gateway</body></html>", "text/html", "the endpoint's reply was not"),
        (COMPLETION + MESSAGE + USAGE, "application/json", "usage counts that are not numbers"),
    ],
)
def test_a_reply_the_client_cannot_read_is_named(monkeypatch, body: str, content_type: str, says: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for base_url in _server(body.encode(), content_type):
        settings = Settings(model="openai:stub-model", base_url=base_url, max_retries=0)
        try:
            reply = call_llm(settings, "generate", [HumanMessage("Who keeps the lighthouse?")], max_tokens=16)
        except LLMError as e:
            assert says in str(e) and "list index out of range" not in str(e), str(e)
        else:  # a library that reads it after all must leave sane numbers on the ledger
            assert says == "usage counts that are not numbers" and reply.text == "fine", reply.text
            assert all(isinstance(r["input_tokens"], int) for r in reply.usage)
