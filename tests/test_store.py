"""A document's persisted index parts: cached by content hash + granularity, never served
half-built, every file under LONGQA_HOME, and dense scoring that reads the whole of a long chunk."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval import Searcher
from longqa.retrieval.documents import Chunk
from longqa.retrieval.index import store as store_module
from longqa.retrieval.index.chunk_index import dense_units
from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.read.loaders import document_from_text

from .conftest import RARE_CODE, harbor_text

G = 40  # small chunks keep the builds fast


@pytest.fixture
def harbor_doc():
    return document_from_text(harbor_text(8), source="harbor.md")


def find_chunk(index, needle: str) -> int:
    return next(c.index for c in index.chunks if needle in c.text)


def vector_files(store: IndexStore, doc_id: str) -> list:
    return list((store.doc_dir(doc_id) / f"g{G}").glob("vectors-*.npz"))


def assert_serves_correct_results(store: IndexStore, index, embedder) -> None:
    """The index answers: BM25 finds the rare code, dense search finds the storm paragraph."""
    assert index.vectors is not None
    assert len(index.vectors) == len(index.unit_chunks) == index.n_units
    assert index.n_units == len(dense_units(index.chunks, embedder.max_tokens))
    searcher = Searcher(store, [index.document])
    [best] = searcher.search(RARE_CODE, k=1, granularity=index.granularity, mode="bm25")
    assert best.chunk.index == find_chunk(index, RARE_CODE)
    [best] = searcher.search("Which storm closed the harbor entrance in winter?", k=1, granularity=G, mode="dense")
    assert "storm" in best.chunk.text and best.dense_score > 0.4


# -- where files live --------------------------------------------------------------------------------


def test_files_are_under_longqa_home(isolated_longqa_home, embedder, harbor_doc):
    store = IndexStore(embedder=embedder)  # settings from the environment
    assert store.settings.home == isolated_longqa_home
    index = store.index(harbor_doc, G)
    gdir = isolated_longqa_home / "index" / harbor_doc.doc_id / f"g{G}"
    vectors = f"vectors-{index.build_id}.npz"
    assert sorted(p.name for p in gdir.iterdir()) == [
        "bm25.json",
        "chunks.json",
        "manifest.json",
        "units.json",
        vectors,
    ]
    assert (isolated_longqa_home / "index" / harbor_doc.doc_id / "document.json").exists()
    Searcher(store, [harbor_doc]).search("storm", granularity=G)  # a library of one: Chroma + its files
    assert (isolated_longqa_home / "chroma").is_dir()
    assert len(list((isolated_longqa_home / "libraries").iterdir())) == 1
    manifest = json.loads((gdir / "manifest.json").read_text())
    assert manifest["doc_id"] == harbor_doc.doc_id and manifest["granularity"] == G
    assert manifest["n_chunks"] == len(index.chunks) > 5
    assert manifest["n_units"] == index.n_units
    assert manifest["tokenizer"] == "minilm-wordpiece"
    assert store.document(harbor_doc.doc_id) == harbor_doc
    with pytest.raises(KeyError):
        store.document("0" * 64)


def test_config_default_home_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LONGQA_HOME", str(tmp_path / "h"))
    assert IndexSettings().home == tmp_path / "h"
    monkeypatch.delenv("LONGQA_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert IndexSettings().home == tmp_path / "xdg" / "longqa"
    monkeypatch.setenv("LONGQA_MAX_WORDS", "1234")
    assert Settings().index_settings().max_words == 1234


# -- caching --------------------------------------------------------------------------------------------


def test_second_index_reuses_the_persisted_one(make_store, embedder, harbor_doc):
    first = make_store()
    built = first.index(harbor_doc, G)
    assert first.index(harbor_doc, G) is built  # in memory
    calls = embedder.calls
    second = make_store()  # as a new process would: same home, nothing in memory
    assert second.is_indexed(harbor_doc.doc_id, G)
    reopened = second.index(harbor_doc, G)
    assert embedder.calls == calls, "opening a persisted index must not embed anything"
    assert reopened is not built
    assert [c.model_dump() for c in reopened.chunks] == [c.model_dump() for c in built.chunks]
    assert reopened.tokens == built.tokens
    assert_serves_correct_results(second, reopened, embedder)


def test_key_is_content_hash_and_granularity(make_store, embedder, tmp_path, isolated_longqa_home):
    text = harbor_text(6)
    (tmp_path / "a.md").write_text(text)
    (tmp_path / "copy of a.txt").write_text(text)
    store = make_store()
    doc_a, doc_b = store.load(tmp_path / "a.md"), store.load(tmp_path / "copy of a.txt")
    assert doc_a.doc_id == doc_b.doc_id and doc_a.source != doc_b.source
    store.index(doc_a, G)
    calls = embedder.calls
    index_b = make_store().index(doc_b, G)
    assert embedder.calls == calls, "same content under another name is the same index"
    assert index_b.document.source.endswith("copy of a.txt")
    make_store().index(doc_b, 64)
    assert embedder.calls > calls, "another granularity is another index"
    assert [p.name for p in (isolated_longqa_home / "index").iterdir()] == [doc_a.doc_id]
    assert sorted(p.name for p in (isolated_longqa_home / "index" / doc_a.doc_id).glob("g*") if p.is_dir()) == [
        "g40",
        "g64",
    ]


def test_changed_content_is_a_new_index(make_store, tmp_path):
    path = tmp_path / "a.md"
    path.write_text(harbor_text(3))
    store = make_store()
    first = store.load(path)
    path.write_text(harbor_text(3) + "\nOne more sentence.\n")
    assert store.load(path).doc_id != first.doc_id


# -- interrupted and incomplete builds ------------------------------------------------------------------


@pytest.mark.parametrize(
    "where, error", [("embed", RuntimeError), ("embed", KeyboardInterrupt), ("progress", KeyboardInterrupt)]
)
def test_interrupted_build_is_never_served(make_store, embedder, harbor_doc, monkeypatch, where, error):
    monkeypatch.setattr(store_module, "_EMBED_BATCH", 4)
    batches = []
    real_embed = embedder.embed

    def embed_then_fail(texts, progress=None, pool=False):
        batches.append(len(texts))
        if len(batches) == 2:
            raise error("interrupted after the first batch")
        return real_embed(texts, progress, pool)

    def progress_then_fail(done, total):
        if done:  # the first call announces the total, before any batch
            batches.append(done)
            raise error("interrupted after the first batch")

    store = make_store()
    with monkeypatch.context() as patch:
        if where == "embed":
            patch.setattr(embedder, "embed", embed_then_fail)
        with pytest.raises(error):
            store.index(harbor_doc, G, progress=progress_then_fail if where == "progress" else None)
    assert batches, "the build got past its first batch before failing"
    doc_dir = store.doc_dir(harbor_doc.doc_id)
    assert not list(doc_dir.glob(".g*.tmp-*")), "the temporary build directory is removed"
    assert not vector_files(store, harbor_doc.doc_id), "no vectors are written before all are embedded"
    assert not list((doc_dir / f"g{G}").glob(".vectors.*"))

    calls = embedder.calls
    fresh = make_store()
    built = fresh.build(harbor_doc, G)
    index = built.index
    # the chunks and BM25 part was complete before embedding began; the vectors are embedded anew
    assert not built.chunked and built.embedded == index.n_units
    assert embedder.calls - calls == index.n_units, "the next request re-embeds every vector"
    assert len(vector_files(fresh, harbor_doc.doc_id)) == 1
    assert fresh.is_indexed(harbor_doc.doc_id, G)
    assert_serves_correct_results(fresh, index, embedder)


def _corrupt_vectors(store, doc_id):
    (file,) = vector_files(store, doc_id)
    file.write_bytes(file.read_bytes()[:100])


def _drop_vectors(store, doc_id):
    (file,) = vector_files(store, doc_id)
    with np.load(file) as data:
        vectors, chunks = data["vectors"], data["chunks"]
    with file.open("wb") as f:
        np.savez(f, vectors=vectors[:-2], chunks=chunks[:-2])


def _delete_vectors(store, doc_id):
    (file,) = vector_files(store, doc_id)
    file.unlink()


def _other_tokenizer(store, doc_id):
    manifest = store.doc_dir(doc_id) / f"g{G}" / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "tokenizer": "some-other-tokenizer"}))


@pytest.mark.parametrize("damage", [_corrupt_vectors, _drop_vectors, _delete_vectors, _other_tokenizer])
def test_incomplete_or_stale_index_is_rebuilt(make_store, embedder, harbor_doc, damage):
    store = make_store()
    n_units = store.index(harbor_doc, G).n_units
    damage(store, harbor_doc.doc_id)
    calls = embedder.calls
    fresh = make_store()
    index = fresh.index(harbor_doc, G)
    assert embedder.calls - calls == n_units
    assert_serves_correct_results(fresh, index, embedder)
    calls = embedder.calls
    make_store().index(harbor_doc, G)
    assert embedder.calls == calls, "the rebuilt index is complete and reused"


# -- dense units: no truncation -------------------------------------------------------------------------


def test_short_chunk_is_one_unit(wordpiece):
    chunk = Chunk(doc_id="d", index=3, start=0, end=11, paragraph_ids=[0], n_tokens=2, text="Short text.")
    assert dense_units([chunk], 254) == [(3, 0, "Short text.")]


def test_long_chunk_is_cut_into_units_that_cover_every_word(wordpiece):
    rng = random.Random(7)
    vocabulary = (
        "harbor dredging unbelievably photosynthesis antidisestablishmentarianism quay "
        f"{RARE_CODE} tonnage berth Rotterdam xylophonist ventriloquism 1,234.56"
    ).split()
    for n_words in (150, 300, 700):
        text = " ".join(rng.choice(vocabulary) for _ in range(n_words))
        chunk = Chunk(doc_id="d", index=0, start=0, end=len(text), paragraph_ids=[0], n_tokens=0, text=text)
        n_pieces = wordpiece.count(text)
        assert n_pieces > 254
        units = dense_units([chunk], 254)
        assert [u[:2] for u in units] == [(0, i) for i in range(len(units))]
        assert len(units) >= -(-n_pieces // 254)
        for _, _, unit in units:
            assert 0 < wordpiece.count(unit) <= 254, "the embedder would truncate this unit"
        assert " ".join(u[2] for u in units).split() == text.split(), "no word dropped or cut in two"
        pos = 0
        for _, _, unit in units:  # consecutive pieces of the chunk's text
            pos = text.index(unit, pos) + len(unit)


FILLER = [
    "Knead the dough for ten minutes until it is smooth and elastic.",
    "Let the bread rise in a warm place for about an hour.",
    "Preheat the oven and dust the tray with a little flour.",
    "Brush the loaf with beaten egg before baking for a golden crust.",
    "Cool the bread on a wire rack before slicing it.",
    "Sourdough needs a lively starter that has been fed the day before.",
]


def test_relevant_sentence_at_the_end_of_a_long_chunk_scores_high(make_store, embedder, wordpiece):
    filler = " ".join(FILLER[i % len(FILLER)] for i in range(22))
    text = filler + " The lighthouse keeper's cat is called Biscuit and sleeps by the lamp."
    assert 254 < wordpiece.count(text) <= 400 and wordpiece.count(filler) > 254
    document = document_from_text(text)
    store = make_store()
    index = store.index(document, 400)
    assert len(index.chunks) == 1 and index.n_units == index.max_units == 2
    question = "What is the name of the lighthouse keeper's cat?"
    query = embedder.embed([question])[0]
    [result] = Searcher(store, [document]).search(question, k=5, granularity=400, mode="dense")
    chunk, dense = result.chunk.index, result.dense_score
    truncated = float(embedder.embed([index.chunks[0].text])[0] @ query)  # what a plain embed reads
    assert chunk == 0
    assert dense > 0.45
    assert dense > truncated + 0.3, "the chunk's end was read, not truncated away"
