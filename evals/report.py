"""An evaluation run's report: built from the cached records and the items (`build_report`: the
scores of `evals.scoring`, the run's provenance and the machine), and written as `report.md`
(`evals.tables`), `report.json` and `plot.png` (`evals.plot`) by `write_report`."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longqa.contracts.settings import Settings

from .longbench import BadLine, EvalItem
from .paired import paired_rows, verdict_lines
from .plot import plot
from .runner import RunResult, item_uid, settings_fingerprint
from .scoring import answer_checkable, score, summarize
from .tables import markdown
from .titles import mode_title


def machine() -> dict[str, Any]:
    """The CPU cores this process may use, the platform and the Python version, for the report's provenance."""
    return {
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def _datasets(items: Sequence[EvalItem], files: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Each dataset's item count and the files its items came from, in the items' order."""
    datasets: dict[str, dict[str, Any]] = {}
    for item in items:
        d = datasets.setdefault(item.dataset, {"items": 0, "files": []})
        d["items"] += 1
    for name, paths in files.items():
        if name in datasets:
            datasets[name]["files"] = paths
    return datasets


def build_report(
    items: Sequence[EvalItem],
    strategies: Sequence[str],
    settings: Settings,
    result: RunResult,
    bad_lines: Sequence[BadLine] = (),
    files: dict[str, list[str]] | None = None,
    concurrency: int = 1,
    oracle: bool = False,
) -> dict[str, Any]:
    """The report of a run: labels and provenance, one row of scores per dataset x strategy (evals/scoring.py), bad
    lines and failures; what report.json holds."""
    by_uid = {item_uid(i): i for i in items}
    with_llm = settings.has_llm and not oracle  # the oracle answers nothing: evidence is all it scores
    checkable = {uid: answer_checkable(item) for uid, item in by_uid.items()}
    scores = [
        score(record, by_uid[uid], with_llm, checkable[uid])
        for (uid, _), record in result.records.items()
        if uid in by_uid
    ]
    order = {uid: n for n, uid in enumerate(by_uid)}
    scores.sort(key=lambda s: (order[f"{s['dataset']}/{s['id']}"], list(strategies).index(s["strategy"])))
    times = [r["time"] for r in result.records.values() if r.get("time")]
    datasets = _datasets(items, files or {})
    return {
        "title": mode_title(settings, oracle),
        "oracle": oracle,
        "oracle_skipped": result.oracle_skipped,
        "scripted": settings.is_scripted,
        "retrieval_only": not with_llm,
        "quality_measurement": with_llm and not settings.is_scripted,
        "model": settings.model,
        "base_url": settings.base_url,
        "context_window": result.window,
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine(),
        "strategies": list(strategies),
        "settings": settings_fingerprint(settings),
        "datasets": datasets,
        "bad_lines": [str(b) for b in bad_lines],
        "run": {
            "planned": result.planned,
            "cached": result.cached,
            "ran": result.ran,
            "failures": result.failures,
            "records_from": min(times, default=None),
            "records_to": max(times, default=None),
            "index_seconds": result.index_seconds,
            "wall_seconds": result.wall_seconds,
            "concurrency": concurrency,
            "corrupt_cache_lines": result.corrupt_cache_lines,
        },
        "rows": summarize(scores, strategies),
        "paired": paired_rows(scores, strategies, with_llm),
        "verdicts": verdict_lines(scores, with_llm),
        "per_question": scores,
    }


def write_report(report: dict[str, Any], out_dir: str | Path, make_plot: bool = True) -> dict[str, Path]:
    """report.md, report.json and plot.png in `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "report.md", "json": out / "report.json"}
    if make_plot:
        note = plot(report, out / "plot.png")
        if note is None:
            report["plot"] = str(out / "plot.png")
            paths["plot"] = out / "plot.png"
        else:
            report["plot_note"] = note
    paths["markdown"].write_text(markdown(report), "utf-8")
    paths["json"].write_text(json.dumps(report, indent=1, default=str), "utf-8")
    return paths
