"""Model nodes run both ways (llm/model_node.py): `graph.invoke` makes each model call in the node's
thread, `graph.ainvoke` (the LangGraph server, the agent tool's async path) awaits it on the event
loop. Both make the same calls with the same caps, bounds, retries and ledger, over the wire to the
OpenAI-compatible stub; the async one holds no thread while the model works and never blocks the loop.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph
from longqa.llm.calls import LLMError, acall_llm, call_llm

from .openai_stub import OpenAIStub
from .test_openai_wire import LIGHTHOUSE, ORCHARD, QUESTION

pytestmark = pytest.mark.integration

MODEL = "openai:stub-model"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("async-home")


def context(stub: OpenAIStub, home, **more) -> dict:
    return {"model": MODEL, "base_url": stub.base_url, "home": str(home), "context_window": 8000, **more}


def question(text: str = QUESTION) -> dict:
    return {"question": text, "texts": [LIGHTHOUSE, ORCHARD]}


def calls(out: dict) -> Counter:
    return Counter(r["node"] for r in out["usage"])


@pytest.mark.parametrize(
    "settings",
    [
        {"strategy": "longrag"},
        {"strategy": "adaptive-precise", "analyzer": "llm"},
        {"strategy": "self-route"},
        {"strategy": "lc"},
    ],
    ids=lambda s: s["strategy"],
)
def test_invoke_and_ainvoke_make_the_same_calls(home, settings):
    with OpenAIStub() as stub:
        sync = graph.invoke(question(), context=context(stub, home, **settings))
        sync_caps = sorted(b["max_completion_tokens"] for b in stub.requests)
        stub.reset()
        done = asyncio.run(graph.ainvoke(question(), context=context(stub, home, **settings)))
        async_caps = sorted(b["max_completion_tokens"] for b in stub.requests)
    assert done["status"] == sync["status"] and done["status"] in ("answered", "unanswerable"), done.get("error")
    assert done["answer"] == sync["answer"]
    assert sorted(done["route"]) == sorted(sync["route"])
    assert calls(done) == calls(sync) and sum(calls(done).values()) == len(stub.requests)
    assert async_caps == sync_caps  # every call carried its node's cap on both paths
    assert [c["id"] for c in done["citations"]] == [c["id"] for c in sync["citations"]]


def test_waiting_async_runs_hold_no_thread(home):
    """Six runs at once on a loop whose worker pool has two threads: with each model call awaited,
    far more than two calls reach the model at the same moment (a sync node would hold a thread for
    each)."""
    runs, latency = 6, 1.0
    with OpenAIStub(latency_s=latency) as stub:
        graph.invoke(question(), context=context(stub, home, strategy="longrag", model=None))  # index first

        async def all_runs() -> list[dict]:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
            settings = context(stub, home, strategy="longrag")
            return await asyncio.gather(*(graph.ainvoke(question(), context=settings) for _ in range(runs)))

        outs = asyncio.run(all_runs())
        timings = stub.timings
    assert all(o["status"] in ("answered", "unanswerable") for o in outs), [o.get("error") for o in outs]
    events = sorted([(t["start"], 1) for t in timings] + [(t["end"], -1) for t in timings])
    peak = max(itertools.accumulate(step for _, step in events))
    assert peak >= runs, f"at most {peak} model calls at once"  # every run's cot+extract (or filters) together


def test_async_runs_never_block_the_event_loop(home):
    """Under blockbuster (what `langgraph dev` runs with), a run with every model node over HTTP."""
    blockbuster = pytest.importorskip("blockbuster")
    with OpenAIStub() as stub:
        graph.invoke(question(), context=context(stub, home, strategy="longrag", model=None))  # index first

        async def ask() -> dict:
            with blockbuster.blockbuster_ctx():
                with pytest.raises(blockbuster.BlockingError):  # the detector is on
                    time.sleep(0.001)
                return await graph.ainvoke(question(), context=context(stub, home, strategy="longrag"))

        out = asyncio.run(ask())
    assert out["status"] in ("answered", "unanswerable"), out.get("error")
    assert {"cot", "extract", "filter", "generate"} <= set(calls(out))


# -- the two call paths fail the same way -----------------------------------------------------------


def sync_call(settings: Settings, **kwargs):
    return call_llm(settings, "generate", [HumanMessage("hello there")], max_tokens=9, **kwargs)


def async_call(settings: Settings, **kwargs):
    return asyncio.run(acall_llm(settings, "generate", [HumanMessage("hello there")], max_tokens=9, **kwargs))


PATHS = pytest.mark.parametrize("call", [sync_call, async_call], ids=["sync", "async"])


@PATHS
def test_a_timeout_is_recorded_and_not_retried(call):
    with OpenAIStub(delay_s=5.0) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, timeout_s=0.5, max_retries=2)
        with pytest.raises(LLMError) as caught:
            call(settings)
        requests = len(stub.requests)
    assert requests == 1 and caught.value.kind == "timeout"
    (record,) = caught.value.usage
    assert record["outcome"] == "timeout" and record["output_tokens"] == 9 and record["seconds"] >= 0.4


@PATHS
def test_a_5xx_is_retried_and_every_attempt_recorded(call):
    with OpenAIStub(fail_first=2, fail_status=503, retry_after_ms=1) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=2)
        reply = call(settings)
    assert [r["outcome"] for r in reply.usage] == ["error", "error", "ok"]
    assert [t["status"] for t in stub.timings] == [503, 503, 200]


@PATHS
def test_the_run_deadline_bounds_the_attempt(call):
    with OpenAIStub(delay_s=5.0) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, timeout_s=30, max_retries=0)
        t0 = time.perf_counter()
        with pytest.raises(LLMError) as caught:
            call(settings, deadline_at=time.time() + 0.5)
        elapsed = time.perf_counter() - t0
    assert caught.value.kind == "deadline" and elapsed < 4


@PATHS
def test_an_endpoint_refusing_json_schema_is_asked_without_it(call):
    with OpenAIStub(reply_fn=lambda m: '{"status": true}', schema_support=False) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=0)
        reply = call(settings, schema={"type": "object", "properties": {"status": {"type": "boolean"}}})
    assert reply.text == '{"status": true}' and [t["status"] for t in stub.timings] == [400, 200]
    assert [r["outcome"] for r in reply.usage] == ["ok"]  # a refused format is not a failed attempt


def test_ainvoke_from_one_event_loop_after_another(home):
    """Each `asyncio.run` has its own loop, and a kept-alive connection belongs to the loop that
    opened it: the second run must not reuse the first loop's client (langchain-ai/langchain#35783:
    langchain-openai shares one async HTTP client per endpoint across loops)."""
    with OpenAIStub() as stub:
        settings = context(stub, home, strategy="longrag", max_retries=0)
        outs = [asyncio.run(graph.ainvoke(question(), context=settings)) for _ in range(3)]
    for out in outs:
        assert out["status"] in ("answered", "unanswerable"), out.get("error")
        assert all(r["outcome"] in ("ok", "truncated") for r in out["usage"]), out["usage"]
