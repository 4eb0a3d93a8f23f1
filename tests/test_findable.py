"""Every stored vector findable (issue 49): one vector per distinct chunk text, small subsets searched
exactly, a retriever whose scores are all equal given no say in the fusion, and the library's
findability check. The case that found it: one control file (one chunk) beside an HTML page whose
~1,300 chunks are the same text."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.retrieval import Searcher
from longqa.retrieval.index.library import library_dense
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.manifest import file_members

G = 150
CONTROL = (
    "The tide gauge at Quillmoor harbour was recalibrated by Edda Lund on the fourth of March, "
    "after the winter storms had shifted its mounting by two centimetres."
)
BOILERPLATE = (
    "This page is part of the archived municipal bulletin. Reproduction is permitted for "
    "non-commercial purposes provided the source is acknowledged and the text is not altered. "
    "The municipality accepts no liability for errors or omissions in archived material, which "
    "is provided as it was published and has not been reviewed since its original publication date."
)
COPIES = 2_668  # paragraphs: two to a chunk, ~1,334 chunks of the same text


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("findable")
    (root / "control.txt").write_text(CONTROL + "\n", "utf-8")
    body = "\n".join(f"<p>{BOILERPLATE}</p>" for _ in range(COPIES))
    (root / "bulletin.html").write_text(f"<html><body>{body}</body></html>", "utf-8")
    return root


@pytest.fixture
def library(make_store, folder) -> Library:
    library = Library(make_store(), "bulletin")
    library.update(file_members(sorted(folder.iterdir()), max_words=1_000_000), [G])
    return library


def doc_id_of(library: Library, name: str) -> str:
    return next(e.doc_id for e in library.manifest().documents.values() if e.source.endswith(name))


def test_one_vector_per_distinct_chunk_text(library):
    part = library.manifest().parts[G]
    assert part.n_chunks >= 1_300  # the page's copies are chunks of their own (BM25 and citations keep them)
    stored = library.collection(G, part.collection, create=False).count()
    assert stored == part.n_vectors == 2  # the control's text and the boilerplate's, once each
    bulletin = doc_id_of(library, "bulletin.html")
    assert max(len(library.units(part).keys[h]) for h in library.units(part).hashes([bulletin])) >= 1_300


@pytest.mark.parametrize("exact_max", [library_dense.EXACT_MAX, 0], ids=["exact", "graph"])
@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_the_control_chunk_is_found_first_for_its_own_text(library, monkeypatch, mode, exact_max):
    monkeypatch.setattr(library_dense, "EXACT_MAX", exact_max)
    hits = Searcher(library.store, library=library).search(CONTROL, k=5, granularity=G, mode=mode)
    assert hits[0].chunk.doc_id == doc_id_of(library, "control.txt")
    assert hits[0].dense_score == pytest.approx(1.0, abs=1e-4)
    assert len(hits) == 5  # the page's copies still fill the ranking behind it


@pytest.mark.parametrize("name", ["control.txt", "bulletin.html"])
def test_a_dense_search_restricted_to_one_file_finds_its_chunks(library, name):
    doc_id = doc_id_of(library, name)
    searcher = Searcher(library.store, library=library, doc_ids=[doc_id])
    hits = searcher.search(CONTROL, k=3, granularity=G, mode="dense")
    assert hits and {h.chunk.doc_id for h in hits} == {doc_id}


def test_equal_dense_scores_do_not_tie_the_bm25_winner(library):
    """The page's copies all score the same against a question about them and the control alike: the
    dense list ranks nothing there, so BM25's winner stays first."""
    searcher = Searcher(library.store, library=library)
    hits = searcher.search("Edda Lund tide gauge", k=3, granularity=G, mode="hybrid")
    assert hits[0].chunk.doc_id == doc_id_of(library, "control.txt")


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "graph"])
def test_the_findability_check_passes_and_sees_a_lost_vector(library, exact):
    assert library_dense.unfindable(library, G, exact=exact) == []
    part = library.manifest().parts[G]
    collection = library.collection(G, part.collection, create=False)
    control = doc_id_of(library, "control.txt")
    collection.delete(ids=library.units(part).hashes([control]))
    library._vector_cache = library_dense.VectorCache()  # what this process fetched before is gone too
    assert library_dense.unfindable(library, G, exact=exact) == [(control, 0)]


def test_a_library_of_the_previous_format_is_rebuilt_and_its_collection_retired(library):
    """Format 1 stored a vector per unit: such a library is rebuilt (one vector per text) on its next use,
    keeping its members, and the publish retires its old collection (deleted after the grace period)."""
    old = library.manifest()
    manifest_file = library.dir / "manifest.json"
    manifest_file.write_text(manifest_file.read_text("utf-8").replace('"format": 2', '"format": 1'), "utf-8")
    library.update(None, [G])
    new = library.manifest()
    assert new.version == old.version + 1 and new.doc_ids() == old.doc_ids()
    assert new.parts[G].collection != old.parts[G].collection and new.parts[G].n_vectors == 2
    assert library.catalog.retired(library.name, 0.0) == [old.parts[G].collection]
