"""The answers table and the paired verdicts of several `longqa eval` runs, one row per run, set and strategy (the
default in bold), as evals/README prints them: model, commit(s) and n from the records, F1, EM, tokens, calls, the
share declined, errors; then each run's verdict on the default against the best fixed baseline on the same items
(mean paired difference with its bootstrap 95% interval, `evals/paired.py`), read from its report.json.

    python bench/eval_rows.py --run runs/r15_0.5b_musique_confirm70_n70 --run runs/r15_0.5b_papers60_n60
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals.tables import verdict_line  # noqa: E402

DEFAULT = "adaptive-precise"
HEAD = [
    "set",
    "strategy",
    "model",
    "commit",
    "n",
    "F1",
    "EM",
    "input tok",
    "output tok",
    "calls",
    "declined %",
    "errors",
]


def report_of(folder: str) -> dict[str, Any]:
    """A run's report.json, or a clear exit naming what is missing."""
    path = Path(folder) / "report.json"
    if not path.is_file():
        raise SystemExit(f"--run {folder}: expected a longqa eval output folder (no report.json in it)")
    return json.loads(path.read_text("utf-8"))


def rows_of(report: dict[str, Any]) -> list[list[Any]]:
    """One row per set and strategy of a report (its 'all' rows left out)."""
    rows = []
    for row in report["rows"]:
        if row["dataset"] == "all":
            continue
        label = "**default**" if row["strategy"] == DEFAULT else row["strategy"]
        rows.append([row["dataset"], label, ", ".join(row["models"]), ", ".join(row["commits"]), row["n"]])
        rows[-1] += [f"{100 * row['f1']:.1f}", f"{100 * row['em']:.1f}", f"{row['input_tokens']:,.0f}"]
        rows[-1] += [f"{row['output_tokens']:,.0f}", f"{row['calls']:.1f}", f"{row['declined_pct']:.1f}", row["errors"]]
    return rows


def verdict_lines(report: dict[str, Any]) -> list[str]:
    """The report's verdicts on the default against the best fixed baseline, one line each, its model named."""
    return [f"- {report['model']}: {verdict_line(v)[2:]}" for v in report.get("verdicts") or []]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="a longqa eval output folder")
    args = parser.parse_args(argv)
    reports = [report_of(folder) for folder in args.run]
    print(md_table(HEAD, [row for report in reports for row in rows_of(report)]))
    lines = [line for report in reports for line in verdict_lines(report)]
    if lines:
        print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
