"""bench/eval_rows.py: the answers table and the paired verdicts of eval runs, as evals/README prints them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.eval_rows import main


def _report(folder: Path) -> str:
    row = {"n": 30, "models": ["qwen-0.5b"], "commits": ["c0ffee1"], "errors": 1, "calls": 1.1}
    row |= {"input_tokens": 1675.4, "output_tokens": 39.0, "declined_pct": 16.7}
    rows = [
        {**row, "dataset": "papers", "strategy": "adaptive-precise", "f1": 0.249, "em": 0.10},
        {**row, "dataset": "papers", "strategy": "self-route", "f1": 0.334, "em": 0.167, "declined_pct": 0.0},
        {**row, "dataset": "all", "strategy": "self-route", "f1": 0.334, "em": 0.167},
    ]
    verdict = {"dataset": "papers", "default": "adaptive-precise", "baseline": "self-route", "metric": "F1"}
    verdict |= {"verdict": "can't tell", "cost_metric": "input tokens"}
    verdict |= {"difference": {"mean": -8.49, "low": -23.05, "high": 4.14, "n": 30}}
    verdict |= {"cost_difference": {"mean": -280.6, "low": -356.9, "high": -192.0, "n": 30}}
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps({"model": "qwen-0.5b", "rows": rows, "verdicts": [verdict]}))
    return str(folder)


def test_rows_and_verdicts(tmp_path: Path, capsys) -> None:
    assert main(["--run", _report(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "| papers | **default** | qwen-0.5b | c0ffee1 | 30 | 24.9 | 10.0 | 1,675 | 39 | 1.1 | 16.7 | 1 |" in out
    assert "| papers | self-route | qwen-0.5b | c0ffee1 | 30 | 33.4 | 16.7 | 1,675 | 39 | 1.1 | 0.0 | 1 |" in out
    assert "| all |" not in out
    assert (
        "- qwen-0.5b: papers: default (adaptive-precise) − best baseline (self-route), F1: −8.5 [−23.1, +4.1] "
        "over 30 items: **can't tell**; input tokens −281 [−357, −192]"
    ) in out


def test_verdicts_are_computed_again_from_the_per_question_scores(tmp_path: Path, capsys) -> None:
    """A report written before its verdicts said how many items would settle them reads as a new one: the verdict
    comes from the per-question scores, with the projection beside a "can't tell"."""
    default = [0.9, 0.1, 0.5, 0.5] * 8
    folder = tmp_path / "run"
    questions = [
        {"id": f"q{i}", "dataset": "papers", "strategy": s, "f1": f1, "em": 0.0, "input_tokens": tokens}
        for i, f1a in enumerate(default)
        for s, f1, tokens in (("adaptive-precise", f1a, 1500), ("rag", 0.5, 2400))
    ]
    folder.mkdir()
    report = {"model": "qwen-0.5b", "retrieval_only": False, "rows": [], "per_question": questions}
    (folder / "report.json").write_text(json.dumps(report | {"verdicts": []}))
    assert main(["--run", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "- qwen-0.5b: papers: default (adaptive-precise) − best baseline (rag), F1: +0.0 [" in out
    assert "over 32 items: **can't tell** (were this mean and spread to hold, about " in out
    assert "items would say not behind); input tokens −900 [−900, −900]" in out


def test_a_folder_without_a_report_is_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no report.json"):
        main(["--run", str(tmp_path)])


def _per_question(folder: Path, strategy: str, f1s: list[float], tokens: int) -> str:
    """A report with per-question scores only: what --versus reads."""
    questions = [
        {"id": f"q{i}", "dataset": "papers", "strategy": strategy, "f1": f1, "input_tokens": tokens}
        for i, f1 in enumerate(f1s)
    ]
    questions.append({"id": "q0", "dataset": "papers", "strategy": "rag", "f1": 0.0, "input_tokens": 2400})
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps({"model": "qwen-0.5b", "rows": [], "per_question": questions}))
    return str(folder)


def test_two_runs_of_the_same_items_paired(tmp_path: Path, capsys) -> None:
    """The default at another setting against the default, and against another strategy of a run (@rag)."""
    larger = _per_question(tmp_path / "larger", "adaptive-precise", [0.5, 0.5, 0.5, 0.5], 2000)
    default = _per_question(tmp_path / "default", "adaptive-precise", [0.3, 0.3, 0.3, 0.3], 1500)
    argv = ["--versus", f"budget2900={larger},default={default}", "--versus", f"budget2900={larger},rag={default}@rag"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| set |" not in out  # no --run: no answers table
    assert "- qwen-0.5b: papers: budget2900 − default, F1: +20.0 [+20.0, +20.0] over 4 items" in out
    assert "input tokens +500 [+500, +500]" in out
    assert "- qwen-0.5b: papers: budget2900 − rag, F1: +50.0 [+50.0, +50.0] over 1 items" in out
    with pytest.raises(SystemExit, match="expected A=DIR_A,B=DIR_B"):
        main(["--versus", larger])
