"""Embedding a library's new members together (retrieval/index/library/batch_embed.py): each document gets the
vectors it gets alone, and a library's search is unchanged."""

from __future__ import annotations

import numpy as np

from longqa.retrieval.index.library import batch_embed
from longqa.retrieval.index.library.batch_embed import embed_together
from longqa.retrieval.read.loaders import document_from_text

from .conftest import HARBOR_TOPICS, harbor_text


def _documents():
    texts = [harbor_text(paragraphs=n, with_table=n % 2 == 0, with_code=n % 3 == 0) for n in (2, 5, 9, 14)]
    texts.append("\n\n".join(body for _, body in HARBOR_TOPICS) * 3)  # long paragraphs: chunks cut into units
    return [document_from_text(t, source=f"d{i}.md") for i, t in enumerate(texts)]


def test_each_document_gets_the_vectors_it_gets_alone(make_store, tmp_path):
    documents = _documents()
    together, alone = make_store(tmp_path / "together"), make_store(tmp_path / "alone")
    units = []
    reported = []
    prepared = embed_together(together, documents, 40, lambda done, total: reported.append((done, total)))
    for document in documents:
        mine = together.build(document, 40)
        theirs = alone.build(document, 40)
        assert mine.embedded == 0 and not mine.chunked  # embed_together left it whole
        assert np.array_equal(mine.index.unit_chunks, theirs.index.unit_chunks)
        assert np.abs(mine.index.vectors - theirs.index.vectors).max() < 1e-5
        units.append(theirs.index.n_units)
    assert prepared.embedded == sum(units) and prepared.chunked == len(documents)
    assert reported[0] == (0, sum(units)) and reported[-1] == (sum(units), sum(units))
    assert max(units) > 1  # some chunk was cut into units
    reopened = make_store(tmp_path / "together")  # the vectors were written like the store writes them
    assert embed_together(reopened, documents, 40).embedded == 0


def test_a_library_searches_the_same_either_way(make_store, tmp_path, monkeypatch):
    from longqa.contracts.settings import Settings
    from longqa.services.inputs import index_library
    from longqa.services.stores import searcher_for

    folder = tmp_path / "docs"
    folder.mkdir()
    for document in _documents():
        (folder / document.source).write_text(document.text, "utf-8")
    found = {}
    for across in (True, False):
        monkeypatch.setattr(batch_embed, "ACROSS_DOCUMENTS", across)
        settings = Settings(home=tmp_path / f"home-{across}")
        opened = index_library({"documents": [str(folder)]}, settings, [150])
        assert opened.update.embedded > 0
        searcher = searcher_for(settings, opened.library.name, opened.doc_ids)
        found[across] = [
            [(opened.sources[r.chunk.doc_id], r.chunk.index, round(r.score, 4)) for r in searcher.search(q, k=5)]
            for q in ("How deep is the channel?", "Who replanted the seagrass?", "record cargo volumes")
        ]
    assert found[True] == found[False] and all(found[True])
