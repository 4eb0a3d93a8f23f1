"""A library knows its embedder (issue 49): name, dimension and fingerprint in the manifest; on one
host a changed embedder re-embeds into a new version; on the shared server (PostgreSQL catalog and
Chroma server) a replica with another embedder refuses, naming both and `longqa reembed`, which
re-embeds in one command, resumes after a failure, and leaves questions on the old version until it
publishes. Endpoints are the embeddings stub (its vectors are not a model's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from longqa.cli.commands import main
from longqa.retrieval import Searcher
from longqa.retrieval.index.config import EndpointSpec, IndexSettings
from longqa.retrieval.index.embed.embedder_errors import EmbedderMismatch, EmbedderUnavailable
from longqa.retrieval.index.embed.endpoint_embedder import EndpointEmbedder
from longqa.retrieval.index.library import batch_embed
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import document_members
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.read.loaders import document_from_text

from .embeddings_stub import EmbeddingsStub
from .servers import chroma_server, postgres_server

G = 150
TEXTS = [
    "The ferry Alba sails to the Skerrow islands at nine every morning from pier four.",
    "The lighthouse keeper on Tarn Head is Maria Olsen, who has kept the light since 2011.",
    "The bakery oven was repaired in May by Karl Brandt, the master baker of Quillmoor.",
    "The harbour crane lifts forty tonnes and was built in Rotterdam in 1987.",
]
QUESTION = "who keeps the light on Tarn Head"


def members():
    return document_members([document_from_text(t, f"t{i}.txt") for i, t in enumerate(TEXTS)])


def endpoint(stub: EmbeddingsStub, **spec) -> EndpointSpec:
    return EndpointSpec(urls=(stub.base_url,), model="stub-embed", retries=0, **spec)


@pytest.fixture
def stub() -> Iterator[EmbeddingsStub]:
    with EmbeddingsStub() as server:
        yield server


def test_the_manifest_records_the_embedder(make_store, stub):
    bundled = Library(make_store(), "recorded")
    bundled.update(members(), [G])
    record = bundled.manifest().embedder
    assert record is not None and (record.name, record.dimension) == (bundled.store.embedder.name, 384)
    assert len(record.fingerprint) == 24
    store = IndexStore(IndexSettings(home=bundled.store.settings.home, embeddings=endpoint(stub)))
    through = Library(store, "through-endpoint")
    through.update(members(), [G])
    assert (through.manifest().embedder.name, through.manifest().embedder.dimension) == ("openai:stub-embed", 64)


def test_on_one_host_a_changed_embedder_re_embeds_into_a_new_version(make_store, stub):
    first = Library(make_store(), "local")
    first.update(members(), [G])
    old = first.manifest()
    store = IndexStore(IndexSettings(home=first.store.settings.home, embeddings=endpoint(stub)))
    hits = Searcher(store, library=Library(store, "local")).search(QUESTION, k=1, granularity=G, mode="dense")
    assert "Maria Olsen" in hits[0].chunk.text
    new = Library(store, "local").manifest()
    assert new.version == old.version + 1 and new.embedder.name == "openai:stub-embed"
    assert new.parts[G].collection != old.parts[G].collection


def test_the_same_name_answering_other_vectors_is_refused(isolated_longqa_home, stub):
    settings = IndexSettings(home=isolated_longqa_home, embeddings=endpoint(stub))
    Library(IndexStore(settings, embedder=EndpointEmbedder(endpoint(stub))), "salted").update(members(), [G])
    stub.model_salt = "another model behind the same name"
    store = IndexStore(settings, embedder=EndpointEmbedder(endpoint(stub)))
    with pytest.raises(EmbedderMismatch, match="same name answers other vectors.*longqa reembed salted"):
        Searcher(store, library=Library(store, "salted")).search(QUESTION, granularity=G, mode="dense")


def test_longqa_reembed_on_one_host(isolated_longqa_home, make_store, stub, monkeypatch, capsys):
    Library(make_store(), "cli").update(members(), [G])
    monkeypatch.setenv("LONGQA_EMBEDDINGS_URL", stub.base_url)
    monkeypatch.setenv("LONGQA_EMBEDDINGS_MODEL", "stub-embed")
    assert main(["--home", str(isolated_longqa_home), "reembed", "cli", "-q"]) == 0
    out = capsys.readouterr().out
    assert "(384-d) -> openai:stub-embed (64-d); version 2" in out
    assert main(["--home", str(isolated_longqa_home), "reembed", "nothing-here", "-q"]) == 2
    assert "no library named 'nothing-here'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[tuple[str, int, str]]:
    with postgres_server() as pg, chroma_server(tmp_path_factory.mktemp("chroma")) as chroma:
        yield chroma.host, chroma.port, pg.uri


def replica(shared, home: Path, spec: EndpointSpec | None = None, embedder=None) -> IndexStore:
    host, port, uri = shared
    settings = IndexSettings(home=home, chroma_host=host, chroma_port=port, postgres_uri=uri, embeddings=spec)
    return IndexStore(settings, embedder=embedder)


def test_a_replica_with_another_embedder_refuses_and_reembed_publishes_once(shared, tmp_path, embedder, stub):
    old = replica(shared, tmp_path / "a", embedder=embedder)
    Library(old, "shared").update(members(), [G])
    new = replica(shared, tmp_path / "b", endpoint(stub))
    with pytest.raises(EmbedderMismatch) as refused:
        Searcher(new, library=Library(new, "shared")).search(QUESTION, granularity=G, mode="dense")
    message = str(refused.value)
    assert f"{embedder.name} (384-d)" in message and "openai:stub-embed (64-d)" in message
    assert "longqa reembed shared" in message
    with pytest.raises(EmbedderMismatch):  # an index run refuses too: it never rebuilds a shared library unasked
        Library(new, "shared").update(members(), [G])
    with pytest.raises(EmbedderMismatch):  # nor does a BM25-only one (it would rebuild the vectors with its embedder)
        Library(new, "shared").update(members(), [G], dense=False)
    assert Library(old, "shared").manifest().version == 1

    answered = []

    def meanwhile(event) -> None:  # the old replica keeps answering from version 1 while the new one embeds
        if event.step == "embedding" and not answered:
            answered.append(Searcher(old, library=Library(old, "shared")).search(QUESTION, k=1, granularity=G))

    update = Library(new, "shared").update(None, reembed=True, progress=meanwhile)
    assert update.version == 2 and "Maria Olsen" in answered[0][0].chunk.text
    hits = Searcher(new, library=Library(new, "shared")).search(QUESTION, k=1, granularity=G, mode="dense")
    assert "Maria Olsen" in hits[0].chunk.text
    with pytest.raises(EmbedderMismatch, match="openai:stub-embed"):  # the old replica, after the publish
        Searcher(old, library=Library(old, "shared")).search(QUESTION, granularity=G, mode="dense")


def test_a_reembed_that_failed_midway_resumes(shared, tmp_path, embedder, stub, monkeypatch):
    monkeypatch.setattr(batch_embed, "SLICE", 1)  # a slice per document: each saved as it is embedded
    Library(replica(shared, tmp_path / "a", embedder=embedder), "resumed").update(members(), [G])
    spec = endpoint(stub, batch=1, concurrency=1)
    store = replica(shared, tmp_path / "b", spec, embedder=EndpointEmbedder(spec))
    stub.fail_after = 2  # two documents' units (one request each), then every request fails
    with pytest.raises(EmbedderUnavailable):
        Library(store, "resumed").update(None, reembed=True)
    assert Library(store, "resumed").manifest().version == 1  # nothing published
    stub.fail_after, before = None, len(stub.requests)
    Library(store, "resumed").update(None, reembed=True)
    probes = 3  # the fingerprint's texts, embedded before the publish (one request each)
    assert len(stub.requests) - before == len(TEXTS) - 2 + probes  # only what was left
    assert Library(store, "resumed").manifest().embedder.name == "openai:stub-embed"
