"""Scores, tables and the cost/score plot of an evaluation run.

Every number is computed here from the cached records and the items (gold answers, supporting
texts, contexts), so a report is never stale with respect to its records.

Per question (item x strategy):
  F1, EM        LongBench's qa_f1_score / SQuAD exact match of the answer, best over the gold
                answers (`evals.metrics`); a run without an answer (error, unanswerable) scores its
                text ("unanswerable") or 0
  calls, input/output tokens, cost = input + 4 x output (OkraLong's weighting), from the run's usage
  seconds       wall time of the graph run, embedding the question included (indexes built
                beforehand; under --concurrency > 1 runs share the CPU)
Retrieval-only (no LLM in the scoring; computable with no model at all):
  answer in evidence   a normalised gold answer occurs inside one passage the generator was shown
                       (the filter's kept passages; the long-context spans when the run read the
                       long context); questions whose answers are yes/no, or occur nowhere in the
                       document (computed numbers, free-form references), are left out
  all supporting       every gold supporting text (HotpotQA sentences, MuSiQue paragraphs, TAT-QA
                       paragraphs) occurs, normalised, inside one passage; items without any are left out
  support recall       the mean fraction of supporting texts found
  evidence tokens / words   size of those passages (token counter of the index)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longqa.contracts.settings import Settings

from .longbench import BadLine, EvalItem
from .metrics import contains_answer, exact_match, f1_score, is_yes_no, units_found
from .oracle import ORACLE_TITLE
from .runner import RunResult, item_uid, passage_texts, settings_fingerprint

SCRIPTED_TITLE = "scripted model — not a quality measurement"
RETRIEVAL_TITLE = "retrieval-only (no LLM) — evidence coverage, not answer quality"
FALLBACK_STRATEGIES = ("self-route", "adaptive-precise")
ALL = "all"


def mode_title(settings: Settings, oracle: bool = False) -> str:
    if oracle:
        return f"longqa evaluation — {ORACLE_TITLE}"
    if settings.is_scripted:
        return f"longqa evaluation — {SCRIPTED_TITLE}"
    if not settings.has_llm:
        return f"longqa evaluation — {RETRIEVAL_TITLE}"
    return f"longqa evaluation — model {settings.model}"


def machine() -> dict[str, Any]:
    return {
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


# -- per question -------------------------------------------------------------------------------------


def answer_checkable(item: EvalItem) -> bool:
    """Whether containment of a gold answer can say anything about retrieval: not for yes/no answers,
    nor for answers that do not occur in the document at all (computed numbers, free-form answers)."""
    return not is_yes_no(item.answers) and contains_answer(item.context, item.answers)


def score(record: dict[str, Any], item: EvalItem, with_llm: bool, checkable: bool | None = None) -> dict[str, Any]:
    passages = passage_texts(record.get("passages") or [], item.context)
    checkable = answer_checkable(item) if checkable is None else checkable
    answer_in = any(contains_answer(p, item.answers) for p in passages) if checkable else None
    found = units_found(passages, item.supporting) if item.supporting else []
    prediction = record.get("answer") or ""
    totals = record.get("totals") or {}
    return {
        "id": item.id,
        "dataset": item.dataset,
        "strategy": record["strategy"],
        "status": record.get("status"),
        "f1": f1_score(prediction, item.answers) if with_llm else None,
        "em": exact_match(prediction, item.answers) if with_llm else None,
        "answer_in_evidence": answer_in,
        "all_supporting": all(found) if found else None,
        "support_recall": sum(found) / len(found) if found else None,
        "evidence_tokens": record.get("evidence_tokens", 0),
        "evidence_words": record.get("evidence_words", 0),
        "calls": totals.get("calls", 0),
        "input_tokens": totals.get("input_tokens", 0),
        "output_tokens": totals.get("output_tokens", 0),
        "cost": totals.get("cost", 0),
        "estimated_usage": bool(totals.get("estimated")),
        "seconds": record.get("seconds", 0.0),
        "long_context": bool(record.get("long_context")),
        "workflow": record.get("workflow"),
        "question_type": record.get("question_type"),
        "label": item.extra.get("label") or None,
    }


def _mean(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _rate(values: list[bool | None]) -> tuple[float | None, int]:
    values = [v for v in values if v is not None]
    return (100.0 * sum(values) / len(values) if values else None), len(values)


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    if not values:
        return None
    values = sorted(values)
    pos = (len(values) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summarize(scores: list[dict[str, Any]], strategies: Sequence[str]) -> list[dict[str, Any]]:
    """One row per dataset x strategy (and per strategy over all datasets when there are several)."""
    datasets = list(dict.fromkeys(s["dataset"] for s in scores))
    groups = [(d, [s for s in scores if s["dataset"] == d]) for d in datasets]
    if len(datasets) > 1:
        groups.append((ALL, scores))
    rows = []
    for dataset, group in groups:
        by_strategy = defaultdict(list)
        for s in group:
            by_strategy[s["strategy"]].append(s)
        lc = {(s["dataset"], s["id"]): s for s in by_strategy.get("lc", [])}
        for strategy in strategies:
            runs = by_strategy.get(strategy, [])
            if not runs:
                continue
            n = len(runs)
            answer_in, n_answer = _rate([r["answer_in_evidence"] for r in runs])
            support, n_support = _rate([r["all_supporting"] for r in runs])
            both = [(r, lc[(r["dataset"], r["id"])]) for r in runs if (r["dataset"], r["id"]) in lc]
            lc_tokens = sum(b["input_tokens"] + b["output_tokens"] for _, b in both)
            lc_evidence = sum(b["evidence_tokens"] for _, b in both)
            seconds = [r["seconds"] for r in runs]
            types = Counter(r["question_type"] for r in runs if r["question_type"])
            labelled = [r for r in runs if r["question_type"] and r["label"]]
            fallback_runs = (
                [r for r in runs if r["status"] in ("answered", "unanswerable")]
                if strategy in FALLBACK_STRATEGIES
                else []
            )
            rows.append(
                {
                    "dataset": dataset,
                    "strategy": strategy,
                    "n": n,
                    "errors": sum(r["status"] == "error" for r in runs),
                    "f1": _mean([r["f1"] for r in runs]),
                    "em": _mean([r["em"] for r in runs]),
                    "calls": _mean([r["calls"] for r in runs]),
                    "input_tokens": _mean([r["input_tokens"] for r in runs]),
                    "output_tokens": _mean([r["output_tokens"] for r in runs]),
                    "cost": _mean([r["cost"] for r in runs]),
                    "estimated_usage": any(r["estimated_usage"] for r in runs),
                    "tokens_pct_of_lc": (
                        100.0 * sum(r["input_tokens"] + r["output_tokens"] for r, _ in both) / lc_tokens
                        if lc_tokens
                        else None
                    ),
                    "p50_s": percentile(seconds, 50),
                    "p95_s": percentile(seconds, 95),
                    "answer_in_evidence_pct": answer_in,
                    "answer_in_evidence_n": n_answer,
                    "all_supporting_pct": support,
                    "all_supporting_n": n_support,
                    "support_recall": _mean([r["support_recall"] for r in runs]),
                    "evidence_tokens": _mean([r["evidence_tokens"] for r in runs]),
                    "evidence_words": _mean([r["evidence_words"] for r in runs]),
                    "evidence_pct_of_lc": (
                        100.0 * sum(r["evidence_tokens"] for r, _ in both) / lc_evidence if lc_evidence else None
                    ),
                    "long_context_pct": 100.0 * sum(r["long_context"] for r in runs) / n,
                    "answered_from_retrieval_pct": (
                        100.0 * sum(not r["long_context"] for r in fallback_runs) / len(fallback_runs)
                        if fallback_runs
                        else None
                    ),
                    "workflows": dict(Counter(r["workflow"] or "?" for r in runs).most_common()),
                    "question_types": dict(types.most_common()),
                    "label_agreement_pct": (
                        100.0 * sum(r["question_type"] == r["label"] for r in labelled) / len(labelled)
                        if labelled
                        else None
                    ),
                }
            )
    return rows


# -- markdown -----------------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 1, scale: float = 1.0) -> str:
    return "–" if value is None else f"{value * scale:,.{digits}f}"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "–"


def markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    with_llm = not report["retrieval_only"]
    out = [f"# {report['title']}", ""]
    if report.get("oracle"):
        out += [
            "**Decomposition oracle: the gold decomposition (MuSiQue) or the compared entities (HotpotQA "
            "comparison) supply the split and step-wise queries, and a stand-in replies for every other "
            "operator. It measures what those workflows can retrieve when their queries are right — an upper "
            f"bound, NOT a quality number. {report.get('oracle_skipped', 0)} item(s) without a gold "
            "decomposition were skipped.**",
            "",
        ]
    if report["scripted"]:
        out += [
            "**The model is the offline scripted test model (`llm/scripted.py`), not an LLM: these numbers "
            "exercise the pipeline and are NOT a quality measurement.**",
            "",
        ]
    if report["retrieval_only"] and not report.get("oracle"):
        out += [
            "**Retrieval-only: no LLM was called (`--model none`). There are no answers, so no F1/EM; the "
            "scores below say whether the evidence a generator would be shown contains a gold answer and "
            "the supporting facts. They are not answer quality.**",
            "",
        ]
    run = report["run"]
    m = report["machine"]
    out += [
        f"- report written {report['date']}; machine: {m['cpus']} CPU cores, {m['platform']}, Python {m['python']}",
        f"- model: {report['model'] or 'none (retrieval-only)'}"
        + (f" at {report['base_url']}" if report.get("base_url") else "")
        + (f"; context window {report['context_window']:,} tokens" if report.get("context_window") else ""),
        f"- strategies: {', '.join(report['strategies'])}",
        "- data: "
        + "; ".join(
            f"{name}: {d['items']} items from {', '.join(d['files'])}" for name, d in report["datasets"].items()
        ),
        f"- runs: {run['planned']} planned, {run['cached']} from the cache, {run['ran']} run now, "
        f"{len(run['failures'])} failed in the harness; this invocation: indexing {run['index_seconds']:.0f} s "
        f"(not in latency), wall {run['wall_seconds']:.0f} s at concurrency {run['concurrency']}"
        + (
            f"; the records were made from {run['records_from']} to {run['records_to']}"
            if run.get("records_from")
            else ""
        ),
    ]
    if report["bad_lines"]:
        out.append(f"- bad dataset lines skipped: {len(report['bad_lines'])} (listed at the end)")
    out.append("")

    multi = len({r["dataset"] for r in rows}) > 1
    lead = ["dataset"] if multi else []
    if with_llm:
        out += ["## Answers", ""]
        est = any(r["estimated_usage"] for r in rows)
        headers = lead + [
            "strategy",
            "n",
            "F1",
            "EM",
            "LLM calls",
            "input tok",
            "output tok",
            "cost (in+4·out)",
            "tokens % of lc",
            "p50 s",
            "p95 s",
            "errors",
        ]
        out.append(
            _table(
                headers,
                [
                    ([r["dataset"]] if multi else [])
                    + [
                        r["strategy"],
                        str(r["n"]),
                        _f(r["f1"], scale=100),
                        _f(r["em"], scale=100),
                        _f(r["calls"]),
                        _f(r["input_tokens"], 0),
                        _f(r["output_tokens"], 0),
                        _f(r["cost"], 0),
                        _f(r["tokens_pct_of_lc"]),
                        _f(r["p50_s"], 2),
                        _f(r["p95_s"], 2),
                        str(r["errors"]),
                    ]
                    for r in rows
                ],
            )
        )
        out += [
            "",
            "F1 and EM are LongBench's (x100, best over the gold answers); calls, tokens and cost are means "
            "per question"
            + (" (some token counts estimated with the offline tokenizer)" if est else "")
            + "; p50/p95 are wall seconds per question.",
            "",
        ]

    out += [
        "## Retrieval-only scores" + ("" if with_llm else " (no LLM)"),
        "",
        "Label: **retrieval-only** — computed from the passages the generator was shown, not from answers.",
        "",
    ]
    headers = (
        lead
        + [
            "strategy",
            "n",
            "answer in evidence %",
            "all supporting %",
            "support recall",
            "evidence tokens",
            "evidence words",
            "% of lc tokens",
        ]
        + ([] if with_llm else ["p50 s", "p95 s"])
    )
    out.append(
        _table(
            headers,
            [
                ([r["dataset"]] if multi else [])
                + [
                    r["strategy"],
                    str(r["n"]),
                    f"{_f(r['answer_in_evidence_pct'])} ({r['answer_in_evidence_n']})",
                    f"{_f(r['all_supporting_pct'])} ({r['all_supporting_n']})",
                    _f(r["support_recall"], 2),
                    _f(r["evidence_tokens"], 0),
                    _f(r["evidence_words"], 0),
                    _f(r["evidence_pct_of_lc"]),
                ]
                + ([] if with_llm else [_f(r["p50_s"], 2), _f(r["p95_s"], 2)])
                for r in rows
            ],
        )
    )
    out += [
        "",
        'In brackets: questions scored. Left out of "answer in evidence": yes/no answers and answers that '
        'occur nowhere in the document (computed numbers, free-form references); of "all supporting": items '
        "without supporting texts. Passages: those the generator was shown (after the CoT filter), plus the "
        "long-context spans when the run read the long context; the extractor's global information is not "
        "counted.",
        "",
    ]

    out += ["## Routes and plans", ""]
    headers = lead + [
        "strategy",
        "read long context %",
        "answered from retrieval %",
        "workflows",
        "analyzer question types",
        "agrees with label %",
    ]
    out.append(
        _table(
            headers,
            [
                ([r["dataset"]] if multi else [])
                + [
                    r["strategy"],
                    _f(r["long_context_pct"]),
                    _f(r["answered_from_retrieval_pct"]),
                    _counts(r["workflows"]),
                    _counts(r["question_types"]),
                    _f(r["label_agreement_pct"]),
                ]
                for r in rows
            ],
        )
    )
    out += [
        "",
        '"answered from retrieval": of the runs that produced an answer, those that did not go on to the '
        "long context (Self-Route's answerable share). Labels are the datasets' own types mapped to OkraLong's "
        "classes (evals/converters.py).",
        "",
    ]
    if report["retrieval_only"] and not report.get("oracle"):
        out += [
            "Without a model: the analyzer is the local one (no LLM call); workflows that need a model to write "
            "queries (split, step-wise) become one direct retrieval with bridge expansion, so the adaptive "
            "strategies' evidence is that retrieval; longrag, longrag-ext and longrag-fil retrieve the same "
            "chunks (the extractor and the filter are LLM steps); self-route and adaptive-precise show their "
            "retrieval step only (the long-context fallback follows an LLM answer); lc is the context the "
            "long-context step would send (the whole document when it fits the window).",
            "",
        ]
    if report.get("plot"):
        out += [f"Plot: `{report['plot']}`.", ""]
    elif report.get("plot_note"):
        out += [f"Plot: {report['plot_note']}", ""]
    if run["failures"]:
        out += ["## Harness failures (not cached; a rerun retries them)", ""] + [f"- {f}" for f in run["failures"]]
        out.append("")
    if report["bad_lines"]:
        out += ["## Bad dataset lines (skipped)", ""] + [f"- {b}" for b in report["bad_lines"]] + [""]
    return "\n".join(out)


# -- plot ---------------------------------------------------------------------------------------------


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the non-dominated points (lower cost x, higher score y), ordered by cost. A point
    is dominated when another has cost <= and score >= with one of them strictly better."""
    front = []
    for i, (x, y) in enumerate(points):
        if not any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for j, (x2, y2) in enumerate(points) if j != i):
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))


MARKERS = "osD^vP*Xph<>"


def plot(report: dict[str, Any], path: str | Path) -> str | None:
    """cost (x) vs score (y) per strategy, one panel per dataset. Each strategy has its own marker
    and colour, named in the legend beside the panel (no text on the points, so nothing overprints);
    non-dominated points wear a black ring and, when there are two or more, the Pareto frontier is
    drawn through them. Returns a note instead of writing when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    figure = draw(report, plt)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return None


def draw(report: dict[str, Any], plt: Any) -> Any:
    """The plot's figure (see `plot`)."""
    with_llm = not report["retrieval_only"]
    xkey, ykey = ("cost", "f1") if with_llm else ("evidence_tokens", "answer_in_evidence_pct")
    xlabel = "cost per question: input + 4 × output tokens" if with_llm else "evidence tokens per question"
    ylabel = "F1 (LongBench, ×100)" if with_llm else "gold answer in evidence (%)"
    scale = 100.0 if with_llm else 1.0
    rows = [r for r in report["rows"] if r.get(xkey) is not None and r.get(ykey) is not None]
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    colors = plt.get_cmap("tab10")
    datasets = list(dict.fromkeys(r["dataset"] for r in rows)) or ["(no data)"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.4 * len(datasets), 4.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        group = [r for r in rows if r["dataset"] == dataset]
        points = [(float(r[xkey]), float(r[ykey]) * scale) for r in group]
        front = pareto_front(points)
        for i, (r, (x, y)) in enumerate(zip(group, points, strict=True)):
            n = strategies.index(r["strategy"])
            ax.scatter(
                [x],
                [y],
                s=70,
                marker=MARKERS[n % len(MARKERS)],
                color=colors(n % 10),
                zorder=4,
                edgecolors="black" if i in front else "none",
                linewidths=1.6,
                label=r["strategy"] + (" (non-dominated)" if i in front else ""),
            )
        if len(front) > 1:
            ax.plot(
                [points[i][0] for i in front],
                [points[i][1] for i in front],
                "--",
                color="0.35",
                lw=1.1,
                zorder=2,
                label="Pareto frontier",
            )
        xs = [p[0] for p in points]
        if xs and min(xs) > 0 and max(xs) / min(xs) > 20:
            ax.set_xscale("log")
        if points:
            ys = [p[1] for p in points]
            pad = max(2.0, (max(ys) - min(ys)) * 0.12)
            top = max(ys) + pad
            ax.set_ylim(max(0.0, min(ys) - pad), min(top, 105.0) if max(ys) <= 100 else top)
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        ax.set_title(f"{dataset} (n={group[0]['n'] if group else 0} questions)", fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if report.get("oracle"):
        subtitle = ORACLE_TITLE
    elif report["scripted"]:
        subtitle = SCRIPTED_TITLE
    else:
        subtitle = RETRIEVAL_TITLE if report["retrieval_only"] else f"model {report['model']}"
    fig.suptitle(f"Cost vs score per strategy\n{subtitle}", fontsize=11)
    fig.tight_layout()
    return fig


# -- the whole report ---------------------------------------------------------------------------------


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
    datasets: dict[str, dict[str, Any]] = {}
    for item in items:
        d = datasets.setdefault(item.dataset, {"items": 0, "files": []})
        d["items"] += 1
    for name, paths in (files or {}).items():
        if name in datasets:
            datasets[name]["files"] = paths
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
