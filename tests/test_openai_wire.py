"""The real wire path: `langchain_openai.ChatOpenAI` over HTTP to a local OpenAI-compatible stub
(`tests/openai_stub.py`, loopback only), through `llm.calls.call_llm` and the whole graph.

Usage numbers asserted here are the stub's own counts (whitespace words), so a record equal to
them came from the server (`estimated=False`), never from the offline tokenizer. The replies are
the scripted model's (not a language model's): these tests check plumbing, not answer quality.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph
from longqa.llm.calls import LLMError, call_llm
from longqa.llm.models import chat_model

from .openai_stub import OpenAIStub, count_words, prompt_text

pytestmark = pytest.mark.integration

MODEL = "openai:stub-model"

LIGHTHOUSE = """# Keeper's log of the Brannock lighthouse

The Brannock lighthouse stands on a granite reef two miles off the northern cape. It was lit for the
first time in 1871 and its lamp burned colza oil until 1904.

In 1904 the oil lamp was replaced by a paraffin vapour burner. The new burner tripled the range of
the light, which could then be seen from twenty-two nautical miles.

The last resident keeper, Agnes Morrow, left the tower in 1987 when the light was automated. She
had served on the reef for thirty-one years and kept a daily log of every passing ship.

Supplies reached the reef by boat every fortnight. In winter storms the relief boat often could
not land, and the keepers rationed water from the cistern under the lantern room.
"""

ORCHARD = """# Report of the Hollin Valley orchard cooperative

The cooperative was founded in 1952 by eleven families who pooled their land along the river.
Apple trees cover most of the valley floor, with pears on the higher slopes.

The cold store built in 1978 holds four thousand tonnes of fruit. It lets the cooperative sell
apples through the spring, when prices are highest.

A late frost in April destroyed half of the pear blossom last year. The apple harvest was spared
because the trees flowered two weeks later than the pears.
"""

QUESTION = "When was the oil lamp of the Brannock lighthouse replaced by a paraffin burner?"


def run_graph(stub: OpenAIStub, home, question: str = QUESTION, **context) -> dict:
    """The graph against the stub; the analyzer is the LLM one (table 8), so it goes over the wire too."""
    settings = {
        "model": MODEL,
        "base_url": stub.base_url,
        "home": str(home),
        "context_window": 8000,
        "analyzer": "llm",
        **context,
    }
    return graph.invoke({"question": question, "texts": [LIGHTHOUSE, ORCHARD]}, context=settings)


def prompt_words(body: dict) -> int:
    """What the stub reports as prompt_tokens for this request body."""
    return count_words(prompt_text(body["messages"]))


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One LONGQA home for the module: the two documents are embedded once, not per test."""
    return tmp_path_factory.mktemp("wire-home")


@pytest.fixture
def no_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


# -- (a) one call -------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-4o-mini", MODEL])
def test_call_llm_records_the_servers_usage(no_api_key, model):
    reply_text = "The burner was replaced in 1904 ."
    with OpenAIStub(reply_fn=lambda messages: reply_text) as stub:
        settings = Settings(model=model, base_url=stub.base_url, max_retries=0, timeout_s=10)
        messages = [SystemMessage("You answer briefly."), HumanMessage("When was the burner replaced, exactly?")]
        reply = call_llm(settings, "generate", messages, max_tokens=64)
        (body,), (headers,) = stub.requests, stub.request_headers

    (record,) = reply.usage
    assert reply.text == reply_text and reply.finish_reason == "stop" and not reply.truncated
    assert record["estimated"] is False
    assert record["input_tokens"] == count_words("You answer briefly.\nWhen was the burner replaced, exactly?") == 9
    assert record["output_tokens"] == count_words(reply_text) == 7
    assert record["node"] == "generate" and record["model"] == model and record["seconds"] > 0
    # the endpoint gets the bare model name and the messages as sent
    assert body["model"] == model.split(":", 1)[-1]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "When was the burner replaced, exactly?"
    assert body["max_completion_tokens"] == 64  # every call carries its cap
    # no OPENAI_API_KEY in the environment: a base_url gets the placeholder key
    assert headers["authorization"] == "Bearer not-needed"


def test_api_key_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("LONGQA_TEST_STUB_KEY", "sk-stub-test")
    with OpenAIStub(reply_fn=lambda messages: "ok") as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, api_key_env="LONGQA_TEST_STUB_KEY")
        call_llm(settings, "generate", [HumanMessage("hello")], max_tokens=8)
        assert stub.request_headers[0]["authorization"] == "Bearer sk-stub-test"


def test_models_endpoint():
    with OpenAIStub() as stub, urllib.request.urlopen(f"{stub.base_url}/models", timeout=5) as r:
        data = json.load(r)
    assert data["object"] == "list" and data["data"][0]["id"] == "stub-model"
    assert stub.requests == []  # GETs are not chat requests


# -- (b) the whole graph over the wire ------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["adaptive-precise", "longrag", "lc", "self-route"])
def test_graph_answers_through_the_wire(no_api_key, home, strategy):
    with OpenAIStub() as stub:
        out = run_graph(stub, home, strategy=strategy)
        bodies, timings = stub.requests, stub.timings

    assert out["status"] == "answered", out.get("error")
    assert out["error"] is None
    # over the wire, the run is the in-process scripted model's run: same route, same answer
    local = graph.invoke(
        {"question": QUESTION, "texts": [LIGHTHOUSE, ORCHARD]},
        context={
            "model": "scripted",
            "home": str(home),
            "context_window": 8000,
            "strategy": strategy,
            "analyzer": "llm",
        },
    )
    assert out["route"] == local["route"] and out["answer"] == local["answer"]
    assert [r["node"] for r in out["usage"]] == [r["node"] for r in local["usage"]]
    if strategy in ("lc", "self-route", "adaptive-precise"):
        assert "1904" in out["answer"]
    records = out["usage"]
    assert records and len(records) == len(bodies) == out["totals"]["calls"]
    assert all(t["status"] == 200 for t in timings)
    assert all(r["estimated"] is False for r in records) and out["totals"]["estimated"] is False
    # the records' numbers are the server's: the stub's word counts of the prompts it received
    assert sorted(r["input_tokens"] for r in records) == sorted(prompt_words(b) for b in bodies)
    assert sorted(r["output_tokens"] for r in records) == sorted(count_words(t["reply"]) for t in timings)
    assert out["totals"]["input_tokens"] == sum(prompt_words(b) for b in bodies)
    assert out["totals"]["cost"] == out["totals"]["input_tokens"] + 4 * out["totals"]["output_tokens"]
    # every prompt carried the question, and went to the bare model name
    assert all(b["model"] == "stub-model" for b in bodies)
    assert all("Brannock" in prompt_text(b["messages"]) for b in bodies)
    llm_nodes = {"analyze", "split_question", "reason_step", "extract", "cot", "filter", "generate", "long_context"}
    assert {r["node"] for r in records} <= llm_nodes & set(out["route"])
    if strategy == "lc":
        assert [r["node"] for r in records] == ["long_context"]
        assert "Agnes Morrow" in prompt_text(bodies[0]["messages"])  # the whole (short) document was sent
    if strategy == "longrag":
        assert {"extract", "cot", "filter", "generate"} <= {r["node"] for r in records}
    if strategy == "adaptive-precise":
        assert records[0]["node"] == "analyze" and out["analysis"]["backend"] == "llm"


def test_the_default_local_analyzer_sends_nothing_over_the_wire(no_api_key, home):
    with OpenAIStub() as stub:
        out = run_graph(stub, home, strategy="adaptive-precise", analyzer="local")
        bodies = stub.requests

    assert out["status"] == "answered", out.get("error")
    assert out["analysis"]["backend"] == "local-trained"
    assert "analyze" in out["route"] and "analyze" not in [r["node"] for r in out["usage"]]
    assert len(bodies) == out["totals"]["calls"] == len(out["usage"]) >= 1
    assert not any("please answer three questions" in prompt_text(b["messages"]) for b in bodies)


# -- (c) server errors --------------------------------------------------------------------------


def test_a_500_is_retried_and_the_run_succeeds(home):
    with OpenAIStub(fail_first=1) as stub:
        out = run_graph(stub, home, strategy="rag", max_retries=1)
        bodies, timings = stub.requests, stub.timings

    assert out["status"] == "answered", out.get("error")
    assert len(bodies) >= 2 and [t["status"] for t in timings][:2] == [500, 200]
    assert bodies[0] == bodies[1]  # the retry re-sent the same request
    failed, answered = out["usage"]  # the refused attempt is recorded beside the answer
    assert failed["outcome"] == "error" and answered["outcome"] == "ok" and answered["estimated"] is False


def test_call_llm_retries_a_500():
    with OpenAIStub(reply_fn=lambda messages: "fine", fail_first=2) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=2)
        reply = call_llm(settings, "generate", [HumanMessage("hello there")], max_tokens=8)
        assert len(stub.requests) == 3
    failed_1, failed_2, record = reply.usage  # the two refused attempts are on the ledger too
    assert [failed_1["outcome"], failed_2["outcome"], record["outcome"]] == ["error", "error", "ok"]
    assert failed_1["output_tokens"] == 0 and failed_1["estimated"] is True
    assert reply.text == "fine" and record["estimated"] is False and record["input_tokens"] == 2


def test_a_persistent_500_ends_the_run_with_an_error(home):
    with OpenAIStub(fail_first=10**9) as stub:
        # no question budget: every call may retry (under one, a retry is made only when affordable)
        out = run_graph(stub, home, strategy="adaptive-precise", max_retries=1, question_budget=0)
        n_requests = len(stub.requests)

    assert out["status"] == "error"
    assert out["answer"] is None
    assert "generate: model call failed" in out["error"] and "max_retries=1" in out["error"] and "500" in out["error"]
    assert "injected failure" in out["error"]  # the server's message reaches the user
    assert out["messages"][-1].content.startswith("Error: ")
    # the analyzer degraded to the local one instead of ending the run
    assert out["analysis"]["backend"] == "local-trained"
    assert "LLM analyzer failed" in out["analysis"]["note"]
    # every attempt is on the ledger: refused, so charged its prompt (estimated) and no output
    assert len(out["usage"]) == out["totals"]["calls"] == n_requests
    assert all(r["outcome"] == "error" and r["estimated"] and r["output_tokens"] == 0 for r in out["usage"])
    assert n_requests >= 4 and n_requests % 2 == 0  # every call was tried twice (1 retry)


def test_call_llm_raises_llm_error_on_a_persistent_500():
    with OpenAIStub(fail_first=10**9) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=1)
        with pytest.raises(LLMError, match="generate: model call failed"):
            call_llm(settings, "generate", [HumanMessage("hello")], max_tokens=8)
        assert len(stub.requests) == 2


# -- (d) timeouts -------------------------------------------------------------------------------


def _bounded(fn, limit_s: float):
    """Run fn in a thread; fail (instead of hanging the suite) if it is not done in limit_s."""
    result: dict = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as e:  # re-raised in the test thread
            result["error"] = e

    t0 = time.perf_counter()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit_s)
    elapsed = time.perf_counter() - t0
    assert not thread.is_alive(), f"still running after {limit_s}s: the timeout did not fire"
    if "error" in result:
        raise result["error"]
    return result["value"], elapsed


def test_a_timeout_ends_the_run_with_an_error_not_a_hang(home):
    delay = 6.0
    with OpenAIStub(delay_s=delay) as stub:
        # the embedder and index are warmed outside the timed part: only the LLM call is measured
        run_graph(stub, home, strategy="rag", model=None)
        out, elapsed = _bounded(lambda: run_graph(stub, home, strategy="rag", timeout_s=0.5, max_retries=0), limit_s=20)
        n_requests = len(stub.requests)

    assert out["status"] == "error"
    assert "model call failed" in out["error"] and "max_retries=0" in out["error"] and "Timeout" in out["error"]
    assert n_requests == 1
    assert elapsed < delay - 1, f"the run waited {elapsed:.1f}s: the client timeout (0.5s) was not applied"


def test_call_llm_times_out():
    with OpenAIStub(delay_s=5.0) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, timeout_s=0.5, max_retries=0)

        def call():
            with pytest.raises(LLMError, match="Timeout"):
                call_llm(settings, "generate", [HumanMessage("hello")], max_tokens=8)

        _, elapsed = _bounded(call, limit_s=15)
    assert elapsed < 3


# -- (e) streaming ------------------------------------------------------------------------------


def test_streaming_yields_chunks_and_usage(no_api_key):
    reply_text = "The paraffin vapour burner replaced the oil lamp in 1904 and tripled the range."
    with OpenAIStub(reply_fn=lambda messages: reply_text, stream_chunk_words=3) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=0, timeout_s=10)
        prompt = "When was the lamp replaced and what changed?"
        chunks = list(chat_model(settings).stream([HumanMessage(prompt)]))
        (body,) = stub.requests

    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert sum(1 for c in chunks if c.content) >= 4  # really streamed, in pieces
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.content == reply_text
    assert total.usage_metadata is not None
    assert total.usage_metadata["input_tokens"] == count_words(prompt)
    assert total.usage_metadata["output_tokens"] == count_words(reply_text)
    assert total.usage_metadata["total_tokens"] == count_words(prompt) + count_words(reply_text)
