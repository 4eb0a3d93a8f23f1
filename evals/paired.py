"""Paired differences between strategies run on the same items: for each pair, the mean difference of a
per-item score (F1 and EM with a model; answer in evidence without one; input or evidence tokens beside them)
with a paired bootstrap 95% interval, and the verdict the report draws from it for "default >= best baseline".

Paired: the items are resampled with replacement, the same resample for both strategies, so what varies is
which items were asked, not how each strategy did on an item (`paired_bootstrap`). The seed is fixed, so a
report is reproducible. With n = 30 one item moves a row by 3-10 points; the interval says how far.

The verdict (`verdict`) on default - best baseline, in points: "not behind" when the interval's lower end is
above -`MARGIN` (the issue's target: a lower end above -2 F1 points), "behind" when its upper end is below 0
(and it is not "not behind"), else "can't tell". A "can't tell" says how many items would settle it if the mean
and the spread held (`items_to_settle`): the n at which the normal interval, mean +- z * sd / sqrt(n), clears the
nearer line; a projection for planning a run, not a result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

RESAMPLES = 2_000
SEED = 0
LEVEL = 0.95
MARGIN = 2.0  # points: "not behind" when the interval's lower end is above -MARGIN
DEFAULT = "adaptive-precise"
ADAPTIVE = ("adaptive", "adaptive-precise")

# (per-question key, name in the report, scale to points or tokens); the first of each list judges the verdict,
# the last is its cost
WITH_MODEL = [("f1", "F1", 100.0), ("em", "EM", 100.0), ("input_tokens", "input tokens", 1.0)]
WITHOUT_MODEL = [("answer_in_evidence", "answer in evidence", 100.0), ("evidence_tokens", "evidence tokens", 1.0)]

Verdict = Literal["not behind", "behind", "can't tell"]


class Interval(BaseModel):
    """The mean paired difference a - b over `n` items and its bootstrap interval (same units as the scores)."""

    mean: float
    low: float
    high: float
    n: int
    sd: float = 0.0  # the per-item differences' sample standard deviation (0 with one item)


class Settling(BaseModel):
    """How many items would turn a "can't tell" into `verdict`, were the mean and spread what they are now."""

    items: int
    verdict: Verdict


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Interval:
    """Mean of a - b over paired items and its percentile bootstrap interval: each resample draws n items with
    replacement and both strategies' scores of those items. Hand-written in numpy (a dependency already) because
    scipy.stats.bootstrap's default BCa interval is NaN when every difference is the same (a constant shift)."""
    if len(a) != len(b):
        raise ValueError(f"paired scores need the same items: {len(a)} against {len(b)}")
    if not a:
        raise ValueError("no paired items to compare")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].mean(axis=1)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    sd = float(diffs.std(ddof=1)) if len(diffs) > 1 else 0.0
    return Interval(mean=float(diffs.mean()), low=float(low), high=float(high), n=len(diffs), sd=sd)


def verdict(interval: Interval, margin: float = MARGIN) -> Verdict:
    """ "not behind" (lower end above -margin), "behind" (upper end below 0), else "can't tell"."""
    if interval.low > -margin:
        return "not behind"
    return "behind" if interval.high < 0 else "can't tell"


def items_to_settle(interval: Interval, margin: float = MARGIN, level: float = LEVEL) -> Settling | None:
    """For a "can't tell": the fewest items at which mean +- z * sd / sqrt(n) would clear -margin from above ("not
    behind") or 0 from below ("behind"), whichever comes first, if this mean and spread held; None where the
    verdict is decided or nothing varies. A normal approximation of the bootstrap interval, for planning."""
    if verdict(interval, margin) != "can't tell" or interval.sd == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    gaps = [(interval.mean + margin, "not behind"), (-interval.mean, "behind")]
    gap, toward = max(gaps, key=lambda g: g[0])  # the wider gap is cleared with the fewest items
    if gap <= 0:
        return None
    return Settling(items=max(interval.n + 1, math.ceil((z * interval.sd / gap) ** 2)), verdict=toward)


def _value(score: dict[str, Any], key: str, scale: float) -> float | None:
    value = score.get(key)
    return None if value is None else float(value) * scale


def compare(scores: list[dict[str, Any]], a: str, b: str, key: str, scale: float) -> Interval | None:
    """a - b on `key` over the items both ran with a score (None when they share none)."""
    by_item = {(s["strategy"], s["dataset"], s["id"]): _value(s, key, scale) for s in scores}
    pairs = [
        (by_item[(a, d, i)], by_item[(b, d, i)])
        for (s, d, i) in by_item
        if s == a and (b, d, i) in by_item and by_item[(a, d, i)] is not None and by_item[(b, d, i)] is not None
    ]
    if not pairs:
        return None
    return paired_bootstrap([x for x, _ in pairs], [y for _, y in pairs])


def _groups(scores: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each dataset's scores, then all of them when there are several datasets."""
    datasets = list(dict.fromkeys(s["dataset"] for s in scores))
    groups = [(d, [s for s in scores if s["dataset"] == d]) for d in datasets]
    return groups + ([("all", scores)] if len(datasets) > 1 else [])


def paired_rows(scores: list[dict[str, Any]], strategies: Sequence[str], with_llm: bool) -> list[dict[str, Any]]:
    """One row per dataset x pair of strategies x metric: a - b with its interval (report.json's "paired")."""
    metrics = WITH_MODEL if with_llm else WITHOUT_MODEL
    rows = []
    for dataset, group in _groups(scores):
        ran = [s for s in strategies if any(r["strategy"] == s for r in group)]
        for a, b in combinations(ran, 2):
            for key, name, scale in metrics:
                interval = compare(group, a, b, key, scale)
                if interval is not None:
                    rows.append({"dataset": dataset, "a": a, "b": b, "metric": name} | interval.model_dump())
    return rows


def _best_baseline(group: list[dict[str, Any]], key: str, scale: float, default: str) -> tuple[str, Interval] | None:
    """The fixed strategy with the highest mean on the items it shares with the default, and default - it."""
    baselines = dict.fromkeys(s["strategy"] for s in group if s["strategy"] not in ADAPTIVE)
    found = [(b, compare(group, default, b, key, scale)) for b in baselines]
    found = [(b, i) for b, i in found if i is not None]
    # the best baseline is the one the default trails most (smallest mean of default - baseline)
    return min(found, key=lambda bi: bi[1].mean) if found else None


def verdict_lines(scores: list[dict[str, Any]], with_llm: bool, default: str = DEFAULT) -> list[dict[str, Any]]:
    """Per dataset: default - the best fixed baseline on the judging metric, its interval and the verdict, with the
    cost metric's paired difference beside it (report.json's "verdicts")."""
    metrics = WITH_MODEL if with_llm else WITHOUT_MODEL
    (key, name, scale), (cost_key, cost_name, cost_scale) = metrics[0], metrics[-1]
    out = []
    for dataset, group in _groups(scores):
        best = _best_baseline(group, key, scale, default)
        if best is None:
            continue
        baseline, interval = best
        cost = compare(group, default, baseline, cost_key, cost_scale)
        settle = items_to_settle(interval)
        out.append(
            {
                "dataset": dataset,
                "default": default,
                "baseline": baseline,
                "metric": name,
                "verdict": verdict(interval),
                "difference": interval.model_dump(),
                "cost_metric": cost_name,
                "cost_difference": cost.model_dump() if cost else None,
                "settled_by": settle.model_dump() if settle else None,
            }
        )
    return out
