"""Report, JSON and plot of a tiny run (scripted model and retrieval-only), the honesty labels, and
the aggregation helpers (Pareto front, percentiles, tokens relative to lc, routes)."""

from __future__ import annotations

import builtins
import json

import pytest

from longqa.cli import main
from longqa.evals.plot import draw, pareto_front, plot
from longqa.evals.provenance import code_commit
from longqa.evals.report import write_report
from longqa.evals.scoring import percentile, summarize
from longqa.evals.titles import RETRIEVAL_TITLE, SCRIPTED_TITLE
from tests.eval_helpers import shared_eval_home, write_tiny


@pytest.fixture(scope="session")
def eval_home(tmp_path_factory):
    return shared_eval_home(tmp_path_factory)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _eval(tmp_path, eval_home, *args: str) -> int:
    data = write_tiny(tmp_path / "tiny.jsonl", n=2)
    return main(["eval", str(data), "--home", str(eval_home), "--out", str(tmp_path / "out"), "--no-progress", *args])


def test_scripted_run_report_json_and_plot(tmp_path, eval_home, capsys):
    assert _eval(tmp_path, eval_home, "--model", "scripted", "--strategies", "rag", "lc") == 0
    out = tmp_path / "out"
    stdout = capsys.readouterr().out
    report_md = (out / "report.md").read_text("utf-8")
    assert report_md.splitlines()[0] == f"# longqa evaluation — {SCRIPTED_TITLE}"
    assert stdout.strip() == report_md.strip()  # the table goes to stdout too
    assert "NOT a quality measurement" in report_md
    # each answers row names the model and the commit its runs were made at (every record is stamped with it)
    commit = code_commit()
    assert f"| rag | scripted | {commit} | 2 |" in report_md and f"| lc | scripted | {commit} | 2 |" in report_md
    assert "## Retrieval-only scores" in report_md
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["scripted"] is True and report["quality_measurement"] is False
    assert report["retrieval_only"] is False
    rows = {r["strategy"]: r for r in report["rows"]}
    assert rows["lc"]["tokens_pct_of_lc"] == pytest.approx(100.0) and rows["lc"]["long_context_pct"] == 100.0
    assert rows["rag"]["calls"] == 1.0 and rows["rag"]["cost"] > 0 and rows["rag"]["p95_s"] >= rows["rag"]["p50_s"]
    assert rows["lc"]["answer_in_evidence_pct"] == 100.0 and rows["lc"]["all_supporting_pct"] == 100.0
    assert len(report["per_question"]) == 4
    assert {q["commit"] for q in report["per_question"]} == {commit} and rows["rag"]["commits"] == [commit]
    # the paired differences of rag - lc on the same 2 items, F1, EM and input tokens, printed with their intervals
    assert {(p["a"], p["b"], p["metric"], p["n"]) for p in report["paired"]} == {
        ("rag", "lc", metric, 2) for metric in ("F1", "EM", "input tokens")
    }
    assert "## Paired differences" in report_md and "| rag − lc | input tokens | 2 |" in report_md
    assert all(0.0 <= q["f1"] <= 1.0 for q in report["per_question"])
    png = (out / "plot.png").read_bytes()
    assert png.startswith(PNG_SIGNATURE) and png[12:16] == b"IHDR" and len(png) > 5_000
    # a second invocation is served from the cache
    assert _eval(tmp_path, eval_home, "--model", "scripted", "--strategies", "rag", "lc") == 0
    assert json.loads((out / "report.json").read_text("utf-8"))["run"]["cached"] == 4


def test_retrieval_only_run_is_labelled(tmp_path, eval_home, capsys):
    assert _eval(tmp_path, eval_home, "--model", "none", "--strategies", "lc", "rag") == 0
    capsys.readouterr()
    report_md = (tmp_path / "out" / "report.md").read_text("utf-8")
    assert report_md.splitlines()[0] == f"# longqa evaluation — {RETRIEVAL_TITLE}"
    assert "## Answers" not in report_md and "no F1/EM" in report_md
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert report["retrieval_only"] is True and report["quality_measurement"] is False and report["model"] is None
    rows = {r["strategy"]: r for r in report["rows"]}
    assert rows["rag"]["f1"] is None and rows["rag"]["calls"] == 0
    assert rows["lc"]["evidence_pct_of_lc"] == pytest.approx(100.0)
    assert rows["rag"]["evidence_tokens"] <= rows["lc"]["evidence_tokens"]
    assert (tmp_path / "out" / "plot.png").read_bytes().startswith(PNG_SIGNATURE)


def test_without_matplotlib_the_plot_is_skipped_with_a_message(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    report = {
        "title": "t",
        "scripted": True,
        "retrieval_only": False,
        "rows": [],
        "run": {
            "planned": 0,
            "cached": 0,
            "ran": 0,
            "failures": [],
            "index_seconds": 0,
            "wall_seconds": 0,
            "concurrency": 1,
        },
        "machine": {"cpus": 1, "platform": "p", "python": "3"},
        "date": "d",
        "model": "scripted",
        "strategies": [],
        "datasets": {},
        "bad_lines": [],
    }
    assert "matplotlib is not installed" in plot(report, tmp_path / "p.png")
    paths = write_report(report, tmp_path)
    assert "plot" not in paths and not (tmp_path / "p.png").exists()
    assert "matplotlib is not installed" in (tmp_path / "report.md").read_text("utf-8")


def test_pareto_front():
    #          rag       lc          cheap-bad  dominated  same-cost-better
    points = [(100, 40), (1000, 60), (50, 10), (500, 30), (100, 45)]
    assert pareto_front(points) == [2, 4, 1]
    assert pareto_front([(1, 1), (1, 1)]) == [0, 1]  # ties dominate nothing
    assert pareto_front([]) == []


def _rows(points: dict[str, tuple[float, float]]) -> list[dict]:
    return [
        {"dataset": "d", "n": 3, "strategy": s, "evidence_tokens": x, "answer_in_evidence_pct": y}
        for s, (x, y) in points.items()
    ]


@pytest.mark.parametrize(
    "points",
    [
        # five strategies at nearly the same place: the old labels overprinted each other here
        {
            "rag": (1500, 90.0),
            "self-route": (1502, 90.0),
            "longrag": (1498, 89.5),
            "adaptive": (1501, 90.2),
            "adaptive-precise": (1501, 90.2),
        },
        # one non-dominated point: no frontier line, and the legend does not name one
        {"rag": (100, 90.0), "lc": (5000, 80.0), "adaptive": (400, 70.0)},
    ],
)
def test_plot_names_every_strategy_once_and_only_what_it_draws(points):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report = {"retrieval_only": True, "scripted": False, "model": None, "rows": _rows(points)}
    fig = draw(report, plt)
    (ax,) = fig.axes
    assert not ax.texts, "no text is written on the points"
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    front = pareto_front(list(points.values()))
    expected = [s + (" (non-dominated)" if i in front else "") for i, s in enumerate(points)]
    assert names[: len(points)] == expected
    lines = [line for line in ax.get_lines() if line.get_label() == "Pareto frontier"]
    if len(front) > 1:
        assert names[len(points) :] == ["Pareto frontier"] and len(lines[0].get_xdata()) == len(front)
    else:
        assert names[len(points) :] == [] and not lines
    plt.close(fig)


def test_percentile_is_linear():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 0, 20], 95) == pytest.approx(19.0)
    assert percentile([], 50) is None


def _score(id, strategy, tokens, long_context=False, status="answered", qtype=None, label=None):
    return {
        "id": id,
        "dataset": "d",
        "strategy": strategy,
        "status": status,
        "f1": 0.5,
        "em": 0.0,
        "answer_in_evidence": True,
        "all_supporting": None,
        "support_recall": None,
        "evidence_tokens": tokens,
        "evidence_words": tokens,
        "calls": 1,
        "input_tokens": tokens,
        "output_tokens": 0,
        "cost": tokens,
        "estimated_usage": False,
        "seconds": 1.0,
        "long_context": long_context,
        "workflow": "direct",
        "question_type": qtype,
        "label": label,
    }


def test_route_stats_and_tokens_relative_to_lc():
    scores = [
        _score("a", "lc", 1000, long_context=True),
        _score("b", "lc", 3000, long_context=True),
        _score("a", "self-route", 200),
        _score("b", "self-route", 3200, long_context=True),
        _score("a", "adaptive", 100, qtype="multi-bridge", label="multi-bridge"),
        _score("b", "adaptive", 100, qtype="extractive", label="multi-bridge", status="error"),
    ]
    rows = {r["strategy"]: r for r in summarize(scores, ["lc", "self-route", "adaptive"])}
    assert rows["self-route"]["tokens_pct_of_lc"] == pytest.approx(100 * 3400 / 4000)
    assert rows["self-route"]["answered_from_retrieval_pct"] == 50.0
    assert rows["self-route"]["long_context_pct"] == 50.0
    assert rows["lc"]["answered_from_retrieval_pct"] is None  # no fallback in that strategy
    assert rows["adaptive"]["question_types"] == {"multi-bridge": 1, "extractive": 1}
    assert rows["adaptive"]["label_agreement_pct"] == 50.0 and rows["adaptive"]["errors"] == 1
    assert rows["adaptive"]["all_supporting_pct"] is None and rows["adaptive"]["all_supporting_n"] == 0
