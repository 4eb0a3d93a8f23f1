"""The catalog in PostgreSQL (retrieval/index/library/catalog_postgres.py), against a real PostgreSQL and a real
Chroma server started on free ports (the scale_out tier's servers, tests/servers.py):

- the update lock is a session advisory lock: released when its holder's connection is killed
  (pg_terminate_backend), and its holder then fails at its next check;
- publishing is a compare-and-set on the version: a stale writer publishes nothing, and a writer
  that lost its lock mid-update removes the vectors it added (none stray in the collection);
- texts are referenced by the libraries that hold them: forgetting one keeps it while any does;
- a question over an unchanged library takes no lock (and a changed one takes it once);
- a replica frozen (SIGSTOP) past its lock, then resumed, cannot publish and leaves no stray vectors;
- PostgreSQL restarted in the middle of an update: it publishes nothing, and the next one does;
- 32 questions over a library while its update holds the lock: none waits on it;
- the Chroma server killed and restarted in the middle of an update.
After each fault, the published manifest and the vectors agree exactly (`Servers.agree`).
tests/test_catalog_versions.py: removed documents' grace, inline libraries' shared last use, and
two writers updating one library 20 times with random kills under a concurrent reader.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.library.catalog import LockLost, Publication, StalePublish
from longqa.retrieval.index.library.catalog_postgres import PostgresCatalog
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import document_members, file_members
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.tokens import wordpiece_counter
from tests.servers import ChromaServer, Postgres, chroma_client, chroma_server, free_port, postgres_server

pytestmark = [pytest.mark.scale_out, pytest.mark.integration]

G = 150
WORDS = "harbor ledger council meadow lantern orchard quarry bridge market parish timber granary".split()


@dataclass
class Servers:
    chroma: ChromaServer
    postgres: Postgres

    def store(self, home: Path, embedder) -> IndexStore:
        settings = IndexSettings(
            home=home, chroma_host=self.chroma.host, chroma_port=self.chroma.port, postgres_uri=self.postgres.uri
        )
        return IndexStore(settings, embedder=embedder, counter=wordpiece_counter())

    def sql(self, query: str, params: tuple = ()) -> list[tuple]:
        with psycopg.connect(self.postgres.uri, autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

    def count(self, collection: str) -> int:
        return chroma_client(self.chroma.host, self.chroma.port).get_collection(collection).count()

    def agree(self, library: str, exact: bool = True) -> int:
        """The invariant: the published manifest and the vectors agree (each part's collection holds
        every vector of the manifest's documents and, besides them, nothing; unless `exact`, only the
        vectors of documents a publish removed whose grace has not run out). Returns the version."""
        manifest = Library(self.store(Path(tempfile.gettempdir()) / "longqa-agree", None), library).manifest()
        client = chroma_client(self.chroma.host, self.chroma.port)
        listed = set(manifest.doc_ids())
        query = "SELECT doc_id FROM longqa_library_removed WHERE library = %s"
        awaiting = set() if exact else {r[0] for r in self.sql(query, (library,))}
        for part in manifest.parts.values():
            held = [m["doc_id"] for m in client.get_collection(part.collection).get(include=["metadatas"])["metadatas"]]
            assert sum(d in listed for d in held) == part.n_units, (library, len(held), part.n_units)
            assert {d for d in held if d in listed} == listed, library
            assert set(held) - listed <= awaiting, (library, sorted(set(held) - listed - awaiting))
        return manifest.version


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    with chroma_server(tmp_path_factory.mktemp("chroma")) as chroma, postgres_server() as postgres:
        yield Servers(chroma, postgres)


def text(seed: int, fact: str, n_words: int = 300) -> str:
    rng = random.Random(seed)
    filler = " ".join(rng.choice(WORDS) for _ in range(n_words))
    return f"# Record {seed}\n\n{fact}\n\n{filler.capitalize()}.\n"


def write_docs(folder: Path, n: int, start: int = 0) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(start, start + n):
        f = folder / f"doc{i}.md"
        f.write_text(text(i, f"The keeper of record {i} is Keeper-{i * 7919 % 1000}."), "utf-8")
        files.append(f)
    return files


def test_the_lock_goes_with_its_holders_connection_and_the_holder_then_fails_its_check(
    servers: Servers, tmp_path: Path, embedder
) -> None:
    a = servers.store(tmp_path / "a", embedder).catalog
    b = servers.store(tmp_path / "b", embedder).catalog
    assert isinstance(a, PostgresCatalog) and isinstance(b, PostgresCatalog)
    taken = threading.Event()

    def take_from_b() -> None:
        with b.lock("held"):
            taken.set()

    with a.lock("held") as held:
        waiter = threading.Thread(target=take_from_b)
        waiter.start()
        assert not taken.wait(1.0), "B took the lock A holds"
        # A's session is killed (as when its host dies): the server releases the lock itself
        servers.sql("SELECT pg_terminate_backend(%s)", (held.pid,))
        assert taken.wait(10.0), "the lock outlived its holder's connection"
        with pytest.raises(LockLost):
            held.check()
    waiter.join(timeout=10)
    # no lease record, no renewal: nothing about the lock is left in a table
    assert not servers.sql("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()")


def test_publish_is_a_compare_and_set_a_stale_writer_publishes_nothing(servers: Servers, tmp_path: Path, embedder):
    a = servers.store(tmp_path / "a", embedder).catalog
    with a.lock("cas") as held:
        a.put_document(_doc("cas"))
        a.publish(held, "cas", Publication('{"version": 1}', 1, 0, [], []))
        with pytest.raises(StalePublish):  # a second first version
            a.publish(held, "cas", Publication('{"version": 1, "stale": true}', 1, 0, [], []))
        a.publish(held, "cas", Publication('{"version": 2}', 2, 1, [], []))
        with pytest.raises(StalePublish):  # started from version 1, which is no longer published
            a.publish(held, "cas", Publication('{"version": 2, "stale": true}', 2, 1, [], []))
    assert a.read("cas") == '{"version": 2}'
    # a publish goes through the lock's own session: a writer whose session ended cannot publish
    with a.lock("cas") as held:
        servers.sql("SELECT pg_terminate_backend(%s)", (held.pid,))
        with pytest.raises(LockLost):
            a.publish(held, "cas", Publication('{"version": 3}', 3, 2, [], []))
    assert a.read("cas") == '{"version": 2}'


def _doc(seed: str):
    from longqa.retrieval import document_from_text

    return document_from_text(text(hash(seed) % 1000, f"The ledger of {seed} is kept in the vault."), source=seed)


def test_a_writer_that_lost_its_lock_mid_update_publishes_nothing_and_leaves_no_stray_vectors(
    servers: Servers, tmp_path: Path, embedder
) -> None:
    files = write_docs(tmp_path / "docs", 4)
    a_store, b_store = servers.store(tmp_path / "a", embedder), servers.store(tmp_path / "b", embedder)
    lib_a, lib_b = Library(a_store, "contested"), Library(b_store, "contested")
    lib_a.update(file_members(files[:1], a_store.settings.max_words), [G])
    killed: list[int] = []

    def kill_own_session(event) -> None:  # A's session dies after its first new document's vectors landed
        if event.step == "indexing" and not killed:
            killed.append(lib_a._held.pid)
            servers.sql("SELECT pg_terminate_backend(%s)", (lib_a._held.pid,))
            lib_b.update(file_members([files[0], files[3]], b_store.settings.max_words), [G])  # B publishes v2

    with pytest.raises(LockLost):
        lib_a.update(file_members(files[:3], a_store.settings.max_words), [G], progress=kill_own_session)
    assert killed
    manifest = Library(servers.store(tmp_path / "c", embedder), "contested").manifest()
    assert manifest.version == 2 and len(manifest.documents) == 2
    part = manifest.parts[G]
    assert servers.count(part.collection) == part.n_units, "the stale writer's vectors were left behind"
    assert servers.agree("contested") == 2
    assert not servers.sql("SELECT * FROM longqa_library_pending WHERE library = 'contested'")


def test_a_text_is_forgotten_only_when_no_library_references_it(servers: Servers, tmp_path: Path, embedder) -> None:
    store = servers.store(tmp_path / "a", embedder)
    catalog: PostgresCatalog = store.catalog  # type: ignore[assignment]
    document = _doc("shared text")
    first, second = Library(store, "refs-one"), Library(store, "refs-two")
    for library in (first, second):
        library.update(document_members([document]), [G])
    assert catalog.references(document.doc_id) == 2
    catalog.forget_documents([document.doc_id])
    assert catalog.has_documents([document.doc_id]) == {document.doc_id}, "a referenced text was dropped"
    first.delete()
    assert catalog.references(document.doc_id) == 1
    catalog.forget_documents([document.doc_id])
    fresh = servers.store(tmp_path / "b", embedder)  # another replica still reads it
    assert fresh.document(document.doc_id).text == document.text
    second.delete()
    catalog.forget_documents([document.doc_id], older_than_s=3600)  # put moments ago: kept a while yet
    assert catalog.has_documents([document.doc_id]) == {document.doc_id}
    catalog.forget_documents([document.doc_id])
    assert catalog.has_documents([document.doc_id]) == set()
    assert not servers.sql("SELECT 1 FROM longqa_chunkings WHERE doc_id = %s", (document.doc_id,))


def test_forget_inline_keeps_a_text_a_named_collection_holds(servers: Servers, tmp_path: Path, embedder) -> None:
    from longqa.services.inputs import index_library

    settings = _settings(servers, tmp_path / "home")
    same = text(5, "The ferry Alba sails at noon.")
    index_library({"texts": [same], "collection": "kept"}, settings, [G])
    index_library({"texts": [same]}, settings, [G])  # the same content, inline
    from longqa.services.stores import store_for

    store = store_for(settings)
    (doc_id,) = Library(store, "kept").manifest().doc_ids()
    assert store.forget_inline(0.0, keep=set()) == 1  # this host's copy goes...
    fresh = servers.store(tmp_path / "other", embedder)
    assert fresh.document(doc_id).text.strip().endswith(".")  # ...the catalog's stays: "kept" holds it


def _settings(servers: Servers, home: Path) -> Settings:
    return Settings(
        home=home,
        chroma_host=servers.chroma.host,
        chroma_port=servers.chroma.port,
        postgres_uri=servers.postgres.uri,
    )


def test_a_question_over_an_unchanged_library_takes_no_lock(
    servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from longqa.services.inputs import index_library, open_library

    files = write_docs(tmp_path / "docs", 2)
    settings = _settings(servers, tmp_path / "home")
    first = index_library({"documents": [str(tmp_path / "docs")]}, settings, [G])
    assert isinstance(first.library.catalog, PostgresCatalog)
    names = [c.name for c in chroma_client(servers.chroma.host, servers.chroma.port).list_collections()]
    assert "longqa-catalog" not in names and first.library.manifest().parts[G].collection in names  # vectors only
    locks: list[str] = []
    real_lock = PostgresCatalog.lock

    def counted(self, name):
        locks.append(name)
        return real_lock(self, name)

    monkeypatch.setattr(PostgresCatalog, "lock", counted)
    for _ in range(3):
        again = open_library({"documents": [str(tmp_path / "docs")]}, settings)
        assert not again.update.published and again.doc_ids == first.doc_ids
    assert locks == []
    os.utime(files[0], ns=(1, 1))  # a stat that differs: the write path, once
    open_library({"documents": [str(tmp_path / "docs")]}, settings)
    assert locks == [first.library.name]


FROZEN_WRITER = """
import os, signal, sys
from pathlib import Path
from longqa.retrieval.index.library.catalog import LockLost
from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import file_members
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.tokens import wordpiece_counter

home, host, port, uri, *files = sys.argv[1:]
store = IndexStore(IndexSettings(home=home, chroma_host=host, chroma_port=int(port), postgres_uri=uri),
                   counter=wordpiece_counter())
store.embedder.embed(["warm"])  # loaded before the lock: the model's load is not the silence timed here
store.catalog.lock_idle_s = 3.0  # a holder silent for 3 s loses its session
library = Library(store, "frozen")
frozen = []

def freeze(event):
    if event.step == "indexing" and not frozen:  # one new document's vectors are in Chroma
        frozen.append(1)
        print("frozen", flush=True)
        os.kill(os.getpid(), signal.SIGSTOP)

try:
    library.update(file_members([Path(f) for f in files], 100000), [150], progress=freeze)
except LockLost as e:
    print("lock lost:", e, flush=True)
    sys.exit(3)
print("published", flush=True)
"""


def test_a_replica_frozen_past_its_lock_cannot_publish_and_leaves_no_stray_vectors(
    servers: Servers, tmp_path: Path, embedder
) -> None:
    files = write_docs(tmp_path / "docs", 4)
    store = servers.store(tmp_path / "b", embedder)
    library = Library(store, "frozen")
    library.update(file_members(files[:1], store.settings.max_words), [G])
    env = {**os.environ, "LONGQA_TOKENIZER": "wordpiece", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    args = [str(tmp_path / "a"), servers.chroma.host, str(servers.chroma.port), servers.postgres.uri]
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(FROZEN_WRITER), *args, *map(str, files[:3])],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "frozen", proc.stdout.read()
        deadline = time.monotonic() + 30
        while _state(proc.pid) != "T":
            assert time.monotonic() < deadline, "the writer never stopped"
            time.sleep(0.05)
        # B takes the lock once the frozen holder's session has timed out, and publishes version 2
        t0 = time.monotonic()
        library.update(file_members([files[0], files[3]], store.settings.max_words), [G])
        assert time.monotonic() - t0 < 30 and library.manifest().version == 2
        proc.send_signal(signal.SIGCONT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3 and "lock lost" in out, out
    manifest = Library(servers.store(tmp_path / "c", embedder), "frozen").manifest()
    assert manifest.version == 2 and len(manifest.documents) == 2
    assert servers.count(manifest.parts[G].collection) == manifest.parts[G].n_units, "stray vectors"
    assert servers.agree("frozen") == 2


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_postgres_restarted_mid_update_publishes_nothing_and_the_next_update_does(
    servers: Servers, tmp_path: Path, embedder
) -> None:
    files = write_docs(tmp_path / "docs", 3)
    store = servers.store(tmp_path / "a", embedder)
    library = Library(store, "restarted")
    library.update(file_members(files[:1], store.settings.max_words), [G])
    restarted: list[bool] = []

    def restart(event) -> None:
        if event.step == "indexing" and not restarted:
            restarted.append(True)
            servers.postgres.restart()  # every connection dropped, the lock's included

    with pytest.raises(LockLost):
        library.update(file_members(files, store.settings.max_words), [G], progress=restart)
    assert restarted and servers.agree("restarted") == 1
    library.update(file_members(files, store.settings.max_words), [G])  # the pool reconnects
    assert servers.agree("restarted") == 2


def test_questions_over_a_library_never_wait_on_its_update(servers: Servers, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from longqa.services.inputs import index_library, open_library
    from longqa.services.stores import searcher_for

    files = write_docs(tmp_path / "docs", 3)
    settings = _settings(servers, tmp_path / "home")
    index_library({"documents": [str(f) for f in files[:2]], "collection": "busy"}, settings, [G])
    inside, release = threading.Event(), threading.Event()

    def hold(event) -> None:  # the update stops, holding the lock, until the questions are done
        if event.step == "indexing":
            inside.set()
            release.wait(120)

    def update() -> None:
        library = open_library({"collection": "busy"}, settings).library
        library.update(file_members(files, 100_000), [G], progress=hold)

    writer = threading.Thread(target=update)
    writer.start()
    try:
        assert inside.wait(120), "the update never started"

        def question(i: int) -> list[str]:
            opened = open_library({"collection": "busy"}, settings)
            hits = searcher_for(settings, "busy", opened.doc_ids).search(f"Who is the keeper of record {i % 2}?", k=2)
            return [h.chunk.doc_id for h in hits]

        with ThreadPoolExecutor(32) as pool:
            answers = list(pool.map(question, range(32)))
        assert writer.is_alive(), "the update ended before the questions"  # they never waited on it
        assert len(answers) == 32 and all(answers)
    finally:
        release.set()
        writer.join(timeout=120)
    assert servers.agree("busy") == 2


def test_chroma_killed_and_restarted_mid_update_leaves_manifest_and_vectors_agreeing(
    servers: Servers, tmp_path: Path, embedder
) -> None:
    import contextlib

    base, port = tmp_path / "own-chroma", free_port()
    base.mkdir()
    stack = contextlib.ExitStack()
    own = Servers(stack.enter_context(chroma_server(base, port)), servers.postgres)
    try:
        files = write_docs(tmp_path / "docs", 4)
        store = own.store(tmp_path / "a", embedder)
        library = Library(store, "chroma-restart")
        library.update(file_members(files[:1], store.settings.max_words), [G])
        restarted: list[bool] = []

        def restart(event) -> None:  # the first new member's vectors are in: Chroma dies, and comes back
            if event.step == "indexing" and not restarted:
                restarted.append(True)
                os.kill(own.chroma.pid, signal.SIGKILL)
                stack.close()
                own.chroma = stack.enter_context(chroma_server(base, port))

        try:
            library.update(file_members(files, store.settings.max_words), [G], progress=restart)
            print("the update went on through the restart; vectors", own.count(library.manifest().parts[G].collection))
        except Exception as e:  # noqa: BLE001 - a request that met the dead server: nothing was published
            print("the update failed:", type(e).__name__, e)
            assert library.manifest().version == 1, e
        assert restarted
        library.update(file_members(files, store.settings.max_words), [G])  # done (or refilled), and agreeing
        assert own.agree("chroma-restart") >= 2
        assert len(library.manifest().documents) == 4
    finally:
        stack.close()
