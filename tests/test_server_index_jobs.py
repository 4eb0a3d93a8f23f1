"""The LangGraph server (`langgraph dev` serving langgraph.json, keys made by `longqa keys add`, on a
free port of 127.0.0.1) lets one key have at most LONGQA_MAX_INDEX_JOBS (1) index runs under way
(issue 45, longqa/http/index_runs.py): while tenant A's background index run works, A's next index run is
429 whether background or waited, or on an assistant an admin made of that graph; tenant B's index
run is served, and once A's run is cancelled A may index again. Runs use no model: the index graph
only reads and embeds."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.servers import add_key, langgraph_dev
from tests.test_serve_limits import STOP_WAIT_S, texts
from tests.test_server_sdk import REPO, _server_env

pytestmark = pytest.mark.integration
BUSY = "this key already has 1 index job under way (LONGQA_MAX_INDEX_JOBS)"


@dataclass
class Keyed:
    url: str
    a: str
    b: str

    def client(self, key: str):
        from langgraph_sdk import get_sync_client

        return get_sync_client(url=self.url, api_key=key, timeout=120)


def _key(env: dict[str, str], tenant: str) -> str:
    grants = "index,admin" if tenant == "a" else "index"  # an admin key makes assistants too
    return add_key(env, "--tenant", tenant, "--grant", grants, "--collections", "*")


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    pytest.importorskip("langgraph_sdk")
    tmp = tmp_path_factory.mktemp("langgraph-index-jobs")
    (tmp / "docs").mkdir()
    log = tmp / "server.log"
    env = _server_env(tmp / "home", tmp / "docs", "http://127.0.0.1:9/v1")
    env.update({"LONGQA_KEYS_FILE": str(tmp / "keys.json"), "LONGQA_MAX_INDEX_JOBS": "1"})
    for name in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY"):
        env.pop(name, None)
    a, b = _key(env, "a"), _key(env, "b")
    langgraph = Path(sys.executable).parent / "langgraph"
    with langgraph_dev(langgraph, env, log, REPO, "--config", "langgraph.json") as dev:
        yield Keyed(dev.url, a, b)


def _refused(call) -> tuple[int, str]:
    try:
        call()
    except httpx.HTTPStatusError as e:
        return e.response.status_code, e.response.text
    return 200, "served"


def test_one_index_run_per_key_at_once(keyed):
    a, b = keyed.client(keyed.a), keyed.client(keyed.b)
    made = a.assistants.create("longqa-index", name="nightly")
    first = a.threads.create()["thread_id"]
    job = a.runs.create(first, "longqa-index", input={"texts": texts(256, 1500, seed=5)})  # background
    other = a.threads.create()["thread_id"]
    small = {"texts": ["The harbour crane was repainted green in May."]}
    for call in (
        lambda: a.runs.create(other, "longqa-index", input=small),
        lambda: a.runs.wait(other, "longqa-index", input=small),
        lambda: a.runs.wait(None, "longqa-index", input=small),
        lambda: a.runs.create(other, made["assistant_id"], input=small),  # an assistant of the index graph
    ):
        status, text = _refused(call)
        assert status == 429 and BUSY in text, (status, text[:300])
    b_thread = b.threads.create()["thread_id"]
    b_job = b.runs.create(b_thread, "longqa-index", input=small)  # another tenant: not held up
    assert a.runs.get(first, job["run_id"])["status"] in ("pending", "running"), "the long run ended too soon to test"
    a.runs.cancel(first, job["run_id"])
    deadline = time.monotonic() + STOP_WAIT_S
    while a.runs.get(first, job["run_id"])["status"] in ("pending", "running") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert a.runs.get(first, job["run_id"])["status"] == "interrupted"
    served = b.runs.join(b_thread, b_job["run_id"])
    assert served["error"] is None and served["doc_ids"], served
    again = a.runs.wait(other, "longqa-index", input=small)  # its slot is free again
    assert again["error"] is None and again["doc_ids"], again
