"""Embedding through an OpenAI-compatible /v1/embeddings endpoint (issue 49), against the embeddings
stub over real HTTP: batching, bounded requests in flight, retries on 429 and 5xx, timeouts, the
vectors' dimension checked, a fleet, the deployment's settings, and a library built and searched."""

from __future__ import annotations

import numpy as np
import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval import Searcher
from longqa.retrieval.index.config import EndpointSpec, IndexSettings
from longqa.retrieval.index.embed.embedder_errors import EmbedderUnavailable
from longqa.retrieval.index.embed.endpoint_embedder import EndpointEmbedder
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import document_members
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.read.loaders import document_from_text

from .embeddings_stub import EmbeddingsStub, stub_vector

TEXTS = [f"note {i} about the harbour crane number {i % 7}" for i in range(100)]


def embedder(*urls: str, **spec) -> EndpointEmbedder:
    return EndpointEmbedder(EndpointSpec(urls=urls, model="stub-embed", **spec))


def test_vectors_come_back_in_order_in_batches_with_a_bounded_number_in_flight():
    with EmbeddingsStub(latency_s=0.05) as stub:
        vectors = embedder(stub.base_url, batch=8, concurrency=2).embed(TEXTS)
    assert vectors.shape == (100, 64)
    assert np.allclose(vectors[37], stub_vector(TEXTS[37], 64), atol=1e-5)
    assert max(stub.requests) <= 8 and sum(stub.requests) == 100
    assert stub.in_flight_max == 2  # 13 batches, two at a time


def test_429_and_5xx_answers_are_retried_with_backoff():
    with EmbeddingsStub() as stub:
        stub.fail_next = [429, 500, 503]
        vectors = embedder(stub.base_url, batch=50, concurrency=1).embed(TEXTS)
    assert vectors.shape == (100, 64)
    assert stub.statuses[:3] == [429, 500, 503] and stub.statuses[3:] == [200, 200]


def test_an_endpoint_that_keeps_failing_is_named_in_the_error():
    with EmbeddingsStub() as stub:
        stub.fail_next = [500] * 10
        with pytest.raises(EmbedderUnavailable, match=r"127\.0\.0\.1.*stub-embed.*HTTP 500"):
            embedder(stub.base_url, retries=2).embed(["one text"])
    assert stub.statuses == [500, 500, 500]  # the first try and two retries


def test_a_request_past_its_timeout_fails_with_the_endpoint_named():
    with EmbeddingsStub(latency_s=1.0) as stub:
        with pytest.raises(EmbedderUnavailable, match="APITimeoutError"):
            embedder(stub.base_url, timeout_s=0.2, retries=0).embed(["slow"])


def test_vectors_of_another_dimension_are_refused():
    with EmbeddingsStub() as stub:
        stub.dimension_after = (2, 32)
        model = embedder(stub.base_url, batch=10, concurrency=1)
        model.embed(TEXTS[:10])
        with pytest.raises(EmbedderUnavailable, match="32-dimensional.*64-dimensional"):
            model.embed(TEXTS[10:20])


def test_a_fleet_goes_on_when_one_endpoint_fails():
    with EmbeddingsStub() as good, EmbeddingsStub() as bad:
        bad.fail_next = [500] * 1000
        vectors = embedder(bad.base_url, good.base_url, batch=10, concurrency=2, retries=0).embed(TEXTS)
    assert vectors.shape == (100, 64) and sum(good.requests) == 100


def test_the_deployment_names_the_endpoint():
    settings = Settings(embeddings_url="http://a:1/v1/, http://b:2/v1", embeddings_model="nomic-embed-text")
    spec = settings.index_settings().embeddings
    assert (
        spec is not None and spec.urls == ("http://a:1/v1", "http://b:2/v1") and spec.name == "openai:nomic-embed-text"
    )
    assert Settings().index_settings().embeddings is None  # the bundled model by default
    with pytest.raises(ValueError, match="LONGQA_EMBEDDINGS_MODEL"):
        Settings(embeddings_url="http://a:1/v1").index_settings()


def test_the_environment_names_the_endpoint(monkeypatch):
    monkeypatch.setenv("LONGQA_EMBEDDINGS_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LONGQA_EMBEDDINGS_MODEL", "bge-small")
    monkeypatch.setenv("LONGQA_EMBEDDINGS_CONCURRENCY", "3")
    spec = Settings().index_settings().embeddings
    assert spec is not None and spec.model == "bge-small" and spec.concurrency == 3


def test_a_library_is_built_and_searched_through_the_endpoint(isolated_longqa_home):
    texts = [
        "The ferry Alba sails to the Skerrow islands at nine every morning from pier four.",
        "The lighthouse keeper on Tarn Head is Maria Olsen, who has kept the light since 2011.",
    ]
    with EmbeddingsStub() as stub:
        spec = EndpointSpec(urls=(stub.base_url,), model="stub-embed")
        store = IndexStore(IndexSettings(home=isolated_longqa_home, embeddings=spec))
        library = Library(store, "through-endpoint")
        library.update(document_members([document_from_text(t, f"t{i}") for i, t in enumerate(texts)]), [150])
        part = library.manifest().parts[150]
        assert part.signature["embedder"] == "openai:stub-embed" and part.dense
        hits = Searcher(store, library=library).search("who keeps the light on Tarn Head", k=1, mode="dense")
    assert "Maria Olsen" in hits[0].chunk.text
    assert sum(stub.requests) >= 3  # the two documents' units and the question
