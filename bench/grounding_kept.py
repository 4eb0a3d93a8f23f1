"""Answerable questions kept and planted unanswerable ones declined by the default, before and after a change to the
grounding check, from `longqa eval` runs of the same items with a real model (issue #52: numbers by value).

Each run is named NAME=DIR: DIR holds a results.jsonl of the default (adaptive-precise) and a report.json naming the
data file; an item is unanswerable where the data file plants it so (`longqa convert ... --unanswerable`) or where its
gold answers are all a decline (a paper's question its authors marked "Unanswerable"): declining it is right. Rows say
the model and the commit(s) the runs' records were made at (evals/provenance.py), n, answerable kept (not declined) and
unanswerable declined; then every item whose outcome differs between the runs, with the reply the check judged and
how (`grounding_method`), so a reader sees which replies the change kept or lost.

    python bench/grounding_kept.py --run before=evals/runs/r7_0.5b_tatqa30_n30_before \\
        --run after=evals/runs/r7_0.5b_tatqa30_n30
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.contracts.verdicts import is_unanswerable  # noqa: E402
from longqa.evals.metrics import f1_score  # noqa: E402
from longqa.llm.non_answer import YES_NO_REPLY  # noqa: E402

DEFAULT = "adaptive-precise"


def _gold(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(dataset, id) -> the data file's item (its answers and whether it was planted unanswerable)."""
    items = {}
    for name, info in report["datasets"].items():
        for file in info["files"]:
            for line in Path(file).read_text("utf-8").splitlines():
                if line.strip():
                    item = json.loads(line)
                    items[(name, str(item.get("_id") or item.get("id")))] = item
    return items


def load(spec: str) -> tuple[str, list[dict[str, Any]]]:
    """A run's name and its default's records (the last per item), each with `planted` (unanswerable: planted, or by
    its gold), `kind` (how it is unanswerable, if it is) and `question`."""
    name, _, folder = spec.partition("=")
    if not (Path(folder) / "report.json").is_file() or not (Path(folder) / "results.jsonl").is_file():
        raise SystemExit(
            f"--run {spec}: expected NAME=DIR, DIR a longqa eval output folder (report.json, results.jsonl)"
        )
    report = json.loads((Path(folder) / "report.json").read_text("utf-8"))
    gold = _gold(report)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for line in (Path(folder) / "results.jsonl").read_text("utf-8").splitlines():
        record = json.loads(line)
        if record.get("strategy") == DEFAULT:
            latest[(record["dataset"], record["id"])] = record
    wanted = {(q["dataset"], q["id"]) for q in report["per_question"] if q["strategy"] == DEFAULT}
    out = []
    for key, record in latest.items():
        if key in wanted and key in gold:
            item = gold[key]
            golds = item.get("answers") or []
            kind = (
                "planted unanswerable"
                if item.get("unanswerable")
                else "unanswerable by its gold"
                if golds and all(map(is_unanswerable, golds))
                else "answerable"
            )
            planted = kind != "answerable"
            out.append(record | {"planted": planted, "kind": kind, "question": item.get("input", ""), "golds": golds})
    return name, out


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} ({part}/{whole})" if whole else "–"


def summary_rows(runs: dict[str, list[dict[str, Any]]]) -> list[list[Any]]:
    """One row per run and set: model, commits, n, answerable kept % (answered: a run that ended in an error kept
    nothing), right replies declined, answerable runs ended in an error, planted declined %."""
    rows = []
    for name, records in runs.items():
        for dataset in dict.fromkeys(r["dataset"] for r in records):
            mine = [r for r in records if r["dataset"] == dataset]
            answerable = [r for r in mine if not r["planted"]]
            planted = [r for r in mine if r["planted"]]
            kept = sum(r["status"] == "answered" for r in answerable)
            errors = sum(r["status"] == "error" for r in answerable)
            right = sum(_declined_right(r) for r in answerable)
            declined = sum(r["status"] == "unanswerable" for r in planted)
            models = ", ".join(dict.fromkeys(str(r.get("model")) for r in mine))
            commits = ", ".join(dict.fromkeys(str(r.get("commit") or "unrecorded") for r in mine))
            rows.append([dataset, name, models, commits, len(mine), _pct(kept, len(answerable))])
            rows[-1] += [right if answerable else "–", errors if answerable else "–", _pct(declined, len(planted))]
    return rows


RIGHT_F1 = 0.5  # a reply this close to a gold answer (token F1) is a right answer


def right_reply(reply: str, golds: list[str]) -> bool:
    """A right reply: F1 >= RIGHT_F1 to a gold answer, or a gold "yes"/"no" that the reply opens with ("No, Arabic is
    not one of them" for "No", which token F1 scores 0.18)."""
    opens = YES_NO_REPLY.match(reply)
    if opens and any(g.strip().lower() == opens.group(1).lower() for g in golds):
        return True
    return f1_score(reply, golds) >= RIGHT_F1


def _declined_right(record: dict[str, Any]) -> bool:
    """An answerable question declined although the reply the check judged was right (`right_reply`)."""
    reply = record.get("judged_answer") or ""
    return record["status"] == "unanswerable" and bool(reply) and right_reply(reply, record["golds"])


def _outcome(record: dict[str, Any]) -> str:
    verdict = record.get("grounding") or "not checked"
    method = record.get("grounding_method")
    return f"{record['status']}: {verdict}" + (f" ({method})" if method else "")


def changed_rows(runs: dict[str, list[dict[str, Any]]], a: str, b: str) -> list[list[Any]]:
    """The items whose status differs between runs a and b: the question, the reply judged in each and how."""
    before = {(r["dataset"], r["id"]): r for r in runs[a]}
    rows = []
    for r in runs[b]:
        other = before.get((r["dataset"], r["id"]))
        if other is None or other["status"] == r["status"]:
            continue
        planted = r["kind"]
        question = r["question"] if len(r["question"]) <= 90 else r["question"][:87] + "..."
        rows.append(
            [
                r["dataset"],
                planted,
                question.replace("|", "/"),
                str(other.get("judged_answer") or other.get("answer") or "").replace("|", "/")[:60],
                _outcome(other),
                str(r.get("judged_answer") or r.get("answer") or "").replace("|", "/")[:60],
                _outcome(r),
            ]
        )
    return rows


def asked_again_rows(records: list[dict[str, Any]]) -> list[list[Any]]:
    """The items where the generator was asked again (`reasked`, the reask operator): the earlier reply, the one
    after it, how it ended and its F1 against the gold answers (a planted item has none)."""
    rows = []
    for r in records:
        if not r.get("reasked"):
            continue
        after = str(r.get("judged_answer") or r.get("answer") or "")
        question = r["question"] if len(r["question"]) <= 90 else r["question"][:87] + "..."
        f1 = "–" if r["planted"] else f"{100 * f1_score(r.get('answer') or '', r['golds']):.0f}"
        kind = r["kind"]
        rows.append([r["dataset"], kind, question.replace("|", "/"), r["reasked"].replace("|", "/")[:60]])
        rows[-1] += [after.replace("|", "/")[:60], _outcome(r), f1]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="NAME=DIR, a longqa eval output folder")
    parser.add_argument("--pair", action="append", default=[], help="A-B: list the items whose outcome differs")
    parser.add_argument("--asked-again", action="append", default=[], help="NAME: list the run's items asked again")
    args = parser.parse_args(argv)
    runs = dict(load(spec) for spec in args.run)
    head = ["set", "run", "model", "commit", "n", "answerable kept % (n)", "right replies declined"]
    head += ["ended in an error", "unanswerable declined % (n)"]
    print(md_table(head, summary_rows(runs)))
    for pair in args.pair:
        a, b = pair.split("-", 1)
        rows = changed_rows(runs, a, b)
        print(f"\nItems whose outcome differs, {a} → {b}: {len(rows)}\n")
        if rows:
            head = ["set", "item", "question", f"reply judged ({a})", f"outcome ({a})", f"reply judged ({b})"]
            print(md_table([*head, f"outcome ({b})"], rows))
    for name in args.asked_again:
        rows = asked_again_rows(runs[name])
        print(f"\nItems where the generator was asked again, {name}: {len(rows)}\n")
        if rows:
            head = ["set", "item", "question", "earlier reply", "reply after", "outcome", "F1 (final answer)"]
            print(md_table(head, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
