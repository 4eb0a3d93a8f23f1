"""Versions with the catalog in PostgreSQL and a real Chroma server (the scale_out tier's servers,
started by tests/test_catalog_postgres.py's fixture):

- a removed document's vectors outlive the publish: a reader holding the previous manifest still
  finds them; a later update after the grace period deletes them (a question never does);
- an inline library's last use is one row in the catalog, so two hosts (two homes) agree on what
  has expired: one host's old use never expires a library the other used since;
- two writer processes update one library 20 times, one killed each round (half of them just after
  their first new member's vectors landed), while a reader thread keeps reading the published
  manifest: every document it lists has all its vectors, and a search never returns an unlisted
  document's; it never sees a half version. After each round the manifest and vectors agree exactly.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from longqa.retrieval.index.library import library_gc
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import file_members
from longqa.retrieval.search.search import query_vector
from tests.test_catalog_postgres import G, Servers, _settings, servers, text, write_docs

pytestmark = [pytest.mark.scale_out, pytest.mark.integration]
__all__ = ["servers"]  # the module's PostgreSQL and Chroma server


def test_removed_vectors_outlive_the_publish_and_go_with_an_update_after_the_grace(
    servers: Servers, tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = write_docs(tmp_path / "docs", 3)
    writer_store, reader_store = servers.store(tmp_path / "a", embedder), servers.store(tmp_path / "b", embedder)
    writer, reader = Library(writer_store, "removing"), Library(reader_store, "removing")
    writer.update(file_members(files, 100_000), [G])
    held = reader.manifest()  # a replica's question read this version and keeps it for its run
    removed = held.documents[str(files[2].resolve())].doc_id
    writer.update(file_members(files[:2], 100_000), [G])  # removes doc2 and publishes version 2
    assert [r[0] for r in servers.sql("SELECT doc_id FROM longqa_library_removed")] == [removed]
    vector = query_vector(embedder, "Who is the keeper of record 2?")
    top = reader.dense_top(G, held.parts[G], vector, 3, set(held.doc_ids()), subset=False)
    assert removed in {d for d, _ in top}, "a reader of the previous manifest lost a listed document"
    assert servers.agree("removing", exact=False) == 2
    writer.update(None, [G])  # within the grace: kept
    assert servers.agree("removing", exact=False) == 2 and _vectors(servers, held, removed) > 0
    monkeypatch.setattr(library_gc, "RETIRE_AFTER_S", 0.0)  # the grace is over
    writer.update(None, [G], collect=False)  # as a question's update: collects nothing
    assert _vectors(servers, held, removed) > 0
    writer.update(None, [G])  # the index path's next update deletes them
    assert _vectors(servers, held, removed) == 0 and servers.agree("removing") == 2
    assert not servers.sql("SELECT 1 FROM longqa_library_removed WHERE library = 'removing'")


def _vectors(servers: Servers, manifest, doc_id: str) -> int:
    from tests.servers import chroma_client

    collection = chroma_client(servers.chroma.host, servers.chroma.port).get_collection(manifest.parts[G].collection)
    return len(collection.get(where={"doc_id": doc_id})["ids"])


def test_an_inline_librarys_last_use_is_shared_by_every_host(servers: Servers, tmp_path: Path) -> None:
    from longqa.services.inputs import index_library, open_library

    one, other = _settings(servers, tmp_path / "one"), _settings(servers, tmp_path / "other")
    inline = {"texts": [text(11, "The ferry Alba sails at noon.")]}
    name = open_library(inline, one).library.name  # a question on host one makes the inline library
    assert not list((tmp_path / "one").glob("libraries/*/used-at")), "a host-local mark: hosts would disagree"

    def used_hours_ago(hours: int) -> None:
        servers.sql("UPDATE longqa_library_used SET used_at = now() - make_interval(hours => %s)", (hours,))

    used_hours_ago(2)  # host one used it two hours ago...
    open_library(inline, other)  # ...and host other just now: one upsert, no lock
    keep_an_hour = one.model_copy(update={"inline_keep_s": 3600.0})
    index_library({"documents": [str(write_docs(tmp_path / "docs", 1)[0])]}, keep_an_hour, [G])  # collects on one
    assert servers.sql("SELECT 1 FROM longqa_libraries WHERE name = %s", (name,)), "expired by one host's old use"
    used_hours_ago(2)  # no host has used it since
    index_library({"documents": [str(tmp_path / "docs")]}, other.model_copy(update={"inline_keep_s": 3600.0}), [G])
    assert not servers.sql("SELECT 1 FROM longqa_libraries WHERE name = %s", (name,)), "an expired library stayed"
    assert not servers.sql("SELECT 1 FROM longqa_library_used WHERE library = %s", (name,))
    assert open_library(inline, one).library.manifest().version == 1  # asked again: simply made again


RANDOM_WRITER = """
import random, sys
from pathlib import Path
from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import file_members
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.tokens import wordpiece_counter

home, host, port, uri, seed, *files = sys.argv[1:]
store = IndexStore(IndexSettings(home=home, chroma_host=host, chroma_port=int(port), postgres_uri=uri),
                   counter=wordpiece_counter())
store.embedder.embed(["warm"])
rng = random.Random(int(seed))
chosen = sorted(rng.sample(files, rng.randint(1, len(files))))
print("ready", flush=True)
seen = []

def say(event):
    if event.step == "indexing" and not seen:  # vectors of a new member are in, unpublished
        seen.append(print("indexing", flush=True))

update = Library(store, "churn").update(file_members([Path(f) for f in chosen], 100000), [150], progress=say)
print("published", update.version, flush=True)
"""


class Reader(threading.Thread):
    """A replica's reader: over and over, the published manifest (as a question reads it, up to a
    second old), then Chroma: every listed document has all its vectors, and a search of the whole
    library returns listed documents only. `gate` is held for each read (the test takes it to run
    an update with no grace: no reader then holds a manifest)."""

    def __init__(self, library: Library, vector: np.ndarray, gate: threading.Lock):
        super().__init__(daemon=True)
        self.library, self.vector, self.gate = library, vector, gate
        self.done = threading.Event()
        self.checks, self.versions, self.half = 0, set(), []

    def run(self) -> None:
        while not self.done.is_set():
            with self.gate:
                try:
                    self.check()
                except Exception as e:  # noqa: BLE001 - a reader that fails saw something it should not
                    self.half.append(f"{type(e).__name__}: {e}")
            time.sleep(0.01)

    def check(self) -> None:
        manifest = self.library.manifest()
        part, listed = manifest.parts.get(G), set(manifest.doc_ids())
        if part is None or not listed:  # no version yet
            return
        collection = self.library.collection(G, part.collection, create=False)
        got = collection.get(where={"doc_id": {"$in": sorted(listed)}}, include=["metadatas"])["metadatas"]
        if {m["doc_id"] for m in got} != listed or len(got) != part.n_units:
            self.half.append(f"version {manifest.version}: {len(got)} of {part.n_units} vectors")
        top = self.library.dense_top(G, part, self.vector, 6, listed, subset=False)
        if not top or not {d for d, _ in top} <= listed:
            self.half.append(f"version {manifest.version}: searched {sorted({d for d, _ in top} - listed)}")
        self.checks += 1
        self.versions.add(manifest.version)


def test_two_replicas_updating_one_library_with_random_kills_never_show_a_reader_half_a_version(
    servers: Servers, tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [str(f) for f in write_docs(tmp_path / "docs", 6)]
    env = {**os.environ, "LONGQA_TOKENIZER": "wordpiece", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    rng = random.Random(31)
    library = Library(servers.store(tmp_path / "checker", embedder), "churn")
    gate, vector = threading.Lock(), query_vector(embedder, "Who is the keeper of the record?")
    reader = Reader(Library(servers.store(tmp_path / "reader", embedder), "churn"), vector, gate)
    reader.start()
    kills = versions = dirty = mid = 0
    try:
        for round_ in range(20):
            kills, dirty, mid = _round(servers, tmp_path, files, env, rng, (kills, dirty, mid))
            with gate, monkeypatch.context() as patch:  # no reader holds a manifest: no grace is needed
                patch.setattr(library_gc, "RETIRE_AFTER_S", 0.0)
                library.update(None, [G])  # changes nothing; clears what a killed writer left, and the removed
                reader.library._read_cache = None  # as 15 minutes on would: its manifest is a new read
            versions = servers.agree("churn")  # exactly
            assert not servers.sql("SELECT 1 FROM longqa_library_pending WHERE library = 'churn'"), round_
    finally:
        reader.done.set()
        reader.join(timeout=60)
    print(f"20 rounds: {kills} writers killed ({mid} mid-update), {dirty} left vectors to clear, version {versions}")
    print(f"reader: {reader.checks} checks over {len(reader.versions)} versions, {len(reader.half)} half versions")
    assert not reader.half, reader.half[:5]
    assert kills >= 10 and versions >= 5, (kills, versions)
    assert reader.checks >= 100 and len(reader.versions) >= 5, (reader.checks, sorted(reader.versions))


def _round(servers: Servers, tmp_path: Path, files: list[str], env: dict, rng: random.Random, counts: tuple) -> tuple:
    """Two writer processes update "churn" to random subsets of `files`; one is killed (half the
    time just after its first new member's vectors landed). Returns (kills, dirty, mid) counted on."""
    kills, dirty, mid = counts
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(RANDOM_WRITER),
                str(tmp_path / f"home-{who}"),
                servers.chroma.host,
                str(servers.chroma.port),
                servers.postgres.uri,
                str(rng.randrange(10**6)),
                *files,
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        for who in "ab"
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stdout.read()
        victim = rng.choice(procs)
        if rng.random() < 0.5:  # in the middle of its update: its first new member's vectors are in
            while (line := victim.stdout.readline()) and line.strip() != "indexing":  # type: ignore[union-attr]
                pass
            mid += bool(line)
        else:  # anywhere: waiting for the lock, embedding, adding, publishing, done
            time.sleep(rng.uniform(0.0, 1.5))
        victim.kill()
        for proc in procs:
            out, _ = proc.communicate(timeout=120)
            assert proc is victim or proc.returncode == 0, out
        kills += victim.returncode == -signal.SIGKILL
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    try:  # a writer killed in the middle of its update left vectors outside the manifest
        servers.agree("churn", exact=False)
    except AssertionError:
        dirty += 1
    return kills, dirty, mid
