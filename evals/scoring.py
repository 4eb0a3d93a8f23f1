"""The scores of an evaluation run: one row per question (item x strategy), then one per dataset x
strategy. Every number is computed here from the cached records and the items (gold answers,
supporting texts, contexts), so a report is never stale with respect to its records.

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

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from .longbench import EvalItem
from .metrics import contains_answer, exact_match, f1_score, is_yes_no, units_found
from .runner import passage_texts

FALLBACK_STRATEGIES = ("self-route", "adaptive-precise")
ALL = "all"


def answer_checkable(item: EvalItem) -> bool:
    """Whether containment of a gold answer can say anything about retrieval: not for yes/no answers,
    nor for answers that do not occur in the document at all (computed numbers, free-form answers)."""
    return not is_yes_no(item.answers) and contains_answer(item.context, item.answers)


def score(record: dict[str, Any], item: EvalItem, with_llm: bool, checkable: bool | None = None) -> dict[str, Any]:
    """One run's scores against its item: F1/EM with a model, whether the evidence holds a gold answer and the
    supporting texts, usage, latency, route and whether its citations support the answer."""
    passages = passage_texts(record.get("passages") or [], item.context)
    checkable = answer_checkable(item) if checkable is None else checkable
    answer_in = any(contains_answer(p, item.answers) for p in passages) if checkable else None
    found = units_found(passages, item.supporting) if item.supporting else []
    prediction = record.get("answer") or ""
    totals = record.get("totals") or {}
    answered = record.get("status") == "answered" and bool(prediction)
    cited = passage_texts(record.get("cited") or [], item.context)
    # an answer is supported by its citations when its own words are there, or a gold answer is
    supported = (
        any(contains_answer(p, [prediction]) for p in cited)
        or (checkable and any(contains_answer(p, item.answers) for p in cited))
        if answered and "cited" in record
        else None
    )
    return {
        "id": item.id,
        "dataset": item.dataset,
        "strategy": record["strategy"],
        "model": record.get("model"),
        "commit": record.get("commit"),
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
        "declined": record.get("status") == "unanswerable",
        "supported_by_citations": supported,
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


_Pairs = list[tuple[dict[str, Any], dict[str, Any]]]  # (a run, the lc run of the same item)


def _pct(part: float, whole: float) -> float | None:
    return 100.0 * part / whole if whole else None


def _answer_stats(runs: list[dict[str, Any]], both: _Pairs) -> dict[str, Any]:
    """Errors, answer quality, usage (also as a share of lc's on the same items) and latency."""
    seconds = [r["seconds"] for r in runs]
    lc_tokens = sum(b["input_tokens"] + b["output_tokens"] for _, b in both)
    return {
        "errors": sum(r["status"] == "error" for r in runs),
        "f1": _mean([r["f1"] for r in runs]),
        "em": _mean([r["em"] for r in runs]),
        "calls": _mean([r["calls"] for r in runs]),
        "input_tokens": _mean([r["input_tokens"] for r in runs]),
        "output_tokens": _mean([r["output_tokens"] for r in runs]),
        "cost": _mean([r["cost"] for r in runs]),
        "estimated_usage": any(r["estimated_usage"] for r in runs),
        "tokens_pct_of_lc": _pct(sum(r["input_tokens"] + r["output_tokens"] for r, _ in both), lc_tokens),
        "p50_s": percentile(seconds, 50),
        "p95_s": percentile(seconds, 95),
    }


def _evidence_stats(runs: list[dict[str, Any]], both: _Pairs) -> dict[str, Any]:
    """What the evidence holds (answer, supporting facts) and its size (also as a share of lc's)."""
    answer_in, n_answer = _rate([r["answer_in_evidence"] for r in runs])
    support, n_support = _rate([r["all_supporting"] for r in runs])
    return {
        "answer_in_evidence_pct": answer_in,
        "answer_in_evidence_n": n_answer,
        "all_supporting_pct": support,
        "all_supporting_n": n_support,
        "support_recall": _mean([r["support_recall"] for r in runs]),
        "evidence_tokens": _mean([r["evidence_tokens"] for r in runs]),
        "evidence_words": _mean([r["evidence_words"] for r in runs]),
        "evidence_pct_of_lc": _pct(
            sum(r["evidence_tokens"] for r, _ in both), sum(b["evidence_tokens"] for _, b in both)
        ),
    }


def _route_stats(strategy: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Routes taken, declines, citations' support, workflows and the analyzer's agreement with the labels."""
    n = len(runs)
    types = Counter(r["question_type"] for r in runs if r["question_type"])
    labelled = [r for r in runs if r["question_type"] and r["label"]]
    fallback_runs = (
        [r for r in runs if r["status"] in ("answered", "unanswerable")] if strategy in FALLBACK_STRATEGIES else []
    )
    return {
        "long_context_pct": 100.0 * sum(r["long_context"] for r in runs) / n,
        "declined_pct": 100.0 * sum(r.get("declined", False) for r in runs) / n,
        "supported_pct": _rate([r.get("supported_by_citations") for r in runs])[0],
        "answered_from_retrieval_pct": _pct(sum(not r["long_context"] for r in fallback_runs), len(fallback_runs)),
        "workflows": dict(Counter(r["workflow"] or "?" for r in runs).most_common()),
        "question_types": dict(types.most_common()),
        "label_agreement_pct": _pct(sum(r["question_type"] == r["label"] for r in labelled), len(labelled)),
    }


def _provenance(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The models and commits a row's runs were made with (records from before commits were stamped: "unrecorded")."""
    return {
        "models": list(dict.fromkeys(r.get("model") or "none" for r in runs)),
        "commits": list(dict.fromkeys(r.get("commit") or "unrecorded" for r in runs)),
    }


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
            both = [(r, lc[(r["dataset"], r["id"])]) for r in runs if (r["dataset"], r["id"]) in lc]
            rows.append(
                {"dataset": dataset, "strategy": strategy, "n": len(runs)}
                | _provenance(runs)
                | _answer_stats(runs, both)
                | _evidence_stats(runs, both)
                | _route_stats(strategy, runs)
            )
    return rows
