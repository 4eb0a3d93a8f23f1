"""The LangGraph server (`langgraph dev` serving langgraph.json, on a free port of 127.0.0.1) bounds
what a caller sends and stops work nobody waits for (issue 45): inline `texts` over the deployment's
limits are refused by the run guard with 413/422 before a run is created; a run the caller waits on
(`runs/wait`) is cancelled when the caller disconnects (longqa/http/disconnect.py makes "cancel" the
default), its status `interrupted`, and the index node's own thread stops at its next embedding batch
(no inline text of it is kept). Runs use no model: the index graph only reads and embeds."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from longqa.retrieval.index.store import INLINE_MARK
from tests.servers import langgraph_dev
from tests.test_serve_limits import STOP_WAIT_S, texts
from tests.test_server_sdk import REPO, _server_env

pytestmark = pytest.mark.integration


@dataclass
class Server:
    url: str
    home: Path
    log: Path

    def post(self, path: str, body: object, timeout: float = 120) -> httpx.Response:
        return httpx.post(self.url + path, content=json.dumps(body), timeout=timeout)

    def inline_texts_kept(self) -> int:
        return len(list((self.home / "index").glob(f"*/{INLINE_MARK}")))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    langgraph = Path(sys.executable).parent / "langgraph"
    tmp = tmp_path_factory.mktemp("langgraph-limits")
    (tmp / "docs").mkdir()
    log = tmp / "server.log"
    env = _server_env(tmp / "home", tmp / "docs", "http://127.0.0.1:9/v1")
    with langgraph_dev(langgraph, env, log, REPO, "--config", "langgraph.json") as dev:
        yield Server(dev.url, tmp / "home", log)


@pytest.mark.parametrize(
    ("sent", "status", "says"),
    [
        ([f"Note {i}." for i in range(257)], 422, "'texts' holds 257 texts, more than the 256"),
        (["x " * (1 << 19) + "y"], 413, "texts[0] is 1,048,577 characters, more than the 1,048,576"),
    ],
    ids=["count", "one"],
)
def test_inline_texts_over_the_limits_are_refused_before_a_run(server, sent, status, says):
    for graph, extra in (("longqa-index", {}), ("longqa", {"question": "What?"})):
        r = server.post("/runs/wait", {"assistant_id": graph, "input": {"texts": sent, **extra}})
        assert r.status_code == status and says in r.json()["detail"], (r.status_code, r.text[:300])


def test_a_waited_run_is_cancelled_when_its_client_leaves(server):
    thread = server.post("/threads", {}).json()["thread_id"]
    kept = server.inline_texts_kept()
    job = {"assistant_id": "longqa-index", "input": {"texts": texts(256, 600, seed=3)}}
    with pytest.raises(httpx.ReadTimeout):  # runs/wait sends its first keep-alive byte after 5 s
        server.post(f"/threads/{thread}/runs/wait", job, timeout=3)
    deadline, runs = time.monotonic() + STOP_WAIT_S, []
    while time.monotonic() < deadline:
        runs = httpx.get(f"{server.url}/threads/{thread}/runs", timeout=10).json()
        if runs and runs[0]["status"] not in ("pending", "running"):
            break
        time.sleep(0.5)
    assert runs and runs[0]["status"] == "interrupted", runs
    while time.monotonic() < deadline and "stopped within the step" not in server.log.read_text("utf-8", "replace"):
        time.sleep(0.5)  # the node's thread reaches its next embedding batch
    assert "index_documents: its run was cancelled; stopped within the step" in server.log.read_text("utf-8")
    assert server.inline_texts_kept() == kept, "the cancelled run's texts were kept: its thread ran to its end"


def test_a_waited_question_stops_within_prepare_when_its_client_leaves(server):
    """The question graph's first step (its library update over inline texts) stops at its next
    embedding batch once the run is cancelled (graph/node.py `stoppable`), not at the next node."""
    thread = server.post("/threads", {}).json()["thread_id"]
    kept, sent = server.inline_texts_kept(), texts(256, 600, seed=4)
    job = {"assistant_id": "longqa", "input": {"question": "What do the reports say?", "texts": sent}}
    with pytest.raises(httpx.ReadTimeout):
        server.post(f"/threads/{thread}/runs/wait", job, timeout=3)
    deadline, runs = time.monotonic() + STOP_WAIT_S, []
    while time.monotonic() < deadline:
        runs = httpx.get(f"{server.url}/threads/{thread}/runs", timeout=10).json()
        if runs and runs[0]["status"] not in ("pending", "running"):
            break
        time.sleep(0.5)
    assert runs and runs[0]["status"] == "interrupted", runs
    stopped = "prepare: the client went away; the run was stopped"
    while time.monotonic() < deadline and stopped not in server.log.read_text("utf-8", "replace"):
        time.sleep(0.5)  # prepare's thread reaches its next embedding batch
    assert stopped in server.log.read_text("utf-8")
    assert server.inline_texts_kept() - kept < len(sent), "every text was stored: prepare ran to its end"
