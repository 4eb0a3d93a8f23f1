"""What updates collect, and when (retrieval/index/library/library_gc.py), on one host with the files catalog: a
removed document's vectors outlive the publish by the grace period (a reader holding the previous
manifest still finds them) and go with a later index run after it, unless the document is a member
again; a question never collects, even when its input changed and it published a version.
tests/test_catalog_versions.py does the same with PostgreSQL and a Chroma server."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.index.library import library_gc
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import Manifest
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.search.search import query_vector
from longqa.services.inputs import index_library, open_library

G = 150
KEEPER = "The lighthouse keeper on Tarn Head is Maria Olsen, who has kept the light since 2011."
BAKERY = "The bakery oven was repaired in May by Karl Brandt, the master baker of Quillmoor."
FERRY = "The ferry Alba sails to the Skerrow islands at nine every morning from pier four."


@pytest.fixture
def settings(isolated_longqa_home: Path) -> Settings:
    return Settings(home=isolated_longqa_home)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "lighthouse.md").write_text(KEEPER, "utf-8")
    (root / "bakery.txt").write_text(BAKERY, "utf-8")
    return root


def found_by(library: Library, manifest: Manifest, doc_id: str) -> bool:
    """A reader holding `manifest` finds `doc_id` by its dense search (as a question's would)."""
    vector = query_vector(library.store.embedder, "Who keeps the light on Tarn Head?")
    top = library.dense_top(G, manifest.parts[G], vector, 5, set(manifest.doc_ids()), subset=True)
    return any(d == doc_id for d, _ in top)


def vectors_of(library: Library, doc_id: str) -> int:
    return len(library.collection(G).get(where={"doc_id": doc_id})["ids"])


def test_removed_vectors_outlive_the_publish_until_an_index_run_after_the_grace(docs, settings, monkeypatch):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    library, held_by_reader = first.library, first.library.manifest()
    (lighthouse,) = [d for d, s in first.sources.items() if s.endswith("lighthouse.md")]
    (docs / "lighthouse.md").unlink()
    second = index_library({"documents": [str(docs)]}, settings, [G])
    assert lighthouse not in second.doc_ids and second.update.published
    # a reader that read the previous manifest a moment ago still finds the removed document
    assert found_by(library, held_by_reader, lighthouse)
    assert library.catalog.removed(library.name, 0.0) == [lighthouse]
    index_library({"documents": [str(docs)]}, settings, [G])  # an index run within the grace keeps them
    assert found_by(library, held_by_reader, lighthouse)
    monkeypatch.setattr(library_gc, "RETIRE_AFTER_S", 0.0)  # the grace is over
    (docs / "ferry.txt").write_text(FERRY, "utf-8")
    asked = open_library({"documents": [str(docs)]}, settings)  # a question that publishes collects nothing
    assert asked.update.published and vectors_of(library, lighthouse) > 0
    index_library({"documents": [str(docs)]}, settings, [G])  # the next index run does
    assert vectors_of(library, lighthouse) == 0 and library.catalog.removed(library.name, 0.0) == []
    assert not found_by(library, library.manifest(), lighthouse)


def test_a_document_added_back_within_the_grace_keeps_its_vectors(docs, settings, monkeypatch):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    (lighthouse,) = [d for d, s in first.sources.items() if s.endswith("lighthouse.md")]
    (docs / "lighthouse.md").rename(docs.parent / "aside.md")
    index_library({"documents": [str(docs)]}, settings, [G])
    (docs.parent / "aside.md").rename(docs / "lighthouse.md")
    index_library({"documents": [str(docs)]}, settings, [G])  # a member again
    monkeypatch.setattr(library_gc, "RETIRE_AFTER_S", 0.0)
    third = index_library({"documents": [str(docs)]}, settings, [G])
    assert lighthouse in third.doc_ids and vectors_of(third.library, lighthouse) > 0
    assert found_by(third.library, third.library.manifest(), lighthouse)
    assert third.library.catalog.removed(third.library.name, 0.0) == []


def test_a_question_never_collects_even_when_its_input_changed(docs, settings, monkeypatch):
    index_library({"documents": [str(docs)]}, settings, [G])

    def no_collection(*args, **kwargs):
        raise AssertionError("a question collected garbage")

    monkeypatch.setattr("longqa.services.inputs.forget_unused", no_collection)
    monkeypatch.setattr("longqa.retrieval.index.library.library.collect_expired", no_collection)
    monkeypatch.setattr(IndexStore, "forget_inline", no_collection)
    (docs / "ferry.txt").write_text(FERRY, "utf-8")
    changed = open_library({"documents": [str(docs)]}, settings)  # changed files: a new version written
    assert changed.update.published and len(changed.doc_ids) == 3
    inline = open_library({"texts": [FERRY + " It returns at six."]}, settings)  # new inline input
    assert inline.update.published
    with pytest.raises(AssertionError, match="collected garbage"):  # the index path does collect
        index_library({"documents": [str(docs)]}, settings, [G])
