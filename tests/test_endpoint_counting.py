"""The model server's own token count (llama.cpp's /tokenize, /apply-template): a route the server lacks is not
asked again, but one that failed on the way (a timeout on a loaded machine) is asked again after a back-off, and
meanwhile prompts are sized by our count with a margin, so that the question budget still holds by the server's
count (the real-model tier once spent 1,979 of 1,900 tokens when one slow reply turned the server's count off for
the rest of the process)."""

from __future__ import annotations

import json

import httpx
import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.llm import budget, endpoint

URL = "http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(endpoint, "_MISSING", set())
    monkeypatch.setattr(endpoint, "_FAILED", {})
    endpoint._templated_tokens.cache_clear()
    yield
    endpoint._templated_tokens.cache_clear()


def _answers(monkeypatch, *outcomes):
    """`_bounded_body` gives each outcome in turn: bytes, or an exception to raise."""
    calls = []

    def body(method, url, **kwargs):
        calls.append(url)
        outcome = outcomes[min(len(calls), len(outcomes)) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(endpoint, "_bounded_body", body)
    return calls


def _status(code: int) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", URL)
    return httpx.HTTPStatusError("no", request=request, response=httpx.Response(code, request=request))


def test_a_timeout_is_asked_again_after_the_back_off_and_is_uncertain_meanwhile(monkeypatch):
    tokens = json.dumps({"tokens": [1, 2, 3]}).encode()
    calls = _answers(monkeypatch, TimeoutError("slow"), tokens)
    assert endpoint.count_tokens(URL, "a b c") is None
    assert endpoint.count_uncertain(URL)
    assert endpoint.count_tokens(URL, "a b c") is None and len(calls) == 1  # within the back-off: not asked
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)
    assert endpoint.count_tokens(URL, "a b c") == 3 and len(calls) == 2  # asked again, and it counts
    assert not endpoint.count_uncertain(URL)


@pytest.mark.parametrize("failure", [_status(404), _status(501), ValueError("not json")], ids=["404", "501", "json"])
def test_a_route_the_server_lacks_is_not_asked_again_and_is_not_uncertain(monkeypatch, failure):
    calls = _answers(monkeypatch, failure)
    monkeypatch.setattr(endpoint, "BACKOFF_S", 0.0)
    assert endpoint.count_tokens(URL, "x") is None and endpoint.count_tokens(URL, "x") is None
    assert len(calls) == 1 and not endpoint.count_uncertain(URL)


def test_a_server_error_on_the_way_is_transient(monkeypatch):
    _answers(monkeypatch, _status(503))
    assert endpoint.count_tokens(URL, "x") is None and endpoint.count_uncertain(URL)


def test_prompts_are_sized_with_a_margin_while_the_servers_count_is_missing_for_now(monkeypatch):
    messages = [HumanMessage("The harbour master logs every ship that enters the harbour before noon. " * 20)]
    ours = budget.prompt_tokens(messages)  # no counting server: our count
    _answers(monkeypatch, TimeoutError("slow"))
    spec = Settings(model="qwen-0.5b", base_url=URL)
    with budget.counted_by(spec):
        margin = budget.prompt_tokens(messages)
    assert margin >= ours * budget.UNCOUNTED_MARGIN
    # a server that has no counting routes at all (vLLM, OpenAI): our count as it is
    monkeypatch.setattr(endpoint, "_FAILED", {})
    monkeypatch.setattr(endpoint, "_MISSING", {(endpoint.server_root(URL), "/apply-template")})
    with budget.counted_by(spec):
        assert budget.prompt_tokens(messages) == ours
