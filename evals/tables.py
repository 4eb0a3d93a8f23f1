"""`report.md`: a built report (`evals.report.build_report`) rendered as markdown tables, with its
honesty labels, the run's provenance and what each column means."""

from __future__ import annotations

from typing import Any


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
        "declined %",
        "answers supported by citations %",
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
                    _f(r.get("declined_pct")),
                    _f(r.get("supported_pct")),
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
        'long context (Self-Route\'s answerable share). "declined": runs that ended unanswerable (the model '
        'declined, or the grounding check found its answer unsupported); "supported by citations": of the '
        "answers given, those whose cited passages contain the answer's own text or a gold answer. Labels are "
        "the datasets' own types mapped to OkraLong's classes (evals/converters.py).",
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
