"""Many workers build one library (issue 49), against real servers started here on 127.0.0.1: PostgreSQL
(the catalog and the work list), a Chroma server, and llama.cpp's server with `--embedding` over the
GGUF scripts/local_model.sh downloads (a real /v1/embeddings; its vectors' quality is beside the
point), or embeddings stubs that answer 429 and 500 for a while. Workers are `longqa index-together`
processes; one is SIGKILLed while it holds a claimed batch. Afterwards the published library holds
every document exactly once: every member listed once, one vector per distinct unit text, no other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from longqa.retrieval import Searcher
from longqa.retrieval.index.config import EndpointSpec, IndexSettings
from longqa.retrieval.index.embed.embedder_errors import EmbedderMismatch
from longqa.retrieval.index.library import library_dense
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.read.loaders import load_document

from .embeddings_stub import EmbeddingsStub
from .local_model_paths import GGUF as GGUFS
from .local_model_paths import MODEL_HOME, llama_server_binary
from .servers import HOST, chroma_server, free_port, postgres_server, stop, wait_until

pytestmark = pytest.mark.scale_out

G = 150
GGUF = MODEL_HOME / GGUFS["qwen-0.5b"]
TOWNS = ["Quillmoor", "Tarn Head", "Skerrow", "Caldrith", "Brenmouth", "Alderholt", "Fennick", "Orrin"]


def corpus(root: Path, n: int) -> Path:
    """`n` short reports, each its own text (two paragraphs), and one duplicate paragraph across all."""
    folder = root / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        town = TOWNS[i % len(TOWNS)]
        text = (
            f"Report {i}: the harbour of {town} handled {1000 + 37 * i} tonnes of cargo in week {i + 1}.\n\n"
            f"The ferry to {town} was delayed {i % 5} times; the pier crane number {i} was inspected.\n\n"
            "This report is published by the harbour office and may be quoted with its source.\n"
        )
        (folder / f"report-{i:03d}.txt").write_text(text, "utf-8")
    return folder


@pytest.fixture(scope="module")
def engines(tmp_path_factory) -> Iterator[tuple[str, int, str]]:
    with postgres_server() as pg, chroma_server(tmp_path_factory.mktemp("chroma")) as chroma:
        yield chroma.host, chroma.port, pg.uri


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Iterator[str]:
    binary = llama_server_binary()
    if binary is None or not GGUF.exists():
        pytest.skip("llama.cpp's server or the Qwen GGUF is not installed (bash scripts/dev.sh local-model install)")
    port, log = free_port(), tmp_path_factory.mktemp("llama") / "server.log"
    args = [binary, "-m", str(GGUF), "--embedding", "--pooling", "mean", "--host", HOST, "--port", str(port)]
    args += ["-t", "1", "-c", "4096", "-b", "2048", "-ub", "2048", "--parallel", "4"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _healthy(port), proc, "llama.cpp's server", log)
        yield f"http://{HOST}:{port}/v1"
    finally:
        stop(proc)


def _healthy(port: int) -> bool:
    import http.client

    try:
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False


def start_worker(engines, home: Path, urls: str, folder: Path, name: str, log: Path) -> subprocess.Popen:
    host, port, uri = engines
    env = {
        **os.environ,
        "CHROMA_HOST": host,
        "CHROMA_PORT": str(port),
        "LONGQA_POSTGRES_URI": uri,
        "LONGQA_EMBEDDINGS_URL": urls,
        "LONGQA_EMBEDDINGS_MODEL": "local",
        "LONGQA_EMBEDDINGS_BATCH": "4",
        "LONGQA_HOME": str(home),
    }
    command = [sys.executable, "-m", "longqa.cli", "index-together", str(folder), "--collection", name]
    command += ["--batch", "2", "--lease-s", "3"]
    return subprocess.Popen(command, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT)


def claimed_by(engines, name: str) -> list[str]:
    """The owners (host:pid:nonce) of the items claimed now."""
    import psycopg

    with psycopg.connect(engines[2], autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('longqa_build_items')").fetchone()[0] is None:
            return []  # no worker has started yet
        rows = conn.execute(
            "SELECT owner FROM longqa_build_items WHERE library = %s AND state = 'claimed'", (name,)
        ).fetchall()
    return [r[0] for r in rows]


def work_list(engines, name: str) -> int:
    """How many rows the library's build work list still holds."""
    import psycopg

    with psycopg.connect(engines[2], autocommit=True) as conn:
        return conn.execute("SELECT count(*) FROM longqa_build_items WHERE library = %s", (name,)).fetchone()[0]


def check_whole(engines, home: Path, urls: str, folder: Path, name: str) -> Library:
    """The published library holds every document exactly once."""
    host, port, uri = engines
    spec = EndpointSpec(urls=tuple(urls.split(",")), model="local")
    store = IndexStore(IndexSettings(home=home, chroma_host=host, chroma_port=port, postgres_uri=uri, embeddings=spec))
    library = Library(store, name)
    manifest = library.manifest()
    expected = {load_document(p).doc_id for p in sorted(folder.iterdir())}
    assert manifest.version == 1 and set(manifest.doc_ids()) == expected and len(manifest.doc_ids()) == len(expected)
    part = manifest.parts[G]
    units = library.units(part, manifest)
    stored = library.collection(G, part.collection, create=False).get(include=[])["ids"]
    assert len(stored) == len(set(stored)) == part.n_vectors == len(units.keys)  # one vector per distinct text
    assert set(stored) == set(units.keys)  # nothing missing, nothing extra
    assert library_dense.unfindable(library, G) == []  # a sample of chunks find themselves through the graph
    return library


def run_workers(engines, tmp_path, urls: str, folder: Path, name: str, n: int, kill: bool) -> list[str]:
    logs = [tmp_path / f"worker-{i}.log" for i in range(n)]
    workers = [start_worker(engines, tmp_path / f"home-{i}", urls, folder, name, logs[i]) for i in range(n)]
    killed = None
    try:
        if kill:  # SIGKILL a worker while it holds a claimed batch
            deadline = time.monotonic() + 120
            while killed is None and time.monotonic() < deadline:
                pids = {int(owner.split(":")[1]) for owner in claimed_by(engines, name)}
                killed = next((w for w in workers if w.pid in pids), None)
                time.sleep(0.05)
            assert killed is not None, "no worker was seen holding a batch"
            killed.send_signal(signal.SIGKILL)
        for w in workers:
            w.wait(timeout=300)
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    outputs = [log.read_text("utf-8", "replace") for log in logs]
    for w, out in zip(workers, outputs, strict=True):
        assert w is killed or w.returncode == 0, out
    survivors = [o for w, o in zip(workers, outputs, strict=True) if w is not killed]
    assert sum("published by this worker" in o for o in survivors) == 1, survivors
    return survivors


def test_three_workers_through_llama_cpp_one_killed_mid_batch(engines, llama, tmp_path, embedder):
    folder = corpus(tmp_path, 24)
    run_workers(engines, tmp_path, llama, folder, "through-llama", 3, kill=True)
    library = check_whole(engines, tmp_path / "reader", llama, folder, "through-llama")
    document = load_document(folder / "report-007.txt")
    own = document.text.split("\n\n")[0]
    hits = Searcher(library.store, library=library).search(own, k=1, granularity=G, mode="hybrid")
    assert hits[0].chunk.doc_id == document.doc_id
    host, port, uri = engines  # a replica with the bundled embedder refuses the library llama.cpp embedded
    settings = IndexSettings(home=tmp_path / "bundled", chroma_host=host, chroma_port=port, postgres_uri=uri)
    bundled = IndexStore(settings, embedder=embedder)
    with pytest.raises(EmbedderMismatch, match="openai:local .896-d.*longqa reembed through-llama"):
        Searcher(bundled, library=Library(bundled, "through-llama")).search(own, granularity=G, mode="dense")


def test_two_workers_through_a_fleet_whose_endpoint_fails_for_a_while(engines, tmp_path):
    folder = corpus(tmp_path, 16)
    with EmbeddingsStub(latency_s=0.02) as steady, EmbeddingsStub(latency_s=0.02) as flaky:
        flaky.fail_next = [429] * 6 + [500] * 6 + [503] * 3
        urls = f"{flaky.base_url},{steady.base_url}"
        run_workers(engines, tmp_path, urls, folder, "through-fleet", 2, kill=False)
        check_whole(engines, tmp_path / "reader", urls, folder, "through-fleet")
    assert claimed_by(engines, "through-fleet") == [] and work_list(engines, "through-fleet") == 0  # dropped
    assert flaky.statuses.count(429) == 6 and flaky.statuses.count(500) == 6  # every failure was met and retried
    assert sum(steady.requests) > 0 and sum(flaky.requests) > 0


def test_a_worker_with_another_embedder_is_refused(engines, tmp_path):
    from longqa.retrieval.index.library.build_queue import BuildQueue, Item

    host, port, uri = engines
    store = IndexStore(IndexSettings(home=tmp_path, chroma_host=host, chroma_port=port, postgres_uri=uri))
    items = [Item("/data/a.txt", "a.txt")]
    BuildQueue(store.catalog, "mixed", "v1", "first").join(items, "openai:local")
    BuildQueue(store.catalog, "mixed", "v1", "second").join(items, "openai:local")  # the same: joins
    with pytest.raises(EmbedderMismatch, match="build v1 embeds with openai:local, this worker with model"):
        BuildQueue(store.catalog, "mixed", "v1", "third").join(items, "model")
