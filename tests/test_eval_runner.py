"""The resumable cache of evals/runner.py: an interrupted run continues where it stopped, a changed
setting or context runs again, harness failures are not cached."""

from __future__ import annotations

import json

import pytest

from longqa.contracts.settings import Settings
from longqa.evals import runner
from longqa.evals.longbench import EvalItem
from longqa.evals.runner import Cache, cache_key, run_eval
from tests.eval_helpers import FACTS, shared_eval_home, tiny_item


@pytest.fixture(scope="session")
def eval_home(tmp_path_factory):
    return shared_eval_home(tmp_path_factory)


def _items(n: int) -> list[EvalItem]:
    return [tiny_item(i) for i in range(n)]


class Counting:
    """Wraps `run_one`: counts calls and raises KeyboardInterrupt (a simulated Ctrl-C) on call
    number `interrupt_at`."""

    def __init__(self, real, interrupt_at: int | None = None):
        self.real, self.interrupt_at, self.calls = real, interrupt_at, []

    def __call__(self, item, strategy, settings):
        self.calls.append((item.id, strategy))
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        return self.real(item, strategy, settings)


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path, eval_home, monkeypatch):
    """The real graph (scripted model, `lc` and `rag`) on 3 tiny documents; interrupted during the 4th run."""
    items = _items(3)
    settings = Settings(model="scripted", home=eval_home)
    strategies = ["lc", "rag"]
    first = Counting(runner.run_one, interrupt_at=4)
    monkeypatch.setattr(runner, "run_one", first)
    with pytest.raises(KeyboardInterrupt):
        run_eval(items, strategies, settings, tmp_path, concurrency=1, progress=False)
    assert len(first.calls) == 4
    lines = (tmp_path / "results.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 3  # the interrupted 4th run left nothing

    second = Counting(runner.run_one.real)
    monkeypatch.setattr(runner, "run_one", second)
    result = run_eval(items, strategies, settings, tmp_path, concurrency=1, progress=False)
    assert second.calls == [("q1", "rag"), ("q2", "lc"), ("q2", "rag")]  # only the rest
    assert (result.cached, result.ran, result.planned) == (3, 3, 6)
    assert set(result.records) == {(f"tiny/q{i}", s) for i in range(3) for s in strategies}
    record = result.records[("tiny/q0", "rag")]
    assert record["status"] == "answered" and record["scripted"] and record["passages"]
    assert record["totals"]["calls"] == 1 and record["seconds"] > 0

    third = Counting(runner.run_one.real)
    monkeypatch.setattr(runner, "run_one", third)
    assert run_eval(items, strategies, settings, tmp_path, concurrency=2, progress=False).ran == 0
    assert third.calls == []


@pytest.fixture
def fake_runs(monkeypatch):
    """run_one and warm replaced by instant fakes (the cache logic alone); returns the call log."""
    calls: list[tuple[str, str]] = []

    def fake_run_one(item, strategy, settings):
        calls.append((item.id, strategy))
        return {
            "id": item.id,
            "dataset": item.dataset,
            "strategy": strategy,
            "status": "answered",
            "answer": item.answers[0],
            "passages": [],
            "seconds": 0.01,
            "totals": {},
        }

    monkeypatch.setattr(runner, "run_one", fake_run_one)
    monkeypatch.setattr(runner, "warm", lambda item, strategies, settings: 0.0)
    monkeypatch.setattr(runner, "context_window_of", lambda settings: 32768)
    return calls


def test_a_changed_setting_invalidates_the_cache(tmp_path, fake_runs):
    items = _items(2)
    base = Settings(model="openai:some-model", base_url="http://127.0.0.1:9/v1", analyzer="auto", home=tmp_path / "h1")

    def run(settings, its=items):
        fake_runs.clear()
        run_eval(its, ["rag", "adaptive"], settings, tmp_path / "out", progress=False)
        return len(fake_runs)

    assert run(base) == 4
    assert run(base) == 0
    assert run(base.model_copy(update={"home": tmp_path / "h2", "timeout_s": 5.0})) == 0  # not result-changing
    for change in (
        {"factoid_k": 7},
        {"model": "openai:other"},
        {"base_url": "http://127.0.0.1:10/v1"},
        {"analyzer": "llm"},
        {"context_window": 8192},
        {"preferred_weight": 4.0},
    ):
        assert run(base.model_copy(update=change)) == 4, change
    assert run(base) == 0  # the first settings' records are still there
    changed = [items[0], EvalItem(**{**items[1].__dict__, "context": items[1].context + "\n\nOne more passage."})]
    assert run(base, changed) == 2 and fake_runs == [("q1", "rag"), ("q1", "adaptive")]


def test_key_names_item_strategy_settings_and_context():
    item = _items(1)[0]
    s = Settings(model="scripted")
    assert cache_key(item, "rag", s, "tok") == cache_key(item, "rag", s.model_copy(update={"max_retries": 9}), "tok")
    assert cache_key(item, "rag", s, "tok") != cache_key(item, "lc", s, "tok")
    assert cache_key(item, "rag", s, "tok") != cache_key(item, "rag", s, "other-tokenizer")
    assert cache_key(item, "rag", s, "tok") != cache_key(item, "rag", s.model_copy(update={"hop_k": 4}), "tok")


def test_a_line_cut_short_is_ignored_and_run_again(tmp_path, fake_runs):
    items = _items(2)
    settings = Settings(model="scripted", home=tmp_path / "h")
    run_eval(items, ["rag"], settings, tmp_path, progress=False)
    path = tmp_path / "results.jsonl"
    lines = path.read_text("utf-8").splitlines()
    path.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2], "utf-8")  # killed mid-write
    fake_runs.clear()
    result = run_eval(items, ["rag"], settings, tmp_path, progress=False)
    assert fake_runs == [("q1", "rag")] and result.corrupt_cache_lines == [2]
    records = Cache(tmp_path).load()
    assert len(records) == 2
    assert all(json.loads(line) for line in path.read_text("utf-8").splitlines()[2:])  # appended on a fresh line


def test_a_record_holds_what_the_graph_says_the_model_read(eval_home, scripted):
    """The harness reads `shown` (with a model) or `evidence` (without), never node internals."""
    from longqa.graph.graph import graph

    (item,) = _items(1)

    def keep_the_fact(text: str) -> str:
        return json.dumps({"status": "Kortsen" in text.split("\nQuestion:", 1)[0]})

    name, _ = scripted({"filter": keep_the_fact})
    for model, strategy, key in ((name, "longrag", "shown"), (None, "longrag", "evidence"), (None, "lc", "evidence")):
        settings = Settings(model=model, home=eval_home, strategy=strategy)
        record = runner.run_one(item, strategy, settings)
        final = graph.invoke({"question": item.question, "texts": [item.context]}, context=settings.model_dump())
        # every passage any model call read (the CoT's, each filter's, the generator's), each span once
        read = list({(p["doc_id"], p["start"], p["end"]): p for p in final[key]}.values())
        expected = [(p["start"], p["end"]) for p in read]
        assert expected and [(p["start"], p["end"]) for p in record["passages"]] == expected, (model, strategy)
        texts = runner.passage_texts(record["passages"], item.context)
        assert texts == [p["text"] for p in read]
    assert record["passages"] == [{"id": "L1", "start": 0, "end": len(item.context), "whole_document": True}]


def test_the_long_context_selection_is_an_output_field_the_record_keeps(eval_home, scripted):
    """The long-context reader says how it chose its spans in `long_context_selection` (the text of
    its trace line); the harness keeps that field as `lc_how`, and None where the reader did not run."""
    from longqa.graph.graph import graph

    (item,) = _items(1)
    name, _ = scripted({"generator": "unanswerable", "long_context": FACTS[0][1]})
    for model, strategy, note in ((name, "self-route", ""), (name, "lc", ""), (None, "lc", "; no model to read it")):
        settings = Settings(model=model, home=eval_home, strategy=strategy)
        final = graph.invoke({"question": item.question, "texts": [item.context]}, context=settings.model_dump())
        assert "long_context" in final["route"], (model, strategy)
        selection = final["long_context_selection"]
        assert selection.startswith("whole document(s), ") and selection.endswith(f" tokens{note}"), selection
        assert f"long_context: {selection}" in final["trace"]
        record = runner.run_one(item, strategy, settings)
        assert record["long_context"] and record["lc_how"] == selection, (model, strategy)
    final = graph.invoke(
        {"question": item.question, "texts": [item.context]},
        context=Settings(model=name, home=eval_home, strategy="rag").model_dump(),
    )
    assert "long_context" not in final["route"] and final.get("long_context_selection") is None
    assert runner.run_one(item, "rag", Settings(model=name, home=eval_home))["lc_how"] is None


def test_harness_failures_are_reported_and_not_cached(tmp_path, fake_runs, monkeypatch, caplog):
    items = _items(2)
    settings = Settings(model="scripted", home=tmp_path / "h")
    ok = runner.run_one

    def flaky(item, strategy, settings):
        if item.id == "q1":
            raise ValueError("boom")
        return ok(item, strategy, settings)

    monkeypatch.setattr(runner, "run_one", flaky)
    result = run_eval(items, ["rag"], settings, tmp_path, progress=False)
    assert result.ran == 1 and result.failures == ["tiny/q1 / rag: ValueError: boom"]
    (logged,) = [r for r in caplog.records if r.levelname == "ERROR"]
    assert logged.exc_info and "raise ValueError" in caplog.text, "the failure is logged with its traceback"
    monkeypatch.setattr(runner, "run_one", ok)
    fake_runs.clear()
    assert run_eval(items, ["rag"], settings, tmp_path, progress=False).ran == 1 and fake_runs == [("q1", "rag")]


def test_indexing_failures_are_logged_with_their_traceback(tmp_path, monkeypatch, caplog):
    def broken_warm(item, strategies, settings):
        raise IndexError("string index out of range")

    monkeypatch.setattr(runner, "warm", broken_warm)
    result = run_eval(_items(1), ["rag"], Settings(model=None, home=tmp_path / "h"), tmp_path, progress=False)
    assert result.failures == ["tiny/q0: indexing failed: IndexError: string index out of range"]
    assert "Traceback" in caplog.text and "broken_warm" in caplog.text


def test_graph_errors_are_cached_unless_retried(tmp_path, fake_runs, monkeypatch):
    items = _items(1)
    settings = Settings(model="scripted", home=tmp_path / "h")
    ok = runner.run_one
    monkeypatch.setattr(runner, "run_one", lambda *a: {**ok(*a), "status": "error", "error": "llm down"})
    run_eval(items, ["rag"], settings, tmp_path, progress=False)
    monkeypatch.setattr(runner, "run_one", ok)
    fake_runs.clear()
    assert run_eval(items, ["rag"], settings, tmp_path, progress=False).ran == 0
    assert run_eval(items, ["rag"], settings, tmp_path, progress=False, retry_errors=True).ran == 1
