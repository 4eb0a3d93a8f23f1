"""The warm server's rehearsal (longqa/warm/rehearsal.py) and reading only (retrieval/index/library/reading_only.py): a
rehearsal runs the last ask over its library with a fixed question, evidence only, and writes nothing:
a library whose file changed stays as it was until the real ask updates it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval.index.library.reading_only import ReadingOnly, is_reading_only, reading_only
from longqa.runner.ask import run_question
from longqa.services.inputs import index_library
from longqa.services.stores import store_for
from longqa.warm.rehearsal import QUESTION, rehearse

from .conftest import harbor_text


@pytest.fixture
def indexed_doc(tmp_path, isolated_longqa_home) -> tuple[Path, Settings]:
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(paragraphs=8), "utf-8")
    settings = Settings(home=isolated_longqa_home)
    index_library({"documents": [str(doc)]}, settings, [settings.primary_granularity])
    return doc, settings


def _library(doc: Path, settings: Settings):
    return index_library({"documents": [str(doc)]}, settings, [settings.primary_granularity], reader=True).library


def test_reading_only_is_per_context_and_ends_with_the_block():
    seen: list[bool] = []
    with reading_only():
        assert is_reading_only()
        other = threading.Thread(target=lambda: seen.append(is_reading_only()))  # a new thread: a new context
        other.start()
        other.join()
    assert seen == [False] and not is_reading_only()


def test_a_library_is_never_updated_while_reading_only(indexed_doc):
    doc, settings = indexed_doc
    library = _library(doc, settings)
    version = library.manifest().version
    doc.write_text(harbor_text(paragraphs=9), "utf-8")  # changed since it was indexed
    with reading_only(), pytest.raises(ReadingOnly, match="reading only: nothing is written"):
        index_library({"documents": [str(doc)]}, settings, [settings.primary_granularity], reader=True)
    with reading_only(), pytest.raises(ReadingOnly):
        library.update(None, [80])  # a chunk size it lacks
    assert library.manifest().version == version and set(library.manifest().parts) == {settings.primary_granularity}
    assert index_library({"documents": [str(doc)]}, settings, [150], reader=True).library.manifest().version > version


def test_a_question_reading_only_inside_the_graph_writes_nothing_and_says_why(indexed_doc):
    """The graph runs its nodes in other threads: the context goes with them."""
    doc, settings = indexed_doc
    version = _library(doc, settings).manifest().version
    doc.write_text(harbor_text(paragraphs=9), "utf-8")
    with reading_only():
        result = run_question([str(doc)], "How deep is the main channel?", settings, progress=None)
    assert result["status"] == "error" and "reading only" in str(result["error"])
    assert _library_version(doc, settings) == version
    answered = run_question([str(doc)], "How deep is the main channel?", settings, progress=None)
    assert answered["status"] == "evidence-only" and answered["citations"]


def _library_version(doc: Path, settings: Settings) -> int:
    from longqa.retrieval.read.folders import FileSet
    from longqa.services.inputs import _input_name, library_for

    name = _input_name({"documents": [str(doc)]}, FileSet(), [])
    return library_for(store_for(settings), name).manifest().version


def test_a_rehearsal_runs_the_last_asks_documents_evidence_only_and_reading_only(indexed_doc, monkeypatch):
    doc, settings = indexed_doc
    calls: list[dict] = []

    def recording_run(paths, question, settings, **kw):
        calls.append(
            {"paths": paths, "question": question, "model": settings.model, "reading": is_reading_only(), **kw}
        )
        return run_question(paths, question, settings, **kw)

    argv = ["ask", str(doc), "How deep is the main channel?", "--model", "scripted", "--thread", "t1", "--json"]
    assert rehearse(argv, run=recording_run) == "rehearsed"
    (call,) = calls
    assert call["paths"] == [str(doc)] and call["question"] == QUESTION
    assert call["model"] is None and call["thread"] is None and call["progress"] is None and call["reading"]
    assert call["scope"] == {"collection": None, "include": [], "exclude": []}


def test_a_rehearsal_over_a_changed_file_leaves_the_library_to_the_real_ask(indexed_doc):
    doc, settings = indexed_doc
    version = _library_version(doc, settings)
    doc.write_text(harbor_text(paragraphs=9), "utf-8")
    outcome = rehearse(["ask", str(doc), "Anything?"])
    assert outcome.startswith("failed:") and "reading only" in outcome
    assert _library_version(doc, settings) == version


@pytest.mark.parametrize(
    "argv, outcome",
    [
        (["index", "somewhere"], "skipped: not an ask (index)"),
        (["ask"], "skipped: arguments the CLI refuses"),
        (["no-such-command"], "skipped: arguments the CLI refuses"),
        (["ask", "--collection", "missing-one", "q?"], "failed:"),
        (["ask", "/no/such/file.md", "q?"], "failed:"),
    ],
)
def test_what_cannot_be_rehearsed_is_skipped_or_failed_never_raised(argv, outcome, capsys):
    assert rehearse(argv).startswith(outcome)
    assert capsys.readouterr() == ("", "")  # argparse's complaints go nowhere
