"""What a caller of `longqa serve` can make the server do is bounded (issue 45, "Limits on everything
a caller sends"): the real server in its own process on a free port, two tenants' keys made by
`longqa keys add`, driven over HTTP. Inline `texts` over the deployment's count or size limits are
refused before anything is stored (422 too many, 413 too large), a 14 MB "word" among them without
the server's memory growing by its size many times over; one key has one index job at a time (429
for a second, another tenant unaffected); and an index job whose client goes away stops at its next
document: its slot comes free, and no more documents are written."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from longqa.retrieval.index.store import INLINE_MARK
from tests.servers import Replica, add_key, log_text

pytestmark = pytest.mark.integration

RSS_BOUND_MB = 200  # a refused 14.3 MB text may grow the server by at most this (body, JSON, the check)
STOP_WAIT_S = 120  # a generous wait for a left run's thread to reach its next document: not a speed bound
WORDS = "harbor ledger cargo pilot vessel grain tide beacon crane dock freight lantern quay rope sail".split()


@dataclass
class Server:
    replica: Replica
    acme: str  # ask + index on acme-lib
    globex: str  # ask + index on globex-lib

    def post(self, path: str, body: object, key: str, timeout: float = 300) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        return httpx.post(self.replica.url + path, content=json.dumps(body), headers=headers, timeout=timeout)

    def rss_mb(self) -> float:
        assert self.replica.proc is not None
        status = Path(f"/proc/{self.replica.proc.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024

    def documents_written(self) -> int:
        index = self.replica.home / "index"
        return sum(1 for _ in index.iterdir()) if index.exists() else 0

    def inline_texts_kept(self) -> int:
        """Inline texts an index run finished with: each is marked kept once its library is published."""
        return len(list((self.replica.home / "index").glob(f"*/{INLINE_MARK}")))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("serve-limits")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_")) and k != "HOME"}
    env.update(
        {
            "HOME": str(base),
            "LONGQA_KEYS_FILE": str(base / "keys.json"),
            "LONGQA_MODEL": "scripted",
            "LONGQA_TOKENIZER": "wordpiece",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    acme = add_key(env, "--tenant", "acme", "--grant", "ask,index", "--collections", "acme-lib")
    globex = add_key(env, "--tenant", "globex", "--grant", "ask,index", "--collections", "globex-lib")
    replica = Replica("limits", base / "home", env).start()
    try:
        yield Server(replica, acme, globex)
    finally:
        replica.stop()


def texts(n: int, words: int, seed: int) -> list[str]:
    """`n` distinct texts of about `words` words each (distinct: each is embedded on its own)."""
    rng = random.Random(seed)
    return [f"Report {seed}-{i}. " + " ".join(rng.choice(WORDS) for _ in range(words)) + "." for i in range(n)]


def refused(r: httpx.Response, status: int, says: str) -> None:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert says in r.json()["error"] and "Traceback" not in r.text, r.text[:300]


@pytest.mark.parametrize(
    ("sent", "status", "says"),
    [
        ([f"Note {i}." for i in range(257)], 422, "'texts' holds 257 texts, more than the 256 a run may pass"),
        (["x " * (1 << 19) + "y"], 413, "texts[0] is 1,048,577 characters, more than the 1,048,576 one text may hold"),
        (["word " * 190_000] * 5, 413, "'texts' hold 4,750,000 characters together, more than the 4,194,304"),
    ],
    ids=["count", "one", "total"],
)
def test_inline_texts_over_the_limits_are_refused_before_anything_is_stored(server, sent, status, says):
    before = server.documents_written()
    for path in ("/index", "/ask"):
        body = {"texts": sent, "collection": "acme-lib"} if path == "/index" else {"texts": sent, "question": "Q?"}
        refused(server.post(path, body, server.acme), status, says)
    assert server.documents_written() == before


def test_one_huge_word_is_refused_without_the_server_growing_by_it(server):
    """The issue's 14.3 MB word (it took +1 GB and made /health wait 5.8 s): now a 413 at the check,
    the server's memory growing by a bounded amount, and /health answering after it."""
    rss = server.rss_mb()
    word = "a" * int(14.3 * (1 << 20))
    refused(server.post("/ask", {"question": "What?", "texts": [word]}, server.acme), 413, "texts[0] is 14,994,636")
    assert server.rss_mb() - rss < RSS_BOUND_MB, (rss, server.rss_mb())
    assert server.replica.get("/health") == {"ok": True}


def test_a_key_has_one_index_job_at_a_time(server):
    """While acme's first job runs, its second is 429 with the reason; globex's is not held up by it."""
    first: dict[str, httpx.Response] = {}
    job = {"texts": texts(256, 60, seed=1), "collection": "acme-lib"}
    running = threading.Thread(target=lambda: first.update(r=server.post("/index", job, server.acme)))
    running.start()
    try:
        deadline = time.monotonic() + STOP_WAIT_S
        while server.documents_written() == 0 and time.monotonic() < deadline and running.is_alive():
            time.sleep(0.2)  # the job is under way once it writes its first document
        assert running.is_alive(), "the first job ended before the second could be sent: make it longer"
        second = server.post("/index", {"texts": ["Another note."], "collection": "acme-lib"}, server.acme)
        refused(second, 429, "this key already has 1 index job under way")
        other = server.post("/index", {"texts": ["Globex's own note."], "collection": "globex-lib"}, server.globex)
        assert other.status_code == 200 and other.json()["error"] is None, other.text[:300]
    finally:
        running.join()
    assert first["r"].status_code == 200 and first["r"].json()["error"] is None, first["r"].text[:300]
    again = server.post("/index", {"texts": ["A note after the job."], "collection": "acme-lib"}, server.acme)
    assert again.status_code == 200, again.text[:300]


def test_an_index_job_stops_when_its_client_leaves(server):
    """The client of a long index job (256 texts, ~1 MiB: its embedding takes many batches) gives
    up after 3 s: the job stops at its next embedding batch instead of embedding the rest for nobody.
    Its key's slot comes free (given back only when the job's thread ends), the server says the run
    stopped within its step, and none of its texts is kept (a finished run marks each one)."""
    kept = server.inline_texts_kept()
    job = {"texts": texts(256, 600, seed=2), "collection": "acme-lib"}
    with pytest.raises(httpx.ReadTimeout):
        server.post("/index", job, server.acme, timeout=3)
    probe = {"texts": ["A probe note."], "collection": "acme-lib"}
    deadline, status = time.monotonic() + STOP_WAIT_S, 429
    while time.monotonic() < deadline:  # acme's slot is busy while its left job's thread runs
        status = server.post("/index", probe, server.acme).status_code
        if status != 429:
            break
        time.sleep(0.5)
    assert status == 200, "the left job still held its slot"
    log = log_text(server.replica.log)
    assert "/index: the run whose client left has stopped within its step" in log, log[-2000:]
    assert server.inline_texts_kept() - kept <= 1, "the left job's texts were kept: it ran to its end"
