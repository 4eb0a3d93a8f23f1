"""Paired answer-in-evidence of the default against `rag`, before and after a plan change, from `longqa eval` runs
(their report.json): the tables of evals/README's "Evidence per hop" section, printed by the code that reads the runs.

Each run is named NAME=COMMIT=MODEL=DIR[=SET]: DIR holds a report.json (one set, any strategies); NAME labels its
default (adaptive-precise) in the tables, its `rag` rows keep the name rag; SET names the items (default: the
report's dataset), so runs of the same items are paired and disjoint item sets (design, confirmation) are kept
apart. Rows say the model ("no model" for `--model none`; "scripted" when the offline test model drove the route:
its replies are not answers, only the passages its calls read are scored), the commit the run's code was at, and n.
Differences are paired by item with the bootstrap 95% interval of evals/paired.py; answer in evidence in points,
evidence tokens per question.

    python bench/evidence_paired.py --run before=f1e3943=none=evals/runs/b48_before_none_musique_d50 \\
        --run after=abc1234=none=evals/runs/b48_after_none_musique_d50 --pair after-rag --pair after-before
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals.paired import DEFAULT, compare, verdict  # noqa: E402

MODELS = {"none": "no model", "scripted": "scripted (route only)"}


def load(spec: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """A run spec's labels and its per-question scores, the default renamed to the run's name."""
    name, commit, model, folder, *label = spec.split("=")
    report = json.loads((Path(folder) / "report.json").read_text("utf-8"))
    dataset = label[0] if label else next(iter(report["datasets"]), "?")
    scores = [
        q | {"strategy": name if q["strategy"] == DEFAULT else q["strategy"], "dataset": dataset}
        for q in report["per_question"]
    ]
    return {"name": name, "commit": commit, "model": MODELS.get(model, model), "dataset": dataset}, scores


def _pct(values: list[Any]) -> tuple[float | None, int]:
    kept = [bool(v) for v in values if v is not None]
    return (100.0 * sum(kept) / len(kept) if kept else None), len(kept)


def summary_rows(runs: list[tuple[dict[str, str], list[dict[str, Any]]]]) -> list[list[str]]:
    """One row per set x model x strategy (runs of one set pooled): model, commit, n, answer in evidence % (scored),
    evidence tokens."""
    groups: dict[tuple[str, str, str], tuple[list[dict[str, Any]], dict[str, None]]] = {}
    for labels, scores in runs:
        for s in scores:
            name = f"default ({s['strategy']})" if s["strategy"] == labels["name"] else s["strategy"]
            found, commits = groups.setdefault((labels["dataset"], name, labels["model"]), ([], {}))
            found.append(s)
            commits[labels["commit"]] = None
    rows = []
    for (dataset, name, model), (mine, commits) in groups.items():
        pct, scored = _pct([s["answer_in_evidence"] for s in mine])
        tokens = sum(s["evidence_tokens"] for s in mine) / len(mine)
        rows.append(
            [dataset, name, model, ", ".join(commits), str(len(mine))]
            + ["–" if pct is None else f"{pct:.1f} ({scored})", f"{tokens:,.0f}"]
        )
    return rows


def _signed(x: float, digits: int) -> str:
    return f"{x:+,.{digits}f}".replace("-", "−")


def pair_rows(runs: list[tuple[dict[str, str], list[dict[str, Any]]]], pairs: list[str]) -> list[list[str]]:
    """One row per set x model x pair a-b: the paired difference of answer in evidence and of evidence tokens."""
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    commits: dict[tuple[str, str], dict[str, None]] = {}
    for labels, scores in runs:
        key = (labels["dataset"], labels["model"])
        by_key.setdefault(key, []).extend(scores)
        commits.setdefault(key, {})[f"{labels['name']} {labels['commit']}"] = None
    rows = []
    for (dataset, model), scores in by_key.items():
        for pair in pairs:
            a, b = pair.split("-", 1)
            hit = compare(scores, a, b, "answer_in_evidence", 100.0)
            tokens = compare(scores, a, b, "evidence_tokens", 1.0)
            if hit is None or tokens is None:
                continue
            rows.append(
                [dataset, f"{a} − {b}", model, ", ".join(commits[(dataset, model)]), str(hit.n)]
                + [f"{_signed(hit.mean, 1)} [{_signed(hit.low, 1)}, {_signed(hit.high, 1)}]", verdict(hit)]
                + [f"{_signed(tokens.mean, 0)} [{_signed(tokens.low, 0)}, {_signed(tokens.high, 0)}]"]
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the two tables: each run's rows, then the paired differences asked for."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", required=True, metavar="NAME=COMMIT=MODEL=DIR[=SET]")
    p.add_argument("--pair", action="append", default=[], metavar="A-B", help="e.g. after-rag (a run name or rag)")
    args = p.parse_args(argv)
    runs = [load(spec) for spec in args.run]
    head = ["set", "strategy", "model", "commit", "n", "answer in evidence % (scored)", "evidence tokens"]
    print(md_table(head, summary_rows(runs)) + "\n")
    head = ["set", "a − b", "model", "commits", "n scored", "answer in evidence, points [95% CI]", "verdict"]
    print(md_table(head + ["evidence tokens [95% CI]"], pair_rows(runs, args.pair)))


if __name__ == "__main__":
    main()
