"""Libraries: folders walked with their reasons to skip, one index per chunk size over every
document, updates that embed only what changed, removed documents never cited again, subsets
searched by filter, concurrent updaters that cannot corrupt a library, and readers that only ever
see a complete version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval import Searcher
from longqa.retrieval.index.library.library import Library
from longqa.retrieval.index.library.library_bm25 import LibraryBM25
from longqa.retrieval.index.library.manifest import file_members
from longqa.retrieval.read.folders import collect_files, matches
from longqa.services.inputs import InputError, index_library, open_library
from longqa.services.stores import searcher_for

from .conftest import harbor_text

G = 150
BAKERY = "The bakery oven was repaired in May by Karl Brandt, the master baker of Quillmoor."
BAKERY_JUNE = "The bakery oven was replaced in June by Ines Varga, the new master baker of Quillmoor."
FERRY = "The ferry Alba sails to the Skerrow islands at nine every morning from pier four."
LIGHTHOUSE = "The lighthouse keeper on Tarn Head is Maria Olsen, who has kept the light since 2011."


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, "utf-8")
    return path


@pytest.fixture
def docs(tmp_path) -> Path:
    """A folder with nested subfolders, mixed types, an unreadable file and hidden entries."""
    root = tmp_path / "docs"
    write(root / "report.md", harbor_text(12))
    write(root / "shops" / "bakery.txt", BAKERY)
    write(root / "shops" / "deeper" / "lighthouse.md", LIGHTHOUSE)
    write(root / "shops" / "logo.psd", b"8BPS" + bytes(range(64)))
    write(root / "shops" / "deeper" / "dump.txt", b"\x00\x01\x02binary")
    write(root / "drafts" / "draft.md", "A draft about the ferry timetable that nobody approved.")
    write(root / ".git" / "config.txt", "hidden folder: never indexed")
    write(root / ".notes.md", "hidden file: never indexed")
    locked = write(root / "shops" / "locked.md", "You may not read this.")
    locked.chmod(0)
    return root


@pytest.fixture
def settings(isolated_longqa_home) -> Settings:
    return Settings(home=isolated_longqa_home)


def sources_of(results) -> set[str]:
    return {Path(r.source).name for r in results}


# -- folders -------------------------------------------------------------------------------------


def test_a_folder_is_walked_recursively_and_each_file_left_out_says_why(docs):
    found = collect_files([docs])
    names = sorted(f.relative_to(docs).as_posix() for f in found.files)
    expected = ["drafts/draft.md", "report.md", "shops/bakery.txt", "shops/deeper/dump.txt"]
    expected.append("shops/deeper/lighthouse.md")
    if os.geteuid() != 0:  # root reads a file whatever its mode
        assert dict((Path(s.path).name, s.reason) for s in found.skipped)["locked.md"].startswith("unreadable")
    else:
        expected.append("shops/locked.md")
    assert names == sorted(expected)
    assert {Path(s.path).name: s.reason for s in found.skipped}["logo.psd"] == "unsupported type (.psd)"
    assert "skipped (" in found.summary() and "1 unsupported type" in found.summary()


def test_include_and_exclude_patterns(docs):
    only_md = collect_files([docs], include=["*.md"], exclude=["drafts/**"])
    expected = ["lighthouse.md", "report.md"] + (["locked.md"] if os.geteuid() == 0 else [])
    assert sorted(f.name for f in only_md.files) == sorted(expected)
    assert matches("a/b/c.pdf", ["**/*.pdf"]) and matches("c.pdf", ["*.pdf"]) and not matches("c.md", ["*.pdf"])


def test_a_folder_is_one_library_and_what_cannot_be_read_is_skipped_with_its_reason(docs, settings):
    opened = index_library({"documents": [str(docs)]}, settings, [G])
    reasons = {Path(s.path).name: s.reason for s in opened.skipped}
    assert reasons["logo.psd"] == "unsupported type (.psd)"
    assert "binary" in reasons["dump.txt"]  # found by the loader: skipped, not raised
    assert len(opened.doc_ids) == 4 + (os.geteuid() == 0)
    manifest = opened.library.manifest()
    assert manifest.version == 1 and set(manifest.parts) == {G}
    # one Chroma collection for the whole library, not one per file
    client = opened.library.store.client
    assert [c.name for c in client.list_collections()] == [opened.library.collection_name(G)]
    searcher = searcher_for(settings, opened.library.name, opened.doc_ids)
    assert "lighthouse.md" in sources_of(searcher.search("Who keeps the lighthouse on Tarn Head?", k=2))


def test_a_named_file_that_cannot_be_read_is_an_error_not_a_skip(docs, settings):
    from longqa.retrieval import DocumentError

    with pytest.raises(DocumentError, match="binary"):
        index_library({"documents": [str(docs / "shops" / "deeper" / "dump.txt")]}, settings, [G])
    with pytest.raises(InputError, match="no readable documents"):
        index_library({"documents": [str(docs / "shops")], "include": ["*.png"]}, settings, [G])


# -- updates -------------------------------------------------------------------------------------


def test_indexing_again_embeds_only_new_and_changed_files(docs, settings, embedder):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    version = first.library.manifest().version
    calls = embedder.calls
    again = index_library({"documents": [str(docs)]}, settings, [G])
    assert embedder.calls == calls and again.update.embedded == 0
    assert again.library.manifest().version == version  # nothing changed: no new version
    assert not again.update.added and not again.update.changed and not again.update.removed

    write(docs / "shops" / "bakery.txt", BAKERY_JUNE)
    write(docs / "ferry.txt", FERRY)
    (docs / "shops" / "deeper" / "lighthouse.md").unlink()
    os.utime(docs / "report.md")  # touched, same content: hashed, found unchanged, not embedded
    third = index_library({"documents": [str(docs)]}, settings, [G])
    assert [Path(p).name for p in third.update.added] == ["ferry.txt"]
    assert [Path(p).name for p in third.update.changed] == ["bakery.txt"]
    assert [Path(p).name for p in third.update.removed] == ["lighthouse.md"]
    assert "report.md" in {Path(p).name for p in third.update.unchanged}
    units = {d: third.library.store.chunk_manifest(d, G)["n_units"] for d in third.doc_ids}
    assert third.update.embedded == sum(units[d] for d in third.doc_ids if d not in first.doc_ids)
    assert third.library.manifest().version == version + 1


def test_a_question_over_unchanged_files_is_a_reader_it_takes_no_lock_and_collects_nothing(docs, settings, monkeypatch):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    catalog_type = type(first.library.catalog)
    locks: list[str] = []
    real_lock = catalog_type.lock

    def counted_lock(self, name):
        locks.append(name)
        return real_lock(self, name)

    def no_collection(*args, **kwargs):
        raise AssertionError("a question collected garbage")

    monkeypatch.setattr(catalog_type, "lock", counted_lock)
    monkeypatch.setattr("longqa.services.inputs.forget_unused", no_collection)
    monkeypatch.setattr(type(first.library.store), "forget_inline", no_collection)
    again = open_library({"documents": [str(docs)]}, settings)
    assert locks == [] and again.update.version == first.library.manifest().version
    assert sorted(again.update.unchanged) == sorted(first.update.added) and not again.update.published
    assert again.doc_ids == first.doc_ids

    os.utime(docs / "report.md", ns=(1, 1))  # a stat that differs: the write path, under the lock
    monkeypatch.undo()
    monkeypatch.setattr(catalog_type, "lock", counted_lock)
    touched = open_library({"documents": [str(docs)]}, settings)
    assert locks == [first.library.name] and "report.md" in {Path(p).name for p in touched.update.unchanged}


def test_a_collection_deleted_under_a_kept_handle_is_missing_vectors_not_an_error(docs, settings):
    """Another host collected the library's collection while this process kept its handle: the reader's
    check finds the vectors missing (Chroma's NotFoundError from count()), drops the handle, and the
    update makes the vectors again; a question never fails on it."""
    first = index_library({"documents": [str(docs)]}, settings, [G])
    library, part = first.library, first.library.manifest().parts[G]
    library.collection(G, part.collection, create=False)  # the handle this process keeps
    library.store.client.delete_collection(part.collection)  # gone under it
    library._verified.clear()  # checked once per version and client: this is the next client's check
    assert library.vectors_missing(G, part) is True
    assert part.collection not in library._collections
    again = index_library({"documents": [str(docs)]}, settings, [G])
    now = again.library.manifest().parts[G]
    assert again.library.store.client.get_collection(now.collection).count() == now.n_units  # made again


def test_a_scope_that_once_was_the_whole_library_never_searches_documents_added_later(docs, settings):
    index_library({"documents": [str(docs / "shops")], "collection": "notes"}, settings, [G])
    before = open_library({"collection": "notes"}, settings)
    assert "bakery.txt" in sources_of(searcher_for(settings, "notes", before.doc_ids).search(BAKERY, k=3))
    write(docs / "shops" / "ferry.txt", FERRY)
    index_library({"documents": [str(docs / "shops")], "collection": "notes"}, settings, [G])
    assert "ferry.txt" in sources_of(
        searcher_for(settings, "notes", open_library({"collection": "notes"}, settings).doc_ids).search(FERRY, k=3)
    )
    assert "ferry.txt" not in sources_of(searcher_for(settings, "notes", before.doc_ids).search(FERRY, k=10))


def test_a_changed_or_removed_file_leaves_both_indexes_and_is_never_cited(docs, settings, monkeypatch):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    old_bakery = next(d for d, s in first.sources.items() if s.endswith("bakery.txt"))
    lighthouse = next(d for d, s in first.sources.items() if s.endswith("lighthouse.md"))
    write(docs / "shops" / "bakery.txt", BAKERY_JUNE)
    (docs / "shops" / "deeper" / "lighthouse.md").unlink()
    second = index_library({"documents": [str(docs)]}, settings, [G])
    library = second.library
    gone = {old_bakery, lighthouse}
    assert not gone & set(second.doc_ids)
    # dense: the old content's vectors wait out the grace period (tests/test_library_gc.py), unsearched
    collection = library.collection(G)
    assert set(library.catalog.removed(library.name, 0.0)) == gone
    # BM25: the library's index has no row of them
    bm25 = library.bm25(library.manifest().parts[G])
    assert not gone & set(bm25.doc_ids)
    searcher = searcher_for(settings, library.name, second.doc_ids)
    for mode in ("hybrid", "dense", "bm25"):
        hits = searcher.search("Who is the lighthouse keeper on Tarn Head? Maria Olsen", k=10, mode=mode)
        assert "lighthouse.md" not in sources_of(hits)
        texts = " ".join(r.chunk.text for r in searcher.search("bakery oven master baker", k=5, mode=mode))
        assert "Karl Brandt" not in texts
    assert "Ines Varga" in searcher.search("Who replaced the bakery oven?", k=1)[0].chunk.text
    monkeypatch.setattr("longqa.retrieval.index.library.library_gc.RETIRE_AFTER_S", 0.0)  # past it, the next index run
    index_library({"documents": [str(docs)]}, settings, [G])
    assert collection.get(where={"doc_id": {"$in": sorted(gone)}})["ids"] == []


def test_a_question_over_part_of_a_library_filters_it(docs, settings):
    index_library({"documents": [str(docs)], "collection": "town"}, settings, [G])
    whole = open_library({"collection": "town"}, settings)
    part = open_library({"collection": "town", "documents": [str(docs / "shops")]}, settings)
    assert set(part.doc_ids) < set(whole.doc_ids) and len(part.doc_ids) == 2 + (os.geteuid() == 0)
    searcher = searcher_for(settings, "town", part.doc_ids)
    assert searcher.doc_ids is not None  # a filter over the one index, not an index of its own
    for mode in ("hybrid", "dense", "bm25"):
        hits = searcher.search("storm closed the harbor entrance; the bakery oven; the lighthouse", k=10, mode=mode)
        assert hits and "report.md" not in sources_of(hits)
    with pytest.raises(InputError, match="none of the documents given are in collection"):
        open_library({"collection": "town", "documents": [str(docs / "nowhere")]}, settings)
    with pytest.raises(InputError, match="no collection named 'nope'"):
        open_library({"collection": "nope"}, settings)


def test_bm25_is_the_librarys_and_reloads_from_disk(tmp_path):
    docs = [[["harbor", "storm"], ["bakeri", "oven"]], [["ferri", "alba"], ["harbor", "ferri"]]]
    built = LibraryBM25.build(["a", "b"], docs)
    built.save(tmp_path / "bm25")
    loaded = LibraryBM25.load(tmp_path / "bm25")
    assert loaded.top("ferry", 5, None) == built.top("ferry", 5, None)
    assert set(loaded.top("ferry", 5, None)) == {("b", 0), ("b", 1)}
    assert set(loaded.top("harbor", 5, {"a"})) == {("a", 0)}  # a subset keeps the library's IDF, masks the rest


# -- a reader sees one complete version --------------------------------------------------------------


def test_a_reader_during_an_update_sees_the_last_complete_version(docs, settings):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    reader = Searcher(first.library.store, library=Library(first.library.store, first.library.name))
    seen_during: list[set[str]] = []

    def mid_update(event) -> None:
        if event.step == "indexing":  # the new document's vectors are in the collection, unpublished
            seen_during.append(sources_of(reader.search(FERRY, k=10)))

    write(docs / "ferry.txt", FERRY)
    index_library({"documents": [str(docs)]}, settings, [G], progress=mid_update)
    assert seen_during and all("ferry.txt" not in seen for seen in seen_during)
    assert "ferry.txt" in sources_of(reader.search(FERRY, k=3))  # published: the next search sees it


def test_a_killed_update_is_never_served_and_its_leftovers_are_cleared(docs, settings, monkeypatch):
    first = index_library({"documents": [str(docs)]}, settings, [G])
    library = first.library
    write(docs / "ferry.txt", FERRY)
    real_build = LibraryBM25.build

    def dies(*args, **kwargs):
        raise KeyboardInterrupt  # after the vectors were added, before BM25 and the manifest

    monkeypatch.setattr(LibraryBM25, "build", dies)
    with pytest.raises(KeyboardInterrupt):
        index_library({"documents": [str(docs)]}, settings, [G])
    monkeypatch.setattr(LibraryBM25, "build", real_build)
    assert library.manifest().version == 1
    pending = json.loads((library.dir / "pending.json").read_text())
    assert len(pending) == 1 and library.collection(G).get(where={"doc_id": pending[0]})["ids"]
    reader = searcher_for(settings, library.name, first.doc_ids)
    assert "ferry.txt" not in sources_of(reader.search(FERRY, k=10))
    (docs / "ferry.txt").unlink()  # the next update no longer wants it: its orphaned vectors go
    index_library({"documents": [str(docs)], "exclude": []}, settings, [G])
    assert library.collection(G).get(where={"doc_id": pending[0]})["ids"] == []
    assert not (library.dir / "pending.json").exists()


def test_another_process_updating_the_library_is_seen_without_a_restart(docs, settings):
    first = index_library({"documents": [str(docs)], "collection": "town"}, settings, [G])
    reader = searcher_for(settings, "town", first.doc_ids)
    assert "ferry.txt" not in sources_of(reader.search(FERRY, k=3, mode="dense"))
    write(docs / "ferry.txt", FERRY)
    _cli(settings, "index", str(docs), "--collection", "town")
    second = open_library({"collection": "town"}, settings)
    reader = searcher_for(settings, "town", second.doc_ids)
    # the embedded Chroma of this process reads the vectors the other process added
    assert "ferry.txt" in sources_of(reader.search(FERRY, k=3, mode="dense"))


def test_two_processes_updating_one_library_at_once_cannot_corrupt_it(docs, settings, tmp_path):
    index_library({"documents": [str(docs)], "collection": "town"}, settings, [G])
    write(docs / "ferry.txt", FERRY)
    other = tmp_path / "other"
    write(other / "notes.md", LIGHTHOUSE + "\n\n" + BAKERY_JUNE)
    runs = [
        subprocess.Popen([*_cli_command(settings), "index", str(folder), "--collection", "town", "-q"], **_quiet())
        for folder in (docs, other)
    ]
    outcomes = [(p.wait(timeout=300), p.stderr.read().decode()) for p in runs]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    library = Library(_store(settings), "town")
    manifest = library.manifest()
    assert manifest.version == 3  # the two updates queued: each published one whole version
    # the library holds exactly what the last writer named, in both indexes, and besides it only the
    # vectors of the documents it removed, kept for the grace period (tests/test_library_gc.py)
    ids = manifest.doc_ids()
    collection = library.collection(G)
    stored = collection.get(include=["metadatas"])["metadatas"]
    assert {m["doc_id"] for m in stored} == set(ids) | set(library.catalog.removed("town", 0.0))
    assert sum(m["doc_id"] in ids for m in stored) == manifest.parts[G].n_units
    bm25 = library.bm25(manifest.parts[G])
    assert bm25.doc_ids == ids and bm25.bm25.scores["num_docs"] == manifest.parts[G].n_chunks
    assert sum(len(_store(settings).tokens(d, G)) for d in ids) == manifest.parts[G].n_chunks


# -- helpers -------------------------------------------------------------------------------------


def _store(settings: Settings):
    from longqa.services.stores import store_for

    return store_for(settings)


def _cli_command(settings: Settings) -> list[str]:
    return [sys.executable, "-m", "longqa.cli", "--home", str(settings.home)]


def _quiet() -> dict:
    env = {**os.environ, "LONGQA_TOKENIZER": "wordpiece", "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    return {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}


def _cli(settings: Settings, *args: str) -> None:
    done = subprocess.run([*_cli_command(settings), *args, "-q"], **_quiet(), timeout=300)
    assert done.returncode == 0, done.stderr.decode()


def test_file_members_are_keyed_by_resolved_path(tmp_path):
    write(tmp_path / "a.md", "alpha")
    (member,) = file_members([tmp_path / "." / "a.md"], max_words=100, name=lambda f: "shown-a")
    assert member.key == str((tmp_path / "a.md").resolve()) and member.source == "shown-a"
    assert member.stat is not None and member.load().text.strip() == "alpha"


# -- through the graph ---------------------------------------------------------------------------------


def test_the_graph_reads_a_folder_streams_its_progress_and_says_what_it_skipped(docs, settings):
    from longqa.graph.graph import graph

    events, final = [], {}
    context = Settings(home=settings.home, model=None).model_dump()
    stream = graph.stream(
        {"question": "Who keeps the lighthouse on Tarn Head?", "documents": [str(docs)], "exclude": ["drafts/**"]},
        context=context,
        stream_mode=["custom", "values"],
    )
    for mode, chunk in stream:
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    steps = {e["step"] for e in events}
    assert {"reading", "embedding", "indexing"} <= steps, events
    assert any(e["message"].startswith("prepare: read ") for e in events)
    assert final["status"] == "evidence-only", final.get("error")
    skipped = {Path(line.split(": ")[0]).name: line for line in final["skipped"]}
    assert "logo.psd" in skipped and "dump.txt" in skipped and "draft.md" not in skipped
    assert any("skipped (" in line for line in final["trace"])
    cited = {Path(c["source"]).name for c in final["citations"]}
    assert "lighthouse.md" in cited and "draft.md" not in cited
    assert all(c["source"].startswith(str(docs)) for c in final["citations"])  # named as the caller named them


def test_a_collection_indexed_before_libraries_is_opened_as_one(settings, embedder):
    from longqa.retrieval import document_from_text
    from longqa.services.stores import store_for

    store = store_for(settings)
    documents = [document_from_text(text, source=f"{i}.md") for i, text in enumerate([FERRY, LIGHTHOUSE])]
    for document in documents:
        store.remember(document)
    write(settings.home / "collections" / "old.json", json.dumps(sorted(d.doc_id for d in documents)))
    opened = open_library({"collection": "old"}, settings)
    assert set(opened.doc_ids) == {d.doc_id for d in documents}
    searcher = searcher_for(settings, "old", opened.doc_ids)
    assert searcher.search("Who keeps the light on Tarn Head?", k=1)[0].chunk.text == LIGHTHOUSE


def test_a_rebuild_under_new_settings_keeps_serving_the_old_version_until_it_is_published(docs, settings, monkeypatch):
    from longqa.retrieval import IndexStore
    from longqa.retrieval.index.library import library_gc

    first = index_library({"documents": [str(docs)]}, settings, [G])
    writer = first.library
    old_collection = writer.manifest().parts[G].collection
    reader = Searcher(IndexStore(settings.index_settings()), library=Library(first.library.store, writer.name))
    seen_during: list[set[str]] = []

    def mid_update(event) -> None:
        if event.step == "indexing":
            seen_during.append(sources_of(reader.search("Who keeps the lighthouse on Tarn Head?", k=3, mode="dense")))

    real = writer.store.signature
    writer.store.signature = lambda: {**real(), "chunking": "something-new"}  # as if the settings changed
    try:
        writer.update(None, [G], progress=mid_update)
    finally:
        writer.store.signature = real
    assert seen_during and all("lighthouse.md" in seen for seen in seen_during)  # the old vectors stayed
    new_collection = writer.manifest().parts[G].collection
    assert new_collection != old_collection
    # the old collection outlives the publish: a reader may still hold the manifest that names it
    assert sorted(c.name for c in writer.store.client.list_collections()) == sorted([old_collection, new_collection])
    assert reader.search("Who keeps the lighthouse on Tarn Head?", k=3, mode="dense")
    monkeypatch.setattr(library_gc, "RETIRE_AFTER_S", 0.0)  # its grace period over: the next update deletes it
    writer.update(None, [G])  # back to the real settings: rebuilt again, every replaced collection collected
    assert [c.name for c in writer.store.client.list_collections()] == [writer.manifest().parts[G].collection]
    assert writer.catalog.retired(writer.name, 0.0) == []


def test_a_link_in_a_folder_never_reads_past_the_documents_root(docs, tmp_path, isolated_longqa_home):
    secret = write(tmp_path / "secret.md", "The vault code is 4417-ALPHA.")
    (docs / "shops" / "innocent.md").symlink_to(secret)
    settings = Settings(home=isolated_longqa_home, documents_root=str(docs))
    opened = index_library({"documents": ["shops"]}, settings, [G])
    reasons = {s.path: s.reason for s in opened.skipped}
    assert reasons["shops/innocent.md"] == "a link leading out of the folder (not followed)"
    assert all("secret" not in source for source in opened.sources.values())
    searcher = searcher_for(settings, opened.library.name, opened.doc_ids)
    assert all("4417" not in r.chunk.text for r in searcher.search("vault code", k=5))


def test_texts_indexed_into_a_named_collection_stay_while_inline_texts_expire(settings, docs):
    keep_briefly = settings.model_copy(update={"inline_keep_s": 0.0})
    index_library({"texts": [FERRY], "collection": "notes"}, keep_briefly, [G])
    inline = index_library({"texts": [LIGHTHOUSE]}, keep_briefly, [G])
    assert (inline.library.dir / "used-at").exists()
    index_library({"documents": [str(docs / "shops")]}, keep_briefly, [G])  # any later run clears what expired
    assert not inline.library.exists()  # the library made for the inline text is gone
    notes = open_library({"collection": "notes"}, keep_briefly)
    hits = searcher_for(keep_briefly, "notes", notes.doc_ids).search("When does the ferry Alba sail?", k=1)
    assert hits[0].chunk.text.strip() == FERRY
