"""IndexStore against a real Chroma server (`chroma run`) instead of the embedded PersistentClient.

Starts `chroma run` from this interpreter's venv on a free 127.0.0.1 port with its data in a
temporary directory, indexes a generated document through `IndexStore(IndexSettings(chroma_host=...))`,
searches it, checks the collection really lives on the server, and checks that a second store on
the same settings reuses the index without embedding anything again.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.config import IndexSettings
from longqa.retrieval.embedder import get_embedder
from longqa.retrieval.search import Searcher
from longqa.retrieval.store import IndexStore
from longqa.retrieval.tokens import wordpiece_counter

pytestmark = pytest.mark.integration

HOST = "127.0.0.1"
STARTUP_DEADLINE_S = 60.0
STOP_TIMEOUT_S = 10.0
GRANULARITY = 150


@dataclass(frozen=True)
class ChromaServer:
    host: str
    port: int
    pid: int
    log: Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _http_client(host: str, port: int):
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))


def _log_text(log: Path) -> str:
    try:
        return log.read_text("utf-8", errors="replace")[-8000:]
    except OSError as e:
        return f"(no server log: {e})"


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server by its PID: SIGTERM, wait, then SIGKILL if it will not go."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.skip(f"no chroma executable next to {sys.executable}")
    base = tmp_path_factory.mktemp("chroma-server")
    log = base / "server.log"
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            [str(chroma), "run", "--host", HOST, "--port", str(port), "--path", str(base / "data")],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=base,
        )
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        last_error: Exception | None = None
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"chroma server exited with code {proc.returncode} before it was ready; log:\n{_log_text(log)}"
                )
            try:
                _http_client(HOST, port).heartbeat()
                break
            except Exception as e:  # noqa: BLE001 - connection refused etc. until it listens
                last_error = e
            if time.monotonic() > deadline:
                pytest.fail(
                    f"chroma server on {HOST}:{port} not ready after {STARTUP_DEADLINE_S:.0f} s "
                    f"(last error: {last_error!r}); log:\n{_log_text(log)}"
                )
            time.sleep(0.2)
        yield ChromaServer(HOST, port, proc.pid, log)
    finally:
        _stop(proc)


# -- the document ------------------------------------------------------------------------------

TOWNS = [
    "Vellmora",
    "Quillmoor",
    "Ardenfell",
    "Brisket Hollow",
    "Caldrith",
    "Dunmerrow",
    "Eskerby",
    "Farrowgate",
    "Glimmerholt",
    "Harrowmere",
    "Istenvale",
    "Jorvik Reach",
    "Kelderwick",
    "Lunhaven",
    "Marrowby",
    "Nettlecombe",
    "Oakenshaw",
    "Pellinore",
    "Ravensmoor",
    "Saltcombe",
    "Thistlewick",
    "Umberlee",
    "Wyndhollow",
    "Yarrowfield",
]
GRAINS = [
    "amaranth",
    "spelt",
    "millet",
    "sorghum",
    "buckwheat",
    "einkorn",
    "teff",
    "quinoa",
    "rye",
    "barley",
    "emmer",
    "fonio",
    "oats",
    "kamut",
    "triticale",
    "wild rice",
    "freekeh",
    "durum",
    "canary seed",
    "job's tears",
    "kaniwa",
    "chia",
    "farro",
    "maize",
]
KEEPERS = [
    "Odile Marchetti",
    "Bram Okonkwo",
    "Ines Halvorsen",
    "Tobiah Crane",
    "Magda Ferreira",
    "Leopold Achterberg",
    "Sunniva Rask",
    "Ezra Whitlock",
    "Perpetua Nkemelu",
    "Caspar Lindqvist",
    "Rosalind Obi",
    "Teodor Varga",
    "Wilhelmina Stroud",
    "Anselm Kowalczyk",
    "Delphine Auclair",
    "Hamish Tennant",
    "Yusra Haddad",
    "Ottoline Breck",
    "Florian Mbeki",
    "Greta Solberg",
    "Ignatius Pell",
    "Margery Quist",
    "Nikolai Duval",
    "Philippa Ruane",
]
FILLER = [
    "The council minutes from that season are otherwise unremarkable and mostly concern road repairs.",
    "Visitors describe the market square as quiet on weekdays and busy on the first Saturday of each month.",
    "A short history of the parish church was printed by the local society and is kept in the reading room.",
    "Most households kept a few hens and a vegetable plot behind the house.",
    "The post coach called twice a week until the railway branch line opened.",
    "Several letters in the archive complain about the price of lamp oil and the state of the bridge.",
    "Children attended a single schoolroom that also served as the meeting hall on Sunday evenings.",
    "The surrounding fields were divided by dry stone walls that are still visible from the ridge path.",
    "Weather records kept by the schoolmaster note frequent fog in the early autumn.",
    "A travelling fair came through each summer with a carousel and a puppet theatre.",
]


def _section(rng: random.Random, i: int) -> str:
    town, grain, keeper = TOWNS[i], GRAINS[i], KEEPERS[i]
    year, days = 1801 + 7 * i, 11 + 3 * i
    fact = (
        f"During the great winter flood of {year}, the water mill at {town} ground only {grain}, "
        f"and the miller {keeper} kept it turning for {days} days without rest."
    )
    filler = rng.sample(FILLER, 8)
    body = " ".join([fact, *filler])
    return f"## {town}\n\n{body}"


def fact(town: str) -> str:
    """The words of the sentence that only `town`'s section holds."""
    i = TOWNS.index(town)
    return f"{town} ground only {GRAINS[i]}, and the miller {KEEPERS[i]}"


def make_document_text() -> str:
    rng = random.Random(20240611)
    sections = [_section(rng, i) for i in range(len(TOWNS))]
    return "# A gazetteer of river mills\n\n" + "\n\n".join(sections) + "\n"


# -- tests -------------------------------------------------------------------------------------


def test_settings_from_env_picks_up_chroma_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    monkeypatch.delenv("CHROMA_PORT", raising=False)
    plain = Settings(home=tmp_path).index_settings()
    assert plain.chroma_host is None and plain.chroma_port == 8000

    monkeypatch.setenv("CHROMA_HOST", "chroma.example.internal")
    monkeypatch.setenv("CHROMA_PORT", "18123")
    settings = Settings(home=tmp_path).index_settings()
    assert settings.chroma_host == "chroma.example.internal"
    assert settings.chroma_port == 18123
    assert settings.home == tmp_path
    # an explicit override still wins over the environment
    assert Settings(chroma_port=9999).index_settings().chroma_port == 9999


def test_store_from_env_talks_to_the_server(
    chroma_server: ChromaServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CHROMA_HOST", chroma_server.host)
    monkeypatch.setenv("CHROMA_PORT", str(chroma_server.port))
    store = IndexStore(Settings(home=tmp_path / "home").index_settings())
    client_settings = store.client.get_settings()
    assert client_settings.chroma_api_impl.endswith("FastAPI"), client_settings.chroma_api_impl
    assert int(client_settings.chroma_server_http_port) == chroma_server.port
    assert store.client.heartbeat() > 0
    assert not (tmp_path / "home" / "chroma").exists()  # no embedded store was created


def test_index_search_and_reuse_on_server(chroma_server: ChromaServer, tmp_path: Path) -> None:
    settings = IndexSettings(home=tmp_path / "home", chroma_host=chroma_server.host, chroma_port=chroma_server.port)
    embedder = get_embedder(batch_size=settings.embed_batch_size)
    counter = wordpiece_counter()
    text = make_document_text()
    assert 2000 <= len(text.split()) <= 6000
    doc_file = tmp_path / "gazetteer.md"
    doc_file.write_text(text, "utf-8")

    store = IndexStore(settings, embedder=embedder, counter=counter)
    doc = store.load(doc_file)
    before = embedder.calls
    results = Searcher(store, [doc]).search(
        "Which grain did the Quillmoor water mill grind during the winter flood, and who was the miller?",
        k=5,
        granularity=GRANULARITY,
        mode="hybrid",
    )
    built_calls = embedder.calls - before
    assert built_calls > 1, "the first search should have embedded the document's chunks"
    assert results, "hybrid search returned nothing"
    top = results[0]
    assert fact("Quillmoor") in top.chunk.text, [r.chunk.text[-160:] for r in results]
    assert top.dense_score is not None and top.bm25_score is not None
    assert top.chunk.text == doc.text[top.chunk.start : top.chunk.end]
    assert store.is_indexed(doc.doc_id, GRANULARITY)
    assert not (settings.home / "chroma").exists(), "an embedded Chroma store was created"

    # the vectors live on the server, in the library's one collection
    name = Searcher(store, [doc]).library.collection_name(GRANULARITY)
    observer = _http_client(chroma_server.host, chroma_server.port)
    names = [c.name for c in observer.list_collections()]
    assert name in names, names
    remote = observer.get_collection(name)
    manifest_units = store.index(doc, GRANULARITY).n_units
    assert remote.count() == manifest_units > 0
    assert {m["doc_id"] for m in remote.get(include=["metadatas"])["metadatas"]} == {doc.doc_id}

    # a second store on the same settings opens the index from disk + server: nothing re-embedded
    calls = embedder.calls
    store2 = IndexStore(settings, embedder=embedder, counter=counter)
    assert store2.client is not store.client
    index2 = store2.index(store2.load(doc_file), GRANULARITY)
    assert embedder.calls == calls, "the second store re-embedded the document"
    assert index2.n_units == manifest_units
    assert len(index2.chunks) == len(store.index(doc, GRANULARITY).chunks)

    results2 = Searcher(store2, [doc]).search(
        "What did the mill at Caldrith grind while the river flooded?", k=3, granularity=GRANULARITY, mode="hybrid"
    )
    # at most the query itself (search.py caches query vectors process-wide)
    assert embedder.calls - calls <= 1, "searching through the second store re-embedded chunks"
    assert fact("Caldrith") in results2[0].chunk.text, [r.chunk.text[-160:] for r in results2]
    assert [c.name for c in observer.list_collections()].count(name) == 1

    # a collection dropped on the server (NotFoundError over HTTP, or a new empty server) or missing
    # vectors is detected by a fresh store, which adds them again (from the vectors cached by content:
    # nothing re-embedded) instead of serving BM25 alone
    for damage in ("delete", "drop"):
        if damage == "delete":
            observer.delete_collection(name)
        else:
            observer.get_collection(name).delete(ids=observer.get_collection(name).get(limit=3)["ids"])
        calls = embedder.calls
        store3 = IndexStore(settings, embedder=embedder, counter=counter)
        results3 = Searcher(store3, [doc]).search(
            "What did the mill at Caldrith grind while the river flooded?", k=3, granularity=GRANULARITY, mode="dense"
        )
        assert embedder.calls - calls <= 1, f"{damage}: the vectors were embedded again, not refilled"
        assert fact("Caldrith") in results3[0].chunk.text, damage
        assert observer.get_collection(name).count() == manifest_units, damage
