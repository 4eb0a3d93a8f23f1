"""`report.md`: a built report (`evals.report.build_report`) rendered as markdown tables, with its
honesty labels, the run's provenance and what each column means."""

from __future__ import annotations

from typing import Any

from .paired import MARGIN, RESAMPLES, SEED


def _f(value: float | None, digits: int = 1, scale: float = 1.0) -> str:
    return "–" if value is None else f"{value * scale:,.{digits}f}"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "–"


_ORACLE = (
    "**Decomposition oracle: the gold decomposition (MuSiQue) or the compared entities (HotpotQA "
    "comparison) supply the split and step-wise queries, and a stand-in replies for every other "
    "operator. It measures what those workflows can retrieve when their queries are right — an upper "
    "bound, NOT a quality number. {skipped} item(s) without a gold "
    "decomposition were skipped.**"
)
_SCRIPTED = (
    "**The model is the offline scripted test model (`llm/scripted.py`), not an LLM: these numbers "
    "exercise the pipeline and are NOT a quality measurement.**"
)
_RETRIEVAL_ONLY = (
    "**Retrieval-only: no LLM was called (`--model none`). There are no answers, so no F1/EM; the "
    "scores below say whether the evidence a generator would be shown contains a gold answer and "
    "the supporting facts. They are not answer quality.**"
)
_ANSWERS_NOTE = (
    "F1 and EM are LongBench's (x100, best over the gold answers); calls, tokens and cost are means per question"
)
_EVIDENCE_NOTE = (
    'In brackets: questions scored. Left out of "answer in evidence": yes/no answers and answers that '
    'occur nowhere in the document (computed numbers, free-form references); of "all supporting": items '
    "without supporting texts. Passages: those the generator was shown (after the CoT filter), plus the "
    "long-context spans when the run read the long context; the extractor's global information is not "
    "counted."
)
_ROUTES_NOTE = (
    '"answered from retrieval": of the runs that produced an answer, those that did not go on to the '
    'long context (Self-Route\'s answerable share). "declined": runs that ended unanswerable (the model '
    'declined, or the grounding check found its answer unsupported); "supported by citations": of the '
    "answers given, those whose cited passages contain the answer's own text or a gold answer. Labels are "
    "the datasets' own types mapped to OkraLong's classes (evals/converters.py)."
)
_NO_MODEL_NOTE = (
    "Without a model: the analyzer is the local one (no LLM call); workflows that need a model to write "
    "queries (split, step-wise) become one direct retrieval with bridge expansion, so the adaptive "
    "strategies' evidence is that retrieval; longrag, longrag-ext and longrag-fil retrieve the same "
    "chunks (the extractor and the filter are LLM steps); self-route and adaptive-precise show their "
    "retrieval step only (the long-context fallback follows an LLM answer); lc is the context the "
    "long-context step would send (the whole document when it fits the window)."
)


def _without_model(report: dict[str, Any]) -> bool:
    """A retrieval-only run that is not the decomposition oracle: no model was called at all."""
    return bool(report["retrieval_only"] and not report.get("oracle"))


def _labels(report: dict[str, Any]) -> list[str]:
    """The bold honesty labels: oracle, scripted model, retrieval-only."""
    out: list[str] = []
    if report.get("oracle"):
        out += [_ORACLE.format(skipped=report.get("oracle_skipped", 0)), ""]
    if report["scripted"]:
        out += [_SCRIPTED, ""]
    if _without_model(report):
        out += [_RETRIEVAL_ONLY, ""]
    return out


def _provenance(report: dict[str, Any]) -> list[str]:
    """The bullet list of when, where, with what model and data, and how the run went."""
    run = report["run"]
    m = report["machine"]
    out = [
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
    return out + [""]


def _rows_table(rows: list[dict[str, Any]], multi: bool, headers: list[str], cells: Any) -> str:
    """A table with one row per report row: the dataset column first when the report has several."""
    lead = ["dataset"] if multi else []
    return _table(lead + headers, [([r["dataset"]] if multi else []) + cells(r) for r in rows])


def _answers(rows: list[dict[str, Any]], multi: bool) -> list[str]:
    """The answer-quality and cost table, for runs that called a model."""
    headers = ["strategy", "model", "commit", "n", "F1", "EM", "LLM calls", "input tok", "output tok"]
    headers += ["cost (in+4·out)", "tokens % of lc", "p50 s", "p95 s", "errors"]

    def cells(r: dict[str, Any]) -> list[str]:
        return [
            r["strategy"],
            ", ".join(r.get("models") or ["?"]),
            ", ".join(r.get("commits") or ["?"]),
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

    est = any(r["estimated_usage"] for r in rows)
    note = (
        _ANSWERS_NOTE
        + (" (some token counts estimated with the offline tokenizer)" if est else "")
        + "; p50/p95 are wall seconds per question."
    )
    return ["## Answers", "", _rows_table(rows, multi, headers, cells), "", note, ""]


def _evidence(rows: list[dict[str, Any]], multi: bool, with_llm: bool) -> list[str]:
    """The retrieval-only scores table: what the evidence shown to the generator contains."""
    headers = ["strategy", "n", "answer in evidence %", "all supporting %", "support recall", "evidence tokens"]
    headers += ["evidence words", "% of lc tokens"] + ([] if with_llm else ["p50 s", "p95 s"])

    def cells(r: dict[str, Any]) -> list[str]:
        return [
            r["strategy"],
            str(r["n"]),
            f"{_f(r['answer_in_evidence_pct'])} ({r['answer_in_evidence_n']})",
            f"{_f(r['all_supporting_pct'])} ({r['all_supporting_n']})",
            _f(r["support_recall"], 2),
            _f(r["evidence_tokens"], 0),
            _f(r["evidence_words"], 0),
            _f(r["evidence_pct_of_lc"]),
        ] + ([] if with_llm else [_f(r["p50_s"], 2), _f(r["p95_s"], 2)])

    return [
        "## Retrieval-only scores" + ("" if with_llm else " (no LLM)"),
        "",
        "Label: **retrieval-only** — computed from the passages the generator was shown, not from answers.",
        "",
        _rows_table(rows, multi, headers, cells),
        "",
        _EVIDENCE_NOTE,
        "",
    ]


def _routes(rows: list[dict[str, Any]], multi: bool) -> list[str]:
    """The routes and plans table: long-context share, declines, citations' support, workflows chosen."""
    headers = ["strategy", "read long context %", "answered from retrieval %", "declined %"]
    headers += ["answers supported by citations %", "workflows", "analyzer question types", "agrees with label %"]

    def cells(r: dict[str, Any]) -> list[str]:
        return [
            r["strategy"],
            _f(r["long_context_pct"]),
            _f(r["answered_from_retrieval_pct"]),
            _f(r.get("declined_pct")),
            _f(r.get("supported_pct")),
            _counts(r["workflows"]),
            _counts(r["question_types"]),
            _f(r["label_agreement_pct"]),
        ]

    return ["## Routes and plans", "", _rows_table(rows, multi, headers, cells), "", _ROUTES_NOTE, ""]


_PAIRED_NOTE = (
    "a − b over the items both strategies ran (each item once for each), mean and paired bootstrap 95% interval "
    "({resamples:,} resamples of the items, seed {seed}; evals/paired.py); F1, EM and answer in evidence in points "
    "(x100), tokens per question. Verdict on default − the best fixed baseline (the one it trails most): "
    '"not behind" when the interval\'s lower end is above −{margin:g} points, "behind" when its upper end is '
    'below 0, else "can\'t tell", with the items that would settle it were the mean and spread to hold (a normal '
    "projection for planning a run, not a result)."
)


def _signed(value: float, digits: int) -> str:
    return f"{value:+,.{digits}f}".replace("-", "−")


def interval_text(d: dict[str, Any], metric: str) -> str:
    """'mean [low, high]' in points (1 decimal) or tokens (none)."""
    digits = 0 if "tokens" in metric else 1
    return f"{_signed(d['mean'], digits)} [{_signed(d['low'], digits)}, {_signed(d['high'], digits)}]"


def settle_text(settle: dict[str, Any] | None) -> str:
    """evals/paired.py `items_to_settle` as the report says it: a projection, named as one ("" when decided)."""
    if not settle:
        return ""
    return f" (were this mean and spread to hold, about {settle['items']:,} items would say {settle['verdict']})"


def verdict_line(v: dict[str, Any]) -> str:
    """One of report.json's verdicts as the report prints it: default − best baseline, interval, verdict, cost."""
    d, cost, settle = v["difference"], v["cost_difference"], v.get("settled_by")
    line = (
        f"- {v['dataset']}: default ({v['default']}) − best baseline ({v['baseline']}), {v['metric']}: "
        f"{interval_text(d, v['metric'])} over {d['n']} items: **{v['verdict']}**"
    )
    line += settle_text(settle)
    return line + (f"; {v['cost_metric']} {interval_text(cost, v['cost_metric'])}" if cost else "")


def _paired(report: dict[str, Any]) -> list[str]:
    """The paired differences of every pair of strategies on the same items, and the verdict lines."""
    pairs = report.get("paired") or []
    if not pairs:
        return []
    rows = [
        [p["dataset"], f"{p['a']} − {p['b']}", p["metric"], str(p["n"]), interval_text(p, p["metric"])] for p in pairs
    ]
    out = ["## Paired differences", ""] + [verdict_line(v) for v in report.get("verdicts") or []]
    out += ["", _table(["dataset", "a − b", "metric", "n", "mean [95% interval]"], rows), ""]
    return out + [_PAIRED_NOTE.format(resamples=RESAMPLES, seed=SEED, margin=MARGIN), ""]


def _trailer(report: dict[str, Any]) -> list[str]:
    """What follows the tables: the no-model note, the plot, harness failures and bad dataset lines."""
    out: list[str] = []
    if _without_model(report):
        out += [_NO_MODEL_NOTE, ""]
    if report.get("plot"):
        out += [f"Plot: `{report['plot']}`.", ""]
    elif report.get("plot_note"):
        out += [f"Plot: {report['plot_note']}", ""]
    failures = report["run"]["failures"]
    if failures:
        out += ["## Harness failures (not cached; a rerun retries them)", ""] + [f"- {f}" for f in failures]
        out.append("")
    if report["bad_lines"]:
        out += ["## Bad dataset lines (skipped)", ""] + [f"- {b}" for b in report["bad_lines"]] + [""]
    return out


def markdown(report: dict[str, Any]) -> str:
    """Render a built report as the markdown of `report.md`: labels, provenance, tables and their notes."""
    rows = report["rows"]
    with_llm = not report["retrieval_only"]
    multi = len({r["dataset"] for r in rows}) > 1
    out = [f"# {report['title']}", ""] + _labels(report) + _provenance(report)
    if with_llm:
        out += _answers(rows, multi)
    out += _evidence(rows, multi, with_llm) + _paired(report) + _routes(rows, multi) + _trailer(report)
    return "\n".join(out)
