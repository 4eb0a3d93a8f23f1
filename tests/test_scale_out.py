"""The scale-out tier: two replicas (`longqa serve`, separate processes, each with a home of its own)
over one real Chroma server and one real PostgreSQL, all on 127.0.0.1 and free ports.

- a library updated through replica A is searched, complete, by replica B without a restart;
- a thread started on one replica continues on the other (PostgreSQL checkpointer);
- 16 concurrent runs over 8 libraries on both replicas each retrieve and cite only the library
  they named;
- a replica killed in the middle of an update: the other keeps serving the last complete version,
  and its own update, at once (the dead one's advisory lock went with its connection), clears what
  the killed one left. The catalog is in PostgreSQL (tests/test_catalog_postgres.py tests it alone).

The answers come from the scripted test model (not an LLM): what is checked is which documents a
run could read, not answer quality."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import ChromaServer, Postgres, Replica, chroma_client, chroma_server, postgres_server

pytestmark = [pytest.mark.scale_out, pytest.mark.integration]

N_LIBRARIES = 8
CODE_QUESTION = "What is the vault code written in the archive ledger?"
WORDS = (
    "harbor ledger council meadow lantern orchard quarry bridge market parish timber granary "
    "weather river signal mill cottage canal beacon furnace chapel foundry wharf tannery"
).split()


def filler(rng: random.Random, n_words: int) -> str:
    sentences, words = [], 0
    while words < n_words:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12))
        sentences.append(sentence.capitalize() + ".")
        words += 12
    return " ".join(sentences)


def code(library: int, doc: int) -> str:
    return f"VC-{library}{doc}-{7919 * (library + 1) * (doc + 3) % 100000:05d}"


@dataclass
class Cluster:
    chroma: ChromaServer
    postgres: Postgres
    root: Path
    a: Replica
    b: Replica

    def manifest(self, library: str) -> dict:
        """The published manifest, from the catalog in PostgreSQL (LONGQA_POSTGRES_URI is set)."""
        import psycopg

        with psycopg.connect(self.postgres.uri) as conn:
            row = conn.execute("SELECT manifest FROM longqa_libraries WHERE name = %s", (library,)).fetchone()
        return json.loads(row[0])

    def updating(self) -> bool:
        """Whether some replica holds a library's update lock (a session advisory lock in PostgreSQL)."""
        import psycopg

        with psycopg.connect(self.postgres.uri) as conn:
            row = conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").fetchone()
        return bool(row[0])

    def vectors(self, library: str) -> tuple[int, int]:
        """(vectors in the current version's collection, units the manifest names)."""
        part = next(iter(self.manifest(library)["parts"].values()))
        collection = chroma_client(self.chroma.host, self.chroma.port).get_collection(part["collection"])
        return collection.count(), part["n_units"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    base = tmp_path_factory.mktemp("scale-out")
    root = base / "documents"  # the folder every replica reads (a shared volume in a deployment)
    rng = random.Random(7)
    for k in range(N_LIBRARIES):
        for j in range(2):
            text = (
                f"# Archive {k}.{j}\n\n{filler(rng, 120)}\n\n"
                f"The vault code written in the archive ledger is {code(k, j)}.\n\n{filler(rng, 120)}\n"
            )
            (root / f"lib{k}").mkdir(parents=True, exist_ok=True)
            (root / f"lib{k}" / f"doc{j}.md").write_text(text, "utf-8")
    with chroma_server(base) as chroma, postgres_server() as postgres:
        env = {
            "CHROMA_HOST": chroma.host,
            "CHROMA_PORT": str(chroma.port),
            "LONGQA_POSTGRES_URI": postgres.uri,
            "LONGQA_DOCUMENTS_ROOT": str(root),
            "LONGQA_MODEL": "scripted",
            "LONGQA_TOKENIZER": "wordpiece",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
        }
        a = Replica("replica-a", base / "home-a", env).start()
        b = Replica("replica-b", base / "home-b", env).start()
        try:
            yield Cluster(chroma, postgres, root, a, b)
        finally:
            a.stop()
            b.stop()


def index(replica: Replica, library: str, files: list[str]) -> dict:
    status, out = replica.post("/index", {"collection": library, "documents": files})
    assert status == 200 and not out.get("error"), (status, out)
    return out


def ask(replica: Replica, question: str, library: str, **fields) -> dict:
    status, out = replica.post("/ask", {"question": question, "collection": library, **fields})
    assert status == 200, (status, out)
    return out


def sources(out: dict) -> set[str]:
    return {e["source"] for e in (out.get("evidence") or []) + (out.get("citations") or [])}


def test_a_library_updated_through_a_is_searched_complete_by_b(cluster: Cluster) -> None:
    out = index(cluster.a, "growing", ["lib0/doc0.md"])
    assert out["version"] == 1
    first = ask(cluster.b, CODE_QUESTION, "growing")
    assert first["status"] == "answered" and code(0, 0) in first["answer"], first
    # nothing about the library is on either replica's disk but caches: the manifest is on the server
    for replica in (cluster.a, cluster.b):
        assert not list(replica.home.glob("libraries/*/manifest.json"))

    out = index(cluster.a, "growing", ["lib0/doc0.md", "lib1/doc1.md"])
    assert out["version"] == 2 and out["changes"]["added"] == ["lib1/doc1.md"]
    deadline = time.monotonic() + 10
    while True:  # B rechecks the manifest at most once a second
        later = ask(cluster.b, CODE_QUESTION, "growing")
        if sources(later) >= {"lib0/doc0.md", "lib1/doc1.md"} or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert sources(later) == {"lib0/doc0.md", "lib1/doc1.md"}, later["evidence"]
    assert later["plan"] and later["status"] == "answered"

    index(cluster.b, "growing", ["lib1/doc1.md"])  # and back: removed through B, gone for A
    time.sleep(1.2)
    assert sources(ask(cluster.a, CODE_QUESTION, "growing")) == {"lib1/doc1.md"}


def test_a_thread_started_on_one_replica_continues_on_the_other(cluster: Cluster) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    index(cluster.a, "talk", ["lib2/doc0.md", "lib2/doc1.md"])
    first = ask(cluster.a, CODE_QUESTION, "talk", thread_id="thread-1")
    assert first["status"] == "answered"
    follow = "And which archive ledger records the vault code?"
    second = ask(cluster.b, follow, "talk", thread_id="thread-1")
    assert second["status"] == "answered"
    # B read the first turn from PostgreSQL: the follow-up is searched with the previous question
    assert second["evidence"] and all(e["query"].startswith(CODE_QUESTION) for e in second["evidence"])
    # the database restarts between turns (every pooled connection dropped): the next turn reconnects
    cluster.postgres.restart()
    third = ask(cluster.a, "Which vault code again?", "talk", thread_id="thread-1")
    assert third["status"] == "answered", third.get("error")

    with PostgresSaver.from_conn_string(cluster.postgres.uri) as saver:
        state = saver.get_tuple({"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}})
    messages = state.checkpoint["channel_values"]["messages"]
    assert [m.type for m in messages] == ["human", "ai"] * 3
    assert [m.content for m in messages[::2]] == [CODE_QUESTION, follow, "Which vault code again?"]
    # the CLI's --thread uses the same database: a turn from a command line continues on a replica
    cli = [str(Path(sys.executable).parent / "longqa"), "ask", "--collection", "talk", "--thread", "thread-cli"]
    env = {**os.environ, **cluster.a.env, "LONGQA_HOME": str(cluster.a.home.parent / "home-cli")}
    done = subprocess.run([*cli, "--quiet", CODE_QUESTION], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "VC-2" in done.stdout, done.stdout + done.stderr
    continued = ask(cluster.b, follow, "talk", thread_id="thread-cli")
    assert all(e["query"].startswith(CODE_QUESTION) for e in continued["evidence"])
    assert not (cluster.a.home.parent / "home-cli" / "threads.sqlite").exists()

    # a thread unknown to both replicas starts empty on either
    fresh = ask(cluster.b, CODE_QUESTION, "talk", thread_id="thread-2")
    assert all(e["query"] == CODE_QUESTION for e in fresh["evidence"])


def test_sixteen_concurrent_runs_over_eight_libraries_see_only_their_own(cluster: Cluster) -> None:
    for k in range(N_LIBRARIES):  # indexed through both replicas, alternately
        index((cluster.a, cluster.b)[k % 2], f"tenant-{k}", [f"lib{k}/doc0.md", f"lib{k}/doc1.md"])
    runs = [(k, replica) for k in range(N_LIBRARIES) for replica in (cluster.a, cluster.b)]
    barrier = threading.Barrier(len(runs))

    def run(k: int, replica: Replica) -> tuple[int, dict]:
        barrier.wait()  # every run in a thread of its own: 16 checkpoint writers at once
        return k, ask(replica, CODE_QUESTION, f"tenant-{k}", thread_id=f"tenant-{k}-{replica.name}")

    with ThreadPoolExecutor(len(runs)) as pool:
        results = list(pool.map(lambda r: run(*r), runs))
    assert len(results) == 16
    for k, out in results:
        own = {f"lib{k}/doc0.md", f"lib{k}/doc1.md"}
        assert out["status"] == "answered", out.get("error")
        assert out["evidence"] and sources(out) <= own, (k, sources(out))
        assert any(code(k, j) in out["answer"] for j in range(2)), (k, out["answer"])
        others = [code(i, j) for i in range(N_LIBRARIES) if i != k for j in range(2)]
        text = json.dumps(out)
        assert not [c for c in others if c in text], (k, "another library's code in the output")

    # naming another library's file inside a collection is refused, not searched
    out = ask(cluster.a, CODE_QUESTION, "tenant-0", documents=["lib1/doc0.md"])
    assert out["status"] == "error" and "none of the documents given are in collection" in out["error"]
    # and a thread that moves to another collection reads only that one
    ask(cluster.a, CODE_QUESTION, "tenant-3", thread_id="moving")
    moved = ask(cluster.b, "Which vault code does the ledger hold?", "tenant-4", thread_id="moving")
    assert sources(moved) <= {"lib4/doc0.md", "lib4/doc1.md"} and code(3, 0) not in json.dumps(moved["citations"])


def test_a_replica_killed_mid_update_leaves_the_other_serving_the_last_complete_version(cluster: Cluster) -> None:
    index(cluster.b, "ledger", ["lib5/doc0.md", "lib5/doc1.md"])
    before_count, before_units = cluster.vectors("ledger")
    assert before_count == before_units
    rng = random.Random(11)
    big = []
    for i in range(4):  # ~4 x 12,000 words: seconds of embedding, long enough to be caught in the middle
        name = f"big/part{i}.md"
        (cluster.root / "big").mkdir(exist_ok=True)
        body = f"# Part {i}\n\nThe sealed annex register of part {i} lists the keeper Orsolya Brandt-{i}.\n\n"
        (cluster.root / name).write_text(body + filler(rng, 12_000), "utf-8")
        big.append(name)

    def update_through_a() -> None:
        with contextlib.suppress(OSError, http.client.HTTPException):  # A dies under it
            cluster.a.post("/index", {"collection": "ledger", "documents": ["lib5/doc0.md", *big]}, 300)

    update = threading.Thread(target=update_through_a, daemon=True)
    update.start()
    deadline = time.monotonic() + 240
    # A holds the lock while it reads, embeds (the new documents together: tens of seconds for ~48,000
    # words) and adds its vectors; it is killed in the middle of that
    while not cluster.updating():
        assert time.monotonic() < deadline and update.is_alive(), "the update ended before it could be killed"
        time.sleep(0.05)
    time.sleep(1.0)
    assert update.is_alive(), "the update ended before it could be killed"
    cluster.a.kill()
    assert cluster.manifest("ledger")["version"] == 1, "the killed update published"

    # B serves version 1, complete: both of its documents, nothing of the killed update
    out = ask(cluster.b, CODE_QUESTION, "ledger")
    assert out["status"] == "answered" and sources(out) == {"lib5/doc0.md", "lib5/doc1.md"}
    out = ask(cluster.b, "Who is the keeper in the sealed annex register?", "ledger")
    assert not [s for s in sources(out) if s.startswith("big/")], sources(out)

    # B's own update takes the lock at once (it went with the dead replica's connection) and clears what A left
    (cluster.root / "lib5" / "late.md").write_text(
        "# Late\n\nThe night porter of the archive is Casimir Oduya.\n\n" + filler(rng, 100), "utf-8"
    )
    t0 = time.monotonic()
    out = index(cluster.b, "ledger", ["lib5/doc0.md", "lib5/doc1.md", "lib5/late.md"])
    assert time.monotonic() - t0 < 30
    assert out["version"] == 2 and out["changes"]["added"] == ["lib5/late.md"]
    count, units = cluster.vectors("ledger")
    assert count == units, "the killed update's vectors were left in the collection"

    # a new replica in A's place serves version 2 at once
    cluster.a.start()
    out = ask(cluster.a, "Who is the night porter of the archive?", "ledger")
    assert "Casimir Oduya" in out["answer"] and "lib5/late.md" in sources(out)
