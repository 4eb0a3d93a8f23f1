"""The answers table and the paired verdicts of several `longqa eval` runs, one row per run, set and strategy (the
default in bold), as evals/README prints them: model, commit(s) and n from the records, F1, EM, tokens, calls, the
share declined, errors; then each run's verdict on the default against the best fixed baseline on the same items
(mean paired difference with its bootstrap 95% interval, `evals/paired.py`), read from its report.json.

    python bench/eval_rows.py --run runs/r15_0.5b_musique_confirm70_n70 --run runs/r15_0.5b_papers60_n60

`--versus A=DIR_A,B=DIR_B` pairs two runs of the same items made with other settings (the default at a larger question
budget against the default, or against `rag`: DIR@rag): A − B in F1 and input tokens, the same bootstrap interval.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals.paired import DEFAULT, compare, items_to_settle, verdict  # noqa: E402
from longqa.evals.paired import verdict_lines as paired_verdicts  # noqa: E402
from longqa.evals.tables import interval_text, settle_text, verdict_line  # noqa: E402

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
    """The verdicts on the default against the best fixed baseline, one line each, its model named: computed again
    from the report's per-question scores by this code (so a report written before a verdict said more reads as a
    new one), else the report's own."""
    scores = report.get("per_question")
    verdicts = paired_verdicts(scores, with_llm=not report.get("retrieval_only")) if scores else report.get("verdicts")
    return [f"- {report['model']}: {verdict_line(v)[2:]}" for v in verdicts or []]


def versus_line(spec: str) -> str:
    """'A=DIR_A,B=DIR_B': one strategy of run A against one of run B on the items both ran, in F1 and input tokens;
    each DIR may end in @STRATEGY (default: the default strategy)."""
    runs = [part.split("=", 1) for part in spec.split(",")]
    if len(runs) != 2 or any(len(r) != 2 for r in runs):
        raise SystemExit(f"--versus {spec}: expected A=DIR_A,B=DIR_B")
    scores, models = [], set()
    for name, where in runs:
        folder, _, strategy = where.partition("@")
        report = report_of(folder)
        models.add(report["model"])
        scores += [q | {"strategy": name} for q in report["per_question"] if q["strategy"] == (strategy or DEFAULT)]
    (a, _), (b, _) = runs
    f1, tokens = compare(scores, a, b, "f1", 100.0), compare(scores, a, b, "input_tokens", 1.0)
    if f1 is None or tokens is None:
        raise SystemExit(f"--versus {spec}: the two runs share no item")
    dataset = ", ".join(dict.fromkeys(q["dataset"] for q in scores))
    line = f"- {', '.join(sorted(models))}: {dataset}: {a} − {b}, F1: {interval_text(f1.model_dump(), 'F1')} over "
    settle = items_to_settle(f1)
    line += f"{f1.n} items: **{verdict(f1)}**{settle_text(settle.model_dump() if settle else None)}"
    return line + f"; input tokens {interval_text(tokens.model_dump(), 'tokens')}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", default=[], help="a longqa eval output folder")
    parser.add_argument(
        "--versus", action="append", default=[], help="A=DIR_A[@STRATEGY],B=DIR_B[@STRATEGY]: two runs, paired"
    )
    args = parser.parse_args(argv)
    if not args.run and not args.versus:
        parser.error("give --run or --versus")
    reports = [report_of(folder) for folder in args.run]
    if reports:
        print(md_table(HEAD, [row for report in reports for row in rows_of(report)]))
    lines = [line for report in reports for line in verdict_lines(report)]
    lines += [versus_line(spec) for spec in args.versus]
    if lines:
        print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
