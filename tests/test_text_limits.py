"""Issue 45's limits in process: inline texts over the deployment's limits end a run with its
input error (both graphs, nothing stored); chunking is bounded on text built to starve it (a long
run without spaces, a long sentence, a huge gap of spaces): no tokenizer call is given more than
a bounded text, no chunk spans more than MAX_CHUNK_CHARS, and no text is lost; a file's text over
`max_text_mb` is refused in its reader, an Office archive's before calamine holds it; one key's
index jobs are counted; a waited LangGraph run is made to cancel on disconnect unless it says."""

from __future__ import annotations

import json
import threading

import pytest

from longqa.graph.graph import graph as question_graph
from longqa.graph.index_graph import graph as index_graph
from longqa.http.disconnect import cancel_on_disconnect
from longqa.http.job_slots import Busy, JobSlots
from longqa.retrieval import DocumentError
from longqa.retrieval.cancel import cancelled_by
from longqa.retrieval.index.chunking import (
    LONG_RUN_CHARS,
    MAX_ATOM_CHARS,
    MAX_CHUNK_CHARS,
    MAX_GAP_CHARS,
    chunk_document,
)
from longqa.retrieval.read.loaders import document_from_text, load_document
from longqa.retrieval.tokens import BATCH_CHARS, batches

from . import hostile_builders as build


@pytest.mark.parametrize(
    ("texts", "says"),
    [
        (["A note."] * 3, "'texts' holds 3 texts, more than the 2 a run may pass (max_inline_texts)"),
        (["A" * 2000], "texts[0] is 2,000 characters, more than the 1,048 one text may hold (max_inline_text_mb)"),
        (["A" * 1000, "B" * 1000], "'texts' hold 2,000 characters together, more than the 1,048 a run may pass"),
    ],
    ids=["count", "one", "total"],
)
def test_inline_texts_over_the_limits_end_either_graph_with_its_input_error(tmp_path, texts, says):
    limits = {"max_inline_texts": 2, "max_inline_text_mb": 0.001, "max_inline_mb": 0.001}
    context = {"home": str(tmp_path / "home"), **limits}
    out = index_graph.invoke({"texts": texts}, context=context)
    assert out["error"].startswith(f"input: {says}")
    asked = question_graph.invoke({"question": "What?", "texts": texts}, context={**context, "model": "scripted"})
    assert asked["status"] == "error" and says in asked["error"]
    assert not (tmp_path / "home" / "index").exists()  # nothing stored


class RecordingCounter:
    """Counts words and records the longest text it was given in one call."""

    name = "recording"

    def __init__(self) -> None:
        self.longest = 0

    def _seen(self, text: str) -> str:
        self.longest = max(self.longest, len(text))
        return text

    def spans(self, text):
        import re

        return [m.span() for m in re.finditer(r"\S+", self._seen(text))]

    def count(self, text):
        return max(len(self.spans(text)), len(text.strip()) // 2 if " " not in text.strip() else 0)

    def count_many(self, texts):
        return [self.count(t) for t in texts]


@pytest.mark.parametrize(
    "text",
    [
        "a" * (3 * MAX_ATOM_CHARS + 5),  # one run without spaces
        "Before it. " + "word " * (MAX_ATOM_CHARS // 2) + "and no full stop",  # one long sentence
        "One." + " " * (4 * MAX_CHUNK_CHARS) + "Two.",  # a gap of spaces inside one paragraph
        "x" * 300 + " short " + "y" * (LONG_RUN_CHARS + 1),  # runs just past the cut, among words
    ],
    ids=["run", "sentence", "gap", "mixed"],
)
def test_chunking_gives_a_tokenizer_bounded_texts_and_loses_nothing(text):
    document = document_from_text(text)
    counter = RecordingCounter()
    chunks = chunk_document(document, 150, counter)
    assert counter.longest <= max(MAX_ATOM_CHARS + MAX_GAP_CHARS, MAX_CHUNK_CHARS)
    assert all(c.end - c.start <= MAX_CHUNK_CHARS for c in chunks)
    assert all(c.text == document.text[c.start : c.end] for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == document.text.replace(" ", "")


def test_a_run_without_spaces_is_cut_into_pieces_the_granularity_holds(wordpiece):
    document = document_from_text("a" * 100_000)
    chunks = chunk_document(document, 150, wordpiece)
    assert len(chunks) >= 100_000 // (2 * 150) and all(c.n_tokens <= 150 for c in chunks)


def test_token_counts_are_asked_for_in_bounded_batches():
    texts = ["a" * (BATCH_CHARS // 3)] * 7 + ["b" * (2 * BATCH_CHARS)]
    groups = batches(texts)
    assert [len(g) for g in groups] == [3, 3, 1, 1] and sum(map(len, groups)) == len(texts)
    assert batches([]) == []


def test_a_file_over_the_text_limit_is_refused_in_its_reader(tmp_path):
    ascii_run = build.long_run_text(tmp_path / "run.txt", 0.01)
    with pytest.raises(DocumentError, match="more characters of text than the 1,000 a document may hold"):
        load_document(ascii_run, max_chars=1000)
    wide = tmp_path / "wide.md"
    wide.write_text("é" * 1500, "utf-8")  # 3,000 bytes, not ASCII: under 4 bytes a character, counted decoded
    with pytest.raises(DocumentError, match="1,500 characters of text, more than the 1,000"):
        load_document(wide, max_chars=1000)
    assert load_document(wide, max_chars=1500).text == "é" * 1500


def test_an_office_cell_over_the_text_limit_is_refused_before_it_is_read(tmp_path):
    sheet = build.xlsx_huge_string(tmp_path / "huge.xlsx", 1)
    with pytest.raises(DocumentError, match=r"XLSX: more characters of text than the 100,000 .*max_text_mb"):
        load_document(sheet, max_chars=100_000)


def test_a_key_has_as_many_index_jobs_as_it_may():
    slots = JobSlots(per_key=1)
    slots.take("acme")
    with pytest.raises(Busy, match="already has 1 index job under way"):
        slots.take("acme")
    slots.take("globex")  # another key is not held up
    slots.give("acme")
    slots.take("acme")


def test_a_waited_run_cancels_on_disconnect_unless_it_says():
    body = {"assistant_id": "longqa", "input": {"question": "Q?"}}
    raw = json.dumps(body).encode()
    for path in ("/runs/wait", "/threads/t1/runs/stream", "/runs/stream"):
        assert json.loads(cancel_on_disconnect(path, body, raw))["on_disconnect"] == "cancel"
    chosen = {**body, "on_disconnect": "continue"}
    assert cancel_on_disconnect("/runs/wait", chosen, b"x") == b"x"  # the caller's own choice stays
    assert cancel_on_disconnect("/threads/t1/runs", body, raw) is raw  # a background run: no client to leave
    assert cancel_on_disconnect("/runs/wait", ["a batch"], raw) is raw


def test_a_run_whose_client_has_gone_ends_at_its_next_check_without_a_traceback(tmp_path, caplog):
    """`longqa serve` marks a run cancelled when its client leaves; the question graph's indexing step
    stops at its next check and the run ends with the reason, logged as one line, not a traceback."""
    gone = threading.Event()
    gone.set()
    with cancelled_by(gone), caplog.at_level("WARNING"):
        out = question_graph.invoke(
            {"question": "When?", "texts": ["The harbor opens at dawn."]},
            context={"model": "scripted", "home": str(tmp_path / "home")},
        )
    assert out["status"] == "error" and out["error"] == "prepare: the client went away; the run was stopped"
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
