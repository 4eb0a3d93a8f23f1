"""Report of the trained local analyzer: accuracy per judgement (held-out split and out-of-distribution),
per-class precision/recall, confusion matrices, baselines and latency, side by side with OkraLong table 4.

Evaluated through the shipped inference path (analyzer/trained.py, numpy) with the shipped weights on the
held-out groups that training never saw. Out of distribution: each dataset in turn is left out, a model
(same recipe, blocks and C as the shipped one) is trained on all the others (never on the evaluation-only
musique-steps) and tested on it — dataset style alone can give the question type away, and this shows how
much. Baselines: the majority class of the training part, the rule-based local analyzer (analyzer/rules.py),
and for the question type a TF-IDF (word 1-2 grams + character 2-5 grams) + logistic-regression classifier
trained on the same questions.

    python bench/analyzer_report.py                # same data arguments as bench/analyzer_train.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.analyzer_data import DATASETS, EVAL_ONLY  # noqa: E402
from bench.analyzer_train import (  # noqa: E402
    add_data_args,
    data_config,
    load_labelled,
    primary_hits,
    train,
)
from bench.common import md_table, save  # noqa: E402
from longqa.analyzer.rules import analyze_rules  # noqa: E402
from longqa.analyzer.schema import INFO_PATTERNS, QUESTION_TYPES  # noqa: E402
from longqa.analyzer.trained import HEADS, WEIGHTS_PATH, TrainedAnalyzer  # noqa: E402

OKRALONG = {"question_type": (86.4, 22.9), "info_pattern": (64.6, 15.2), "evidence": (79.4, 67.5)}
TARGETS = {"question_type": 95.0, "info_pattern": 70.0, "evidence": 85.0}
CLASSES = {"question_type": list(QUESTION_TYPES), "info_pattern": list(INFO_PATTERNS), "evidence": ["yes", "no"]}
FIELD = {"question_type": "question_type", "info_pattern": "info_pattern", "evidence": "evidence"}
ABLATIONS = {  # feature blocks refitted (C by CV) beside the shipped ones (skipped where they are the shipped ones)
    "question_type": [
        ("lexical",),
        ("ngrams",),
        ("lexical", "embedding"),
        ("lexical", "ngrams"),
        ("lexical", "embedding", "ngrams"),
    ],
    "info_pattern": [("lexical",), ("retrieval",), ("lexical", "retrieval"), ("lexical", "embedding", "retrieval")],
    "evidence": [("lexical",), ("retrieval",), ("lexical", "retrieval"), ("lexical", "embedding", "retrieval")],
}
TFIDF_C_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
OOD_DATASETS = {
    "question_type": ("hotpotqa", "musique", "musique-steps", "tatqa", "papers", "hand"),
    "info_pattern": ("hotpotqa", "musique", "tatqa"),
    "evidence": ("hotpotqa", "musique", "tatqa"),
}


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def accuracy(y: Sequence[str], p: Sequence[str]) -> float:
    return sum(a == b for a, b in zip(y, p, strict=True)) / len(y) if y else float("nan")


def per_class(y: Sequence[str], p: Sequence[str], classes: Sequence[str]) -> list[list[Any]]:
    rows = []
    for c in classes:
        tp = sum(a == c and b == c for a, b in zip(y, p, strict=True))
        n_true, n_pred = sum(a == c for a in y), sum(b == c for b in p)
        rows.append([c, n_true, pct(tp / n_pred) if n_pred else "–", pct(tp / n_true) if n_true else "–"])
    return rows


def confusion(y: Sequence[str], p: Sequence[str], classes: Sequence[str]) -> str:
    counts = Counter(zip(y, p, strict=True))
    rows = [[f"**{a}**", *(counts[(a, b)] for b in classes)] for a in classes if any(t == a for t in y)]
    return md_table(["gold \\ predicted", *classes], rows)


def predict_all(
    analyzer: TrainedAnalyzer,
    records: Sequence[dict[str, Any]],
    emb: dict[str, np.ndarray],
    heads: Sequence[str] = HEADS,
) -> list[dict[str, str]]:
    out = []
    for rec in records:
        probs = analyzer.probabilities(rec["question"], primary_hits(rec), emb[rec["question"]])
        out.append({h: max(probs[h], key=probs[h].get) for h in heads if h in probs})
    return out


def rules_all(records: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    out = []
    for rec in records:
        a = analyze_rules(rec["question"], [h["text"] for h in primary_hits(rec)])
        out.append({"question_type": a.question_type, "info_pattern": a.info_pattern, "evidence": a.evidence})
    return out


def tfidf_predict(train_rows: Sequence[dict[str, Any]], test_rows: Sequence[dict[str, Any]]) -> list[str]:
    """The plain baseline: TF-IDF of word 1-2 grams and character 2-5 grams (within words), one logistic
    regression, C chosen by 5-fold grouped cross-validation on the training rows."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from sklearn.pipeline import make_pipeline, make_union

    features = make_union(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True),
    )
    pipeline = make_pipeline(features, LogisticRegression(max_iter=5000))
    search = GridSearchCV(pipeline, {"logisticregression__C": TFIDF_C_GRID}, cv=GroupKFold(n_splits=5))
    search.fit(
        [r["question"] for r in train_rows],
        [r["labels"]["question_type"] for r in train_rows],
        groups=[r["group"] for r in train_rows],
    )
    return list(search.predict([r["question"] for r in test_rows]))


def section(
    head: str,
    rows: Sequence[dict[str, Any]],
    pred: Sequence[dict[str, str]],
    rules: Sequence[dict[str, str]],
    majority: str,
    extra: dict[str, list[str]] | None = None,
) -> dict:
    idx = [i for i, r in enumerate(rows) if r["labels"][head] is not None]
    y = [rows[i]["labels"][head] for i in idx]
    p = [pred[i][head] for i in idx]
    result = {
        "n": len(y),
        "accuracy": accuracy(y, p),
        "majority": accuracy(y, [majority] * len(y)),
        "rules": accuracy(y, [rules[i][head] for i in idx]),
        "per_class": per_class(y, p, CLASSES[head]),
        "confusion": confusion(y, p, CLASSES[head]),
        "predicted": dict(Counter(p).most_common()),
        "by_dataset": {},
    }
    for name, values in (extra or {}).items():
        result[name] = accuracy(y, [values[i] for i in idx])
    for ds in sorted({rows[i]["dataset"] for i in idx}):
        sub = [j for j, i in enumerate(idx) if rows[i]["dataset"] == ds]
        result["by_dataset"][ds] = {"n": len(sub), "accuracy": accuracy([y[j] for j in sub], [p[j] for j in sub])}
    return result


def ood_details(ood: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Per-class precision/recall and the confusion matrix of every left-out dataset, per judgement."""
    out = ["### Out of distribution, per class\n"]
    for head in HEADS:
        for ds, r in ood.get(head, {}).items():
            rows = [row for row in r["per_class"] if row[1] or row[2] != "–"]
            out += [
                f"**{head}, {ds} left out** (n={r['n']}, accuracy {pct(r['accuracy'])}%)\n",
                md_table(["class", "n", "precision %", "recall %"], rows),
                "",
                r["confusion"],
                "",
            ]
    return "\n".join(out)


def latency(
    analyzer: TrainedAnalyzer, rows: Sequence[dict[str, Any]], emb: dict[str, np.ndarray], n: int = 300
) -> dict[str, Any]:
    embedder = analyzer.embedder  # loaded here, outside the timings
    rows = [r for r in rows if primary_hits(r)][:n] or list(rows[:n])
    for r in rows[:10]:  # warm-up
        analyzer.predict(r["question"], primary_hits(r), emb[r["question"]])
        embedder.embed([r["question"]])
    timings: dict[str, list[float]] = {
        "trained, question embedding given": [],
        "trained, incl. question embedding": [],
        "question embedding alone": [],
        "rule-based": [],
    }
    for r in rows:
        hits = primary_hits(r)
        t0 = time.perf_counter()
        analyzer.predict(r["question"], hits, emb[r["question"]])
        t1 = time.perf_counter()
        vector = embedder.embed([r["question"]])[0]
        t2 = time.perf_counter()
        analyzer.predict(r["question"], hits, vector)
        t3 = time.perf_counter()
        analyze_rules(r["question"], [h["text"] for h in hits])
        t4 = time.perf_counter()
        timings["trained, question embedding given"].append(t1 - t0)
        timings["question embedding alone"].append(t2 - t1)
        timings["trained, incl. question embedding"].append(t3 - t1)
        timings["rule-based"].append(t4 - t3)
    return {
        name: {
            "p50_ms": 1000 * statistics.median(v),
            "p95_ms": 1000 * float(np.percentile(v, 95)),
            "mean_ms": 1000 * statistics.fmean(v),
            "n": len(v),
        }
        for name, v in timings.items()
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_args(p)
    p.add_argument("--weights", type=Path, default=WEIGHTS_PATH)
    p.add_argument("--no-ood", action="store_true", help="skip the leave-one-dataset-out models")
    p.add_argument("--no-ablations", action="store_true")
    args = p.parse_args(argv)
    t_start = time.perf_counter()
    records, emb = load_labelled(args, log=lambda m: print(m, file=sys.stderr))
    pending = [r for r in records if r.get("pending")]
    if pending:
        sys.exit(f"{len(pending)} questions lack their retrieval: run bench/analyzer_train.py first")
    analyzer = TrainedAnalyzer.load(args.weights)
    shipped_config = analyzer.meta.get("data", {}).get("config")
    if shipped_config != data_config(args):
        print(f"WARNING: the weights were trained with data config {shipped_config}, not {data_config(args)}")
    c_main = {h: analyzer.meta["training"][h]["C"] for h in HEADS}
    shipped_blocks = {h: tuple(analyzer.heads[h].blocks) for h in HEADS}
    train_rows = [r for r in records if not r["test"] and r["dataset"] not in EVAL_ONLY]
    test_rows = [r for r in records if r["test"] and r["dataset"] not in EVAL_ONLY]  # EVAL_ONLY: see OOD
    out: list[str] = []
    payload: dict[str, Any] = {"config": data_config(args), "weights": str(args.weights), "C": c_main}

    def emit(text: str = "") -> None:
        out.append(text)
        print(text, flush=True)

    import torch

    machine = {
        "date": dt.date.today().isoformat(),
        "cpus": len(os.sched_getaffinity(0)),
        "torch_threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }
    payload["machine"] = machine
    emit(f"# Local analyzer report ({machine['date']}, {machine['cpus']} CPU cores, load {machine['loadavg']})\n")

    # -- data -------------------------------------------------------------------------------------
    emit("## Data\n")
    rows = []
    for ds in DATASETS:
        sub = [r for r in records if r["dataset"] == ds]
        with_ctx = [r for r in sub if r["labels"]["evidence"] is not None]
        held = sum(r["test"] for r in sub) if ds not in EVAL_ONLY else "all: evaluation only (see OOD)"
        rows.append(
            [
                ds,
                len(sub),
                held,
                dict(Counter(r["type"] for r in sub)),
                len(with_ctx),
                dict(Counter(r["labels"]["info_pattern"] for r in with_ctx)),
                dict(Counter(r["labels"]["evidence"] for r in with_ctx)),
            ]
        )
    emit(
        md_table(
            ["dataset", "questions", "held out", "question types", "with retrieval labels", "pattern", "evidence"], rows
        )
    )
    emit()

    # -- held-out -------------------------------------------------------------------------------
    pred = predict_all(analyzer, test_rows, emb)
    rules = rules_all(test_rows)
    tfidf = tfidf_predict([r for r in train_rows if r["labels"]["question_type"]], [r for r in test_rows])
    results = {}
    for head in HEADS:
        majority = Counter(r["labels"][head] for r in train_rows if r["labels"][head]).most_common(1)[0][0]
        extra = {"tfidf": tfidf} if head == "question_type" else None
        results[head] = section(head, test_rows, pred, rules, majority, extra)
    payload["held_out"] = results

    # -- out of distribution --------------------------------------------------------------------
    ood: dict[str, dict[str, Any]] = {h: {} for h in HEADS}
    if not args.no_ood:
        for ds in OOD_DATASETS["question_type"]:
            heads = [h for h in HEADS if ds in OOD_DATASETS[h]]
            rest = [r for r in records if r["dataset"] != ds and r["dataset"] not in EVAL_ONLY]
            held = [r for r in records if r["dataset"] == ds]
            model, _ = train(
                rest,
                emb,
                args.seed,
                head_blocks=shipped_blocks,
                c_fixed=c_main,
                heads_to_fit=heads,
                log=lambda m: print(m, file=sys.stderr),
            )
            model_pred = predict_all(model, held, emb, heads)
            held_rules = rules_all(held)
            tf = tfidf_predict([r for r in rest if r["labels"]["question_type"]], held)
            for h in heads:
                majority = Counter(r["labels"][h] for r in rest if r["labels"][h]).most_common(1)[0][0]
                ood[h][ds] = section(
                    h, held, model_pred, held_rules, majority, {"tfidf": tf} if h == "question_type" else None
                )
    payload["ood"] = ood

    # -- ablations (held-out, refitted on the training part with CV) ----------------------------
    ablations: dict[str, dict[str, float]] = {}
    if not args.no_ablations:
        for head, variants in ABLATIONS.items():
            for blocks in variants:
                if blocks == shipped_blocks[head]:
                    continue
                model, _ = train(
                    train_rows,
                    emb,
                    args.seed,
                    head_blocks={head: blocks},
                    heads_to_fit=[head],
                    log=lambda m: print(m, file=sys.stderr),
                )
                mp = predict_all(model, test_rows, emb, [head])
                idx = [i for i, r in enumerate(test_rows) if r["labels"][head] is not None]
                ablations.setdefault(" + ".join(blocks), {})[head] = accuracy(
                    [test_rows[i]["labels"][head] for i in idx], [mp[i][head] for i in idx]
                )
    payload["ablations"] = ablations

    # -- latency ----------------------------------------------------------------------------------
    lat = latency(analyzer, test_rows, emb)
    payload["latency"] = lat

    # -- tables -----------------------------------------------------------------------------------
    emit("## Accuracy (%) side by side with OkraLong table 4\n")
    head_rows = []
    for h in HEADS:
        r = results[h]
        ood_acc = [v["accuracy"] for v in ood[h].values()]
        ood_txt = f"{pct(min(ood_acc))}–{pct(max(ood_acc))}" if ood_acc else "–"
        head_rows.append(
            [
                h,
                r["n"],
                pct(r["accuracy"]),
                ood_txt,
                pct(r["rules"]),
                pct(r["majority"]),
                pct(r["tfidf"]) if "tfidf" in r else "–",
                f"{TARGETS[h]:.0f}",
                f"{OKRALONG[h][0]:.1f}",
                f"{OKRALONG[h][1]:.1f}",
            ]
        )
    emit(
        md_table(
            [
                "judgement",
                "held-out n",
                "trained (held-out)",
                "trained (OOD range)",
                "rule-based",
                "majority class",
                "TF-IDF + LR",
                "target",
                "OkraLong fine-tuned 1B",
                "OkraLong prompted small",
            ],
            head_rows,
        )
    )
    emit("\nOkraLong's numbers are on its own validation data (HotpotQA, TAT-DQA, Qasper), not on these items.\n")
    for h in HEADS:
        r = results[h]
        emit(f"### {h} — held-out (n={r['n']})\n")
        emit(
            "by dataset: "
            + ", ".join(f"{ds} {pct(v['accuracy'])}% (n={v['n']})" for ds, v in r["by_dataset"].items())
            + "\n"
        )
        emit(md_table(["class", "n", "precision %", "recall %"], r["per_class"]))
        emit()
        emit(r["confusion"])
        emit()
    summ = [(r, pr) for r, pr in zip(test_rows, pred, strict=True) if r["labels"]["question_type"] == "summarizing"]
    predicted_summ = [r for r, pr in zip(test_rows, pred, strict=True) if pr["question_type"] == "summarizing"]
    emit("### summarizing (no annotated source; reported separately)\n")
    srows = []
    for src in ("hand", "rule"):
        sub = [(r, pr) for r, pr in summ if r["label_source"] == src]
        srows.append(
            [
                f"{src}-labelled",
                len(sub),
                pct(accuracy(["summarizing"] * len(sub), [pr["question_type"] for _, pr in sub])) if sub else "–",
            ]
        )
    emit(md_table(["held-out summarizing questions", "n", "recall %"], srows))
    correct = sum(r["labels"]["question_type"] == "summarizing" for r in predicted_summ)
    emit(
        f"\nprecision of 'summarizing' on the held-out split: {correct}/{len(predicted_summ)}"
        f" ({pct(correct / len(predicted_summ)) if predicted_summ else '–'}%)\n"
    )

    if not args.no_ood:
        emit("## Out of distribution: one dataset left out of training, tested on it (accuracy %)\n")
        orows = []
        for ds in OOD_DATASETS["question_type"]:
            row = [ds]
            for h in HEADS:
                v = ood[h].get(ds)
                row.append(f"{pct(v['accuracy'])} (n={v['n']})" if v else "–")
            v = ood["question_type"][ds]
            row += [pct(v["tfidf"]), pct(v["rules"])]
            orows.append(row)
        emit(
            md_table(
                ["left-out dataset", "question type", "info pattern", "evidence", "TF-IDF type", "rule-based type"],
                orows,
            )
        )
        emit()
        for ds in OOD_DATASETS["question_type"]:
            v = ood["question_type"][ds]
            emit(
                f"question type, {ds} left out: gold {dict(Counter(r['type'] for r in records if r['dataset'] == ds))}"
                f", predicted {v['predicted']}\n"
            )
        emit(ood_details(ood))
    if ablations:
        emit("## Ablations (held-out accuracy %, refitted on the training part)\n")
        arow = [[name, *(pct(v[h]) if h in v else "–" for h in HEADS)] for name, v in ablations.items()]
        arow += [
            [
                f"**shipped** {' + '.join(shipped_blocks[h])}",
                *(pct(results[h]["accuracy"]) if g == h else "–" for g in HEADS),
            ]
            for h in HEADS
        ]
        emit(md_table(["features", *HEADS], arow))
        emit()
    emit("## Latency per question (this CPU; the embedder's load is excluded)\n")
    emit(
        md_table(
            ["path", "p50 ms", "p95 ms", "mean ms", "n"],
            [[k, f"{v['p50_ms']:.2f}", f"{v['p95_ms']:.2f}", f"{v['mean_ms']:.2f}", v["n"]] for k, v in lat.items()],
        )
    )
    emit(
        "\nIn a graph run the primary retrieval has already embedded the question and the analyzer reuses "
        "that vector (retrieval.search's query cache), so the 'embedding given' row is its cost there."
    )
    payload["markdown"] = "\n".join(out)
    payload["seconds"] = round(time.perf_counter() - t_start, 1)
    print(f"\nresults: {save('analyzer_report', payload)}")


if __name__ == "__main__":
    main()
