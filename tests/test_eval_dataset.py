"""Bad LongBench lines are reported with their line numbers and skipped, never silently."""

from __future__ import annotations

import json

import pytest

from longqa.cli import main
from longqa.evals.longbench import read_jsonl
from tests.eval_helpers import shared_eval_home, tiny_record


@pytest.fixture(scope="session")
def eval_home(tmp_path_factory):
    return shared_eval_home(tmp_path_factory)


def _bad_file(path):
    good = tiny_record(0)
    lines = [
        json.dumps(good),  # 1 ok
        '{"_id": "x", "input": "q?", ',  # 2 invalid JSON
        json.dumps({k: v for k, v in tiny_record(1).items() if k != "answers"}),  # 3 missing answers
        json.dumps({**tiny_record(2), "context": "   \n "}),  # 4 empty context
        "",  # 5 empty line
        json.dumps({**tiny_record(3), "answers": "1987"}),  # 6 answers not a list
        json.dumps({**tiny_record(1), "_id": "q0"}),  # 7 duplicate _id
        json.dumps([1, 2]),  # 8 not an object
        json.dumps({**tiny_record(2), "supporting": "one string"}),  # 9 supporting not a list
        json.dumps(tiny_record(3, extra_field=7)),  # 10 ok, extra field kept
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def test_bad_lines_are_reported_with_line_numbers(tmp_path):
    items, bad = read_jsonl(_bad_file(tmp_path / "data.jsonl"))
    assert [i.id for i in items] == ["q0", "q3"]
    assert items[1].extra == {"supporting": [tiny_record(3)["supporting"][0]], "extra_field": 7}
    reasons = {b.line: b.reason for b in bad}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert reasons[2].startswith("invalid JSON")
    assert "missing field(s) answers" in reasons[3]
    assert reasons[4] == "empty context"
    assert reasons[5] == "empty line"
    assert "'answers' must be a non-empty list of strings" in reasons[6]
    assert "duplicate _id 'q0'" in reasons[7]
    assert "not a JSON object" in reasons[8]
    assert "'supporting' must be a list" in reasons[9]
    assert str(bad[0]).startswith(f"{tmp_path / 'data.jsonl'}:2: invalid JSON")


def test_a_question_repeated_over_the_same_context_is_skipped(tmp_path):
    """One item under two ids would count twice in every paired interval: the repeat is a bad line, named with the
    line it repeats; the same question over another context, or another question over the same one, is kept."""
    first = tiny_record(0)
    lines = [
        first,
        {**first, "_id": "again", "input": "  " + first["input"].upper() + " "},  # same question, same context
        {**first, "_id": "other-context", "context": first["context"] + " More."},
        {**first, "_id": "other-question", "input": "Who wrote it?"},
    ]
    path = tmp_path / "repeats.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    items, bad = read_jsonl(path)
    assert [i.id for i in items] == ["q0", "other-context", "other-question"]
    assert [(b.line, b.reason) for b in bad] == [
        (2, "the same question over the same context as line 1 (an item counted twice)")
    ]


def test_missing_optional_fields_get_defaults(tmp_path):
    record = {k: v for k, v in tiny_record(0).items() if k not in ("length", "dataset")}
    (tmp_path / "mini.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    items, bad = read_jsonl(tmp_path / "mini.jsonl")
    assert bad == [] and items[0].dataset == "mini" and items[0].length == len(record["context"].split())


def test_eval_command_reports_bad_lines(tmp_path, eval_home, capsys):
    """Retrieval-only `lc` (no LLM, no graph run): the bad lines are on stderr and in report.md."""
    data = _bad_file(tmp_path / "data.jsonl")
    out = tmp_path / "out"
    rc = main(
        [
            "eval",
            str(data),
            "--model",
            "none",
            "--strategies",
            "lc",
            "--home",
            str(eval_home),
            "--out",
            str(out),
            "--no-progress",
            "--no-plot",
        ]
    )
    assert rc == 0
    err = capsys.readouterr().err
    for line in (2, 3, 4, 5, 6, 7, 8, 9):
        assert f"{data}:{line}: " in err
    assert f"{data}: 2 item(s) read, 8 bad line(s) skipped" in err
    report = (out / "report.md").read_text("utf-8")
    assert "bad dataset lines skipped: 8" in report and f"{data}:2: invalid JSON" in report
    assert json.loads((out / "report.json").read_text("utf-8"))["datasets"]["tiny"]["items"] == 2


def test_no_valid_items_is_an_error(tmp_path, capsys):
    (tmp_path / "bad.jsonl").write_text("not json\n", "utf-8")
    assert main(["eval", str(tmp_path / "bad.jsonl"), "--model", "none", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1: invalid JSON" in err and "no valid items" in err
