"""The replaying proxy of before/after evals (evals/replay_proxy.py), over real HTTP in front of the OpenAI-compatible
stub: a request seen before is answered with the first reply and never reaches the model, any other request does,
the replies survive a restart through the cache file, and failures are passed on, never stored."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from longqa.evals.replay_proxy import serve
from tests.openai_stub import OpenAIStub


@contextmanager
def proxy(upstream: str, cache: Path) -> Iterator[str]:
    server = serve(upstream, cache)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _ask(base: str, content: str, **extra: object) -> httpx.Response:
    body = {"model": "stub-model", "messages": [{"role": "user", "content": content}], "temperature": 0, **extra}
    return httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)


def test_a_request_seen_before_is_replayed_and_never_reaches_the_model(tmp_path: Path) -> None:
    cache = tmp_path / "replies.jsonl"
    with OpenAIStub(reply_fn=lambda messages: f"reply {len(messages[0]['content'])}") as stub:
        upstream = stub.base_url.removesuffix("/v1")
        with proxy(upstream, cache) as base:
            first = _ask(base, "Who founded the observatory?")
            again = _ask(base, "Who founded the observatory?")
            other = _ask(base, "Who founded the library?")
            assert first.status_code == again.status_code == other.status_code == 200
            assert again.json() == first.json()
            assert len(stub.requests) == 2  # the repeated request was answered from the cache
            assert json.loads(Path(f"{cache}.stats.json").read_text()) == {
                "replayed": 1,
                "asked": 2,
                "passed_through": 0,
            }
            assert httpx.get(f"{base}/v1/models", timeout=30).status_code == 200  # other routes go through
        with proxy(upstream, cache) as base:  # a new proxy reads the file: the replies survive a restart
            assert _ask(base, "Who founded the library?").json() == other.json()
            assert _ask(base, "Who founded the library?", max_tokens=5).status_code == 200  # another request
        assert len(stub.requests) == 3


def test_a_failed_reply_is_passed_on_and_not_stored(tmp_path: Path) -> None:
    cache = tmp_path / "replies.jsonl"
    with OpenAIStub(reply_fn=lambda messages: "ok") as stub, proxy(stub.base_url.removesuffix("/v1"), cache) as base:
        stub.fail_first = 1
        assert _ask(base, "What year?").status_code == 500
        assert _ask(base, "What year?").status_code == 200  # asked again, not replayed as the failure
        assert len(stub.requests) == 2 and len(cache.read_text().splitlines()) == 1


def test_the_model_server_gone_is_a_502_naming_it(tmp_path: Path) -> None:
    with OpenAIStub() as stub:
        gone = stub.base_url.removesuffix("/v1")
    with proxy(gone, tmp_path / "replies.jsonl") as base:
        reply = _ask(base, "Anyone there?")
    assert reply.status_code == 502 and "upstream" in reply.json()["error"]
