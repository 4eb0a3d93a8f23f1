"""Paired differences between strategies on the same items (evals/paired.py): the bootstrap interval on known data,
the pairing by item, the verdict on default - best baseline, and the report's section."""

from __future__ import annotations

import numpy as np
import pytest

from longqa.evals.paired import (
    Interval,
    compare,
    items_to_settle,
    paired_bootstrap,
    paired_rows,
    verdict,
    verdict_lines,
)
from longqa.evals.tables import markdown


def test_identical_strategies_differ_by_nothing():
    scores = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0] * 5
    interval = paired_bootstrap(scores, scores)
    assert (interval.mean, interval.low, interval.high, interval.n) == (0.0, 0.0, 0.0, 30)


def test_a_constant_shift_is_its_own_interval():
    rng = np.random.default_rng(1)
    b = list(rng.uniform(0, 100, size=30))
    interval = paired_bootstrap([x + 5 for x in b], b)  # noisy scores, the same +5 on every item
    assert interval.mean == pytest.approx(5) and interval.low == pytest.approx(5) and interval.high == pytest.approx(5)


def test_pairing_removes_what_the_items_share():
    # the items' difficulty varies a lot; a is b plus 2 on half the items: the paired interval is narrow and above 0
    rng = np.random.default_rng(2)
    b = rng.uniform(0, 100, size=40)
    a = b + np.array([2.0, 0.0] * 20)
    interval = paired_bootstrap(list(a), list(b))
    assert interval.mean == pytest.approx(1.0)
    assert 0 < interval.low < 1.0 < interval.high < 2.0


def test_the_interval_matches_scipys_paired_percentile_bootstrap():
    bootstrap = pytest.importorskip("scipy.stats").bootstrap  # installed with sentence-transformers

    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, size=50) * 100.0, rng.integers(0, 2, size=50) * 100.0
    ours = paired_bootstrap(list(a), list(b), resamples=4_000)
    ref = bootstrap(
        (a, b),
        lambda x, y: np.mean(x - y),
        paired=True,
        vectorized=False,
        n_resamples=4_000,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=3.0) and ours.high == pytest.approx(ref.high, abs=3.0)
    assert ours.low < ours.mean < ours.high


def test_the_seed_is_fixed_so_a_report_is_reproducible():
    a, b = [1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0, 1.0]
    assert paired_bootstrap(a, b) == paired_bootstrap(a, b)


@pytest.mark.parametrize(("a", "b", "message"), [([1.0], [1.0, 2.0], "same items: 1 against 2"), ([], [], "no paired")])
def test_unpaired_or_empty_scores_are_a_clear_error(a, b, message):
    with pytest.raises(ValueError, match=message):
        paired_bootstrap(a, b)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (-1.9, 3.0, "not behind"),  # lower end above -2
        (-1.9, -0.5, "not behind"),  # behind, but by less than the margin
        (-6.0, -0.5, "behind"),
        (-6.0, 4.0, "can't tell"),
        (-2.0, 1.0, "can't tell"),  # the margin itself is not above it
    ],
)
def test_verdict(low, high, expected):
    assert verdict(Interval(mean=(low + high) / 2, low=low, high=high, n=30)) == expected


def _spread_sample() -> tuple[list[float], list[float]]:
    """152 items scored 0-100 by two strategies whose paired differences have mean +1 and a wide spread (the
    papers set's shape: most items tie, the rest differ by tens of points either way)."""
    rng = np.random.default_rng(4)
    b = rng.uniform(0, 100, size=152)
    shift = rng.choice([0.0, 0.0, 40.0, -40.0], size=152)
    shift += 1.0 - shift.mean()  # the mean difference exactly +1
    return list(b + shift), list(b)


def test_the_items_to_settle_agree_with_the_bootstrap():
    a, b = _spread_sample()
    interval = paired_bootstrap(a, b)
    assert verdict(interval) == "can't tell" and interval.mean == pytest.approx(1.0)
    settle = items_to_settle(interval)
    assert settle.verdict == "not behind"
    assert settle.items == int(np.ceil((1.959964 * interval.sd / 3.0) ** 2))  # the gap: +1 to -2 points
    # the same items asked over and over (same mean, same spread): past the projected n the interval says it,
    # well short of it it cannot
    past, short = -(-settle.items // 152) + 1, max(1, settle.items // 152 // 2)
    assert verdict(paired_bootstrap(a * past, b * past)) == "not behind"
    assert verdict(paired_bootstrap(a * short, b * short)) == "can't tell"


def test_a_mean_below_the_margin_settles_toward_behind_and_a_decided_one_needs_nothing():
    interval = Interval(mean=-3.0, low=-9.0, high=3.0, n=30, sd=16.0)
    settle = items_to_settle(interval)
    assert settle.verdict == "behind" and settle.items == int(np.ceil((1.959964 * 16.0 / 3.0) ** 2))
    assert items_to_settle(Interval(mean=4.0, low=1.0, high=7.0, n=30, sd=8.0)) is None  # not behind already
    assert items_to_settle(Interval(mean=-1.0, low=-8.0, high=6.0, n=30, sd=0.0)) is None  # nothing varies


def _score(strategy: str, item: str, f1: float | None, tokens: int = 100, dataset: str = "d") -> dict:
    return {"strategy": strategy, "dataset": dataset, "id": item, "f1": f1, "em": f1, "input_tokens": tokens}


def test_items_are_paired_by_id_and_only_where_both_ran():
    scores = [
        _score("rag", "q2", 0.0),
        _score("adaptive-precise", "q1", 1.0),
        _score("rag", "q1", 0.5),
        _score("adaptive-precise", "q2", 0.5),
        _score("adaptive-precise", "q3", 1.0),  # rag did not run q3
        _score("rag", "q4", None),  # no score: left out
        _score("adaptive-precise", "q4", 1.0),
    ]
    interval = compare(scores, "adaptive-precise", "rag", "f1", 100.0)
    assert interval.n == 2 and interval.mean == pytest.approx(50.0)


def _report_scores() -> list[dict]:
    out = []
    for i in range(30):
        out += [
            _score("adaptive-precise", f"q{i}", 0.5, 1_800),
            _score("rag", f"q{i}", 0.6, 2_600),  # the default trails rag by 10 points on every item
            _score("self-route", f"q{i}", 0.4, 2_000),
        ]
    return out


def test_every_pair_and_the_verdict_against_the_best_baseline():
    scores = _report_scores()
    rows = paired_rows(scores, ["adaptive-precise", "rag", "self-route"], with_llm=True)
    pairs = {(r["a"], r["b"], r["metric"]): r for r in rows}
    assert len(pairs) == 3 * 3  # three pairs x (F1, EM, input tokens)
    assert pairs[("adaptive-precise", "rag", "F1")]["mean"] == pytest.approx(-10.0)
    assert pairs[("rag", "self-route", "input tokens")]["low"] == pytest.approx(600)
    (line,) = verdict_lines(scores, with_llm=True)
    assert line["baseline"] == "rag" and line["verdict"] == "behind"
    assert line["cost_metric"] == "input tokens" and line["cost_difference"]["mean"] == pytest.approx(-800)


def test_without_a_model_the_verdict_is_on_answer_in_evidence():
    scores = [
        {"strategy": s, "dataset": "m", "id": f"q{i}", "answer_in_evidence": hit, "evidence_tokens": tokens}
        for i in range(10)
        for s, hit, tokens in (("adaptive-precise", i % 2 == 0, 900), ("rag", True, 2_500))
    ]
    (line,) = verdict_lines(scores, with_llm=False)
    assert line["metric"] == "answer in evidence" and line["difference"]["mean"] == pytest.approx(-50.0)
    assert line["cost_metric"] == "evidence tokens" and line["cost_difference"]["high"] == pytest.approx(-1_600)


def test_the_report_prints_the_paired_section():
    scores = _report_scores()
    report = {
        "title": "t",
        "scripted": False,
        "retrieval_only": False,
        "rows": [],
        "paired": paired_rows(scores, ["adaptive-precise", "rag"], with_llm=True),
        "verdicts": verdict_lines(scores, with_llm=True),
        "run": {"planned": 0, "cached": 0, "ran": 0, "failures": [], "index_seconds": 0, "wall_seconds": 0},
        "machine": {"cpus": 1, "platform": "p", "python": "3"},
        "date": "d",
        "model": "m",
        "strategies": [],
        "datasets": {},
        "bad_lines": [],
    }
    report["run"]["concurrency"] = 1
    text = markdown(report)
    assert "## Paired differences" in text
    assert (
        "- d: default (adaptive-precise) − best baseline (rag), F1: −10.0 [−10.0, −10.0] over 30 items: **behind**"
        in text
    )
    assert "| d | adaptive-precise − rag | input tokens | 30 | −800 [−800, −800] |" in text


def test_the_evidence_tables_pair_runs_of_the_same_items(tmp_path, capsys):
    """bench/evidence_paired.py: the default of two runs (before, after) and rag, paired by item across runs."""
    import json

    from bench.evidence_paired import main

    def write(folder: str, strategies: dict[str, list[bool]], tokens: dict[str, int]) -> str:
        per_question = [
            {
                "strategy": s,
                "dataset": "musique",
                "id": f"q{i}",
                "answer_in_evidence": hit,
                "evidence_tokens": tokens[s],
            }
            for s, hits in strategies.items()
            for i, hit in enumerate(hits)
        ]
        (tmp_path / folder).mkdir()
        report = {"per_question": per_question, "datasets": {"musique": {"items": len(per_question)}}}
        (tmp_path / folder / "report.json").write_text(json.dumps(report), "utf-8")
        return str(tmp_path / folder)

    before = write(
        "b", {"adaptive-precise": [True, False] * 5, "rag": [True] * 10}, {"adaptive-precise": 900, "rag": 2500}
    )
    after = write("a", {"adaptive-precise": [True] * 10}, {"adaptive-precise": 1500})
    main(
        ["--run", f"before=c0ffee0=none={before}", "--run", f"after=c0ffee1=none={after}"]
        + ["--pair", "before-rag", "--pair", "after-rag", "--pair", "after-before"]
    )
    out = capsys.readouterr().out
    assert "| musique | default (before) | no model | c0ffee0 | 10 | 50.0 (10) | 900 |" in out
    assert "| musique | rag | no model | c0ffee0 | 10 | 100.0 (10) | 2,500 |" in out
    assert "| musique | before − rag | no model | before c0ffee0, after c0ffee1 | 10 | −50.0 [" in out
    after_rag = "| musique | after − rag | no model | before c0ffee0, after c0ffee1 | 10 | +0.0 [+0.0, +0.0] |"
    assert after_rag + " not behind | −1,000 [−1,000, −1,000] |" in out
