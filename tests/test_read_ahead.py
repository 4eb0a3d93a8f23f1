"""A library update reads its files several at once (issue #32): members read in reader processes
are read ahead, two at a time, in their order; the others when asked, in the caller's thread; one
member's error is its own; leaving early cancels what has not begun; a folder's update keeps both
reader processes busy and reads, skips and finds as it did one file at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.bounded import reader_for
from longqa.retrieval.documents import Document
from longqa.retrieval.loaders import DocumentError, document_from_text
from longqa.retrieval.manifest import Member
from longqa.retrieval.read_ahead import ReadAhead
from longqa.services.inputs import index_library
from longqa.services.stores import searcher_for


def member(name: str, load, parallel: bool = True) -> Member:
    return Member(key=name, source=name, load=load, parallel=parallel)


def text_document(name: str) -> Document:
    return document_from_text(f"The {name} document says hello.", source=name)


def test_members_read_in_processes_are_read_two_at_a_time_and_come_back_in_order():
    both_reading = threading.Barrier(2, timeout=10)  # broken unless two reads wait on it at once

    def load(name: str):
        def read() -> Document:
            both_reading.wait()
            return text_document(name)

        return read

    members = [member(f"m{i}", load(f"m{i}")) for i in range(4)]
    with ReadAhead(members) as reads:
        assert [reads.load(m).source for m in members] == ["m0", "m1", "m2", "m3"]


def test_members_read_in_this_process_are_read_when_asked_in_the_callers_thread():
    calls: list[tuple[str, str]] = []

    def load(name: str):
        def read() -> Document:
            calls.append((name, threading.current_thread().name))
            return text_document(name)

        return read

    members = [member("a", load("a"), parallel=False), member("b", load("b"), parallel=False)]
    with ReadAhead(members) as reads:
        assert calls == []  # nothing read before it is asked for
        assert reads.load(members[1]).source == "b"
        assert reads.load(members[0]).source == "a"
    assert calls == [("b", threading.current_thread().name), ("a", threading.current_thread().name)]


def test_one_members_error_is_raised_at_its_own_load_and_the_others_are_read():
    def broken() -> Document:
        raise DocumentError("bad.docx", "not a Word file")

    members = [member("a", lambda: text_document("a")), member("bad", broken), member("c", lambda: text_document("c"))]
    with ReadAhead(members) as reads:
        assert reads.load(members[0]).source == "a"
        with pytest.raises(DocumentError, match="not a Word file"):
            reads.load(members[1])
        assert reads.load(members[2]).source == "c"


def test_leaving_the_block_cancels_the_reads_not_yet_begun():
    go = threading.Event()
    started: list[str] = []
    finished: list[str] = []

    def load(name: str):
        def read() -> Document:
            started.append(name)
            go.wait(10)
            finished.append(name)
            return text_document(name)

        return read

    members = [member(f"m{i}", load(f"m{i}")) for i in range(5)]
    with ReadAhead(members):
        deadline = time.monotonic() + 10
        while len(started) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    go.set()  # the two reads in progress end; the three queued were cancelled when the block was left
    deadline = time.monotonic() + 10
    while len(finished) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert sorted(started) == ["m0", "m1"] and sorted(finished) == ["m0", "m1"]


def test_a_folder_update_keeps_both_reader_processes_busy_and_reads_skips_and_finds_as_before(
    tmp_path: Path, isolated_longqa_home
):
    folder = tmp_path / "pages"
    folder.mkdir()
    facts = [
        "The ferry Alba sails to the Skerrow islands at nine every morning.",
        "The lighthouse keeper on Tarn Head is Maria Olsen.",
        "The bakery oven was repaired in May by Karl Brandt.",
        "The harbour crane was painted blue in the spring.",
    ]
    for i, fact in enumerate(facts):
        (folder / f"page{i}.html").write_text(f"<html><body><h1>Page {i}</h1><div>{fact}</div></body></html>")
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 this is not a zip archive")
    # limits of their own, so this test's reader (and its count of processes) is not another test's
    settings = Settings(home=isolated_longqa_home, read_timeout_s=57.0)
    opened = index_library({"documents": [str(folder)]}, settings, [150])
    assert len(opened.doc_ids) == 4
    assert [Path(s.path).name for s in opened.skipped] == ["broken.docx"]
    assert reader_for(settings.read_limits())._idle.qsize() == 2  # one file at a time would have started one
    searcher = searcher_for(settings, opened.library.name, opened.doc_ids)
    top = searcher.search("Who keeps the lighthouse on Tarn Head?", k=1)
    assert Path(top[0].source).name == "page1.html"
