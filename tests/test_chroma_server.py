"""IndexStore against a real Chroma server (`chroma run`) instead of the embedded PersistentClient.

Starts `chroma run` from this interpreter's venv on a free 127.0.0.1 port with its data in a
temporary directory, indexes a generated document through `IndexStore(IndexSettings(chroma_host=...))`,
searches it, checks the collection really lives on the server, and checks that a second store on
the same settings reuses the index without embedding anything again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.embed.embedder import get_embedder
from longqa.retrieval.index.library import library_dense
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.search.search import Searcher
from longqa.retrieval.tokens import wordpiece_counter
from tests.servers import ChromaServer, chroma_client
from tests.servers import chroma_server as start_chroma

pytestmark = pytest.mark.integration

GRANULARITY = 150


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    with start_chroma(tmp_path_factory.mktemp("chroma-server")) as server:
        yield server


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
    observer = chroma_client(chroma_server.host, chroma_server.port)
    names = [c.name for c in observer.list_collections()]
    assert name in names, names
    remote = observer.get_collection(name)
    manifest_units = store.index(doc, GRANULARITY).n_units
    distinct_texts = len({h for _, h in store.unit_hashes(doc.doc_id, GRANULARITY)})  # one vector per text
    assert remote.count() == distinct_texts > 0 and distinct_texts <= manifest_units
    assert {m["doc_id"] for m in remote.get(include=["metadatas"])["metadatas"]} == {doc.doc_id}
    assert library_dense.unfindable(Searcher(store, [doc]).library, GRANULARITY) == []  # every vector findable

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
        assert observer.get_collection(name).count() == distinct_texts, damage


# -- two replicas' stores on one server: the catalog, not a host's disk, says what a library holds --


def _replica_store(chroma_server: ChromaServer, home: Path, embedder) -> IndexStore:
    settings = IndexSettings(home=home, chroma_host=chroma_server.host, chroma_port=chroma_server.port)
    return IndexStore(settings, embedder=embedder, counter=wordpiece_counter())


def test_a_library_updated_through_one_replica_is_searched_complete_by_another(
    chroma_server: ChromaServer, tmp_path: Path
) -> None:
    from longqa.retrieval.index.library.library import SHARED_RECHECK_S, Library
    from longqa.retrieval.index.library.manifest import file_members

    embedder = get_embedder()
    a = _replica_store(chroma_server, tmp_path / "replica-a", embedder)
    b = _replica_store(chroma_server, tmp_path / "replica-b", embedder)
    files = []
    for i, town in enumerate(["Vellmora", "Quillmoor", "Ardenfell"]):
        f = tmp_path / "docs" / f"{town}.md"
        f.parent.mkdir(exist_ok=True)
        j = TOWNS.index(town)
        f.write_text(f"# {town}\n\n{_section(random.Random(i), j)}\n\n" + " ".join(FILLER) + "\n", "utf-8")
        files.append(f)
    lib_a, lib_b = Library(a, "mills"), Library(b, "mills")
    assert not lib_b.exists()
    lib_a.update(file_members(files[:2], a.settings.max_words), [GRANULARITY])
    question = "Which grain did the mill at Ardenfell grind in the flood, and who was the miller?"

    # B has never seen this library: its manifest, documents and chunkings come from the server
    assert lib_b.exists() and lib_b.manifest().version == 1
    hits = Searcher(b, library=lib_b).search(question, k=2, granularity=GRANULARITY)
    assert {h.chunk.doc_id for h in hits} <= set(lib_a.manifest().doc_ids())
    assert not (tmp_path / "replica-b" / "libraries" / "mills" / "manifest.json").exists()
    assert not (tmp_path / "replica-a" / "libraries" / "mills" / "manifest.json").exists()

    # A adds a document: B searches it, complete, after at most SHARED_RECHECK_S, without a restart
    calls, units = embedder.calls, lib_a.manifest().parts[GRANULARITY].n_units
    lib_a.update(file_members(files, a.settings.max_words), [GRANULARITY])
    added = lib_a.manifest().parts[GRANULARITY].n_units - units
    assert embedder.calls - calls == added > 0, "A embeds only the new document"
    time.sleep(SHARED_RECHECK_S + 0.1)
    searcher_b = Searcher(b, library=lib_b)
    hits = searcher_b.search(question, k=2, granularity=GRANULARITY)
    assert fact("Ardenfell") in hits[0].chunk.text, [h.chunk.text[:120] for h in hits]
    assert lib_b.manifest().version == 2 and len(searcher_b.documents) == 3
    # both retrievers: B built the version's BM25 itself, from the chunkings on the server
    assert hits[0].bm25_score is not None and hits[0].dense_score is not None
    assert hits[0].source == lib_a.manifest().sources()[hits[0].chunk.doc_id]

    # A removes one: B no longer finds it, though its text is still in B's cache
    lib_a.update(file_members(files[1:], a.settings.max_words), [GRANULARITY])
    time.sleep(SHARED_RECHECK_S + 0.1)
    gone = lib_a.manifest().doc_ids()
    hits = Searcher(b, library=lib_b).search("Vellmora mill flood miller grain", k=5, granularity=GRANULARITY)
    assert hits and {h.chunk.doc_id for h in hits} <= set(gone)


def test_updates_from_two_replicas_queue_on_the_lease_and_a_dead_holders_lease_expires(
    chroma_server: ChromaServer, tmp_path: Path
) -> None:
    import threading

    from longqa.retrieval.index.library.catalog_chroma import SharedCatalog

    embedder = get_embedder()
    a = _replica_store(chroma_server, tmp_path / "a", embedder).catalog
    b = _replica_store(chroma_server, tmp_path / "b", embedder).catalog
    assert isinstance(a, SharedCatalog) and isinstance(b, SharedCatalog) and a.owner != b.owner
    order: list[str] = []

    def update_from_b() -> None:
        with b.lock("queue"):
            order.append("b")

    with a.lock("queue"):
        waiter = threading.Thread(target=update_from_b)
        waiter.start()
        time.sleep(1.0)
        assert waiter.is_alive() and order == [], "B took the lock A holds"
        order.append("a-done")
    waiter.join(timeout=10)
    assert order == ["a-done", "b"]
    assert not a.records.get(ids=["lock:queue"])["ids"], "the lease was not given back"

    # a replica killed while it held the lease: nobody renews it, so it expires and is taken over
    dead = {"kind": "lock", "library": "queue", "owner": "dead-replica", "expires": time.time() + 2}
    a.records.add(ids=["lock:queue"], embeddings=[[1.0]], metadatas=[dead])
    t0 = time.monotonic()
    with a.lock("queue"):
        assert a.records.get(ids=["lock:queue"], include=["metadatas"])["metadatas"][0]["owner"] == a.owner
        waited = time.monotonic() - t0
    assert 1.5 < waited < 6, waited


def test_inline_texts_leave_the_server_when_a_replica_forgets_them_and_come_back_when_sent_again(
    chroma_server: ChromaServer, tmp_path: Path
) -> None:
    from longqa.retrieval import document_from_text

    embedder = get_embedder()
    a = _replica_store(chroma_server, tmp_path / "a", embedder)
    b = _replica_store(chroma_server, tmp_path / "b", embedder)
    text = document_from_text("The lighthouse keeper of Saltcombe was Mirela Dask. " * 20, source="text-1")
    a.remember_inline(text)
    b.remember_inline(text)  # B has it too, and knows the server holds it
    assert a.catalog.has_documents([text.doc_id]) == {text.doc_id}
    assert a.forget_inline(0.0) == 1
    assert a.catalog.has_documents([text.doc_id]) == set(), "the text stayed on the server"
    b.remember_inline(text)  # sent again, through B: B looks again rather than trusting what it knew
    fresh = _replica_store(chroma_server, tmp_path / "c", embedder)
    assert fresh.document(text.doc_id).text == text.text
