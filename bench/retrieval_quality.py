"""Retrieval quality on LongBench-style long contexts (HotpotQA ~9,000 words, MuSiQue ~11,000 words).

Each item's context is indexed with `IndexStore` at each granularity; its question is searched with
each configuration (dense only, BM25 only, hybrid 1:1, 3:2, 2:3 dense:bm25); the top k chunks (k in
--ks, taken from one search at the largest k: the fused ranking does not depend on k while k <= depth)
are scored:

  coverage   a normalised gold answer occurs in the normalised retrieved text (yes/no answers excluded)
  support    every gold supporting unit occurs in the retrieved text (HotpotQA: the supporting_facts
             sentences; MuSiQue: the is_supporting paragraphs). Retrieved chunks are first merged where
             they touch (as the context processor does), then a unit is found
               strict:  when its normalised text occurs in one merged passage;
               lenient: when >= 90% of its normalised tokens occur contiguously in one passage.
             A chunk boundary can cut a unit: the chunker's sentence splitter cuts after "U.S." or "St."
             where HotpotQA's sentence does not, and a ~100-word MuSiQue paragraph often spans two
             150-token chunks, of which only one may be retrieved.
  recall     mean fraction of supporting units found (lenient)
  words, tokens   retrieved (tokens with the index's own token counter)

Context processor rows (hybrid 1:1 only): "+ext64" = neighbours merged, each passage extended by 64
tokens either side (the organizer's extension setting), merged again; "+paragraphs" = LongRAG's map of
the chunks to their whole source paragraphs (no cap).

    python bench/retrieval_quality.py --dataset both --n 100        # ~2 x 100 items
    python bench/retrieval_quality.py --dataset hotpotqa --n 5      # quick check
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import finish, machine, md_table, offline_env  # noqa: E402
from longqa.evals.long_contexts import LongItem, build  # noqa: E402
from longqa.evals.metrics import contains_answer, normalize_answer  # noqa: E402

CONFIGS: dict[str, tuple[str, tuple[float, float]]] = {
    "dense": ("dense", (1.0, 0.0)),
    "bm25": ("bm25", (0.0, 1.0)),
    "hybrid 1:1": ("hybrid", (1.0, 1.0)),
    "hybrid 3:2": ("hybrid", (3.0, 2.0)),
    "hybrid 2:3": ("hybrid", (2.0, 3.0)),
}
DEFAULT = ("hybrid 1:1", 150, 5)  # organizer: base granularity 150, factoid k=5, 1:1 for pattern "same"
BUDGET = 1_500
TARGET_COVERAGE, TARGET_SUPPORT = 0.90, 0.70
METRICS = ("coverage", "strict", "lenient", "recall", "words", "tokens")


def unit_found(unit: list[str], passages: list[str], lenient: bool) -> bool:
    """`unit`: normalised tokens; `passages`: normalised texts padded with a space on each side."""
    size = max(1, math.ceil(0.9 * len(unit))) if lenient else len(unit)
    windows = {" " + " ".join(unit[i : i + size]) + " " for i in range(len(unit) - size + 1)}
    return any(w in p for p in passages for w in windows)


def score(texts: list[str], n_tokens: int, answers: list[str] | None, units: list[list[str]]) -> list:
    """[coverage (None for yes/no), all strict, all lenient, recall, words, tokens] of retrieved texts."""
    padded = [f" {normalize_answer(t)} " for t in texts]
    strict = [unit_found(u, padded, lenient=False) for u in units]
    lenient = [s or unit_found(u, padded, lenient=True) for u, s in zip(units, strict, strict=True)]
    covered = None if answers is None else any(contains_answer(t, answers) for t in texts)
    return [covered, all(strict), all(lenient), sum(lenient) / len(units), sum(len(t.split()) for t in texts), n_tokens]


def spans_union(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Merge spans that overlap or touch (only whitespace between them)."""
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and not text[out[-1][1] : s].strip():
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def evaluate_item(item: LongItem, store, granularities: list[int], ks: list[int], depth: int) -> dict:
    from longqa.retrieval import Searcher, document_from_text, extend, merge_chunks, source_paragraphs

    doc = document_from_text(item.context, source=f"{item.dataset}:{item.id}")
    docs = {doc.doc_id: doc}
    yes_no = normalize_answer(item.answers[0]) in ("yes", "no")
    answers = None if yes_no else item.answers
    units = [normalize_answer(s).split() for s in item.supporting]
    searcher = Searcher(store, [doc])
    scores: dict[str, list] = {}
    timing: dict[str, float] = {}
    for g in granularities:
        cached, t0 = store.is_indexed(doc.doc_id, g), time.perf_counter()
        store.index(doc, g)
        if not cached:  # a rerun with --home opens the persisted index instead
            timing[f"index g{g}"] = time.perf_counter() - t0
        for name, (mode, weights) in CONFIGS.items():
            t0 = time.perf_counter()
            results = searcher.search(item.question, k=max(ks), granularity=g, weights=weights, depth=depth, mode=mode)
            timing[f"search {name} g{g}"] = time.perf_counter() - t0
            for k in ks:
                top = results[:k]
                passages = merge_chunks(top, docs)
                scores[f"{name}|{g}|{k}"] = score(
                    [p.text for p in passages], sum(r.chunk.n_tokens for r in top), answers, units
                )
                if name != "hybrid 1:1":
                    continue
                grown = [extend(p, doc, 64, 64, store.counter) for p in passages]
                texts = [doc.text[s:e] for s, e in spans_union([(p.start, p.end) for p in grown], doc.text)]
                scores[f"{name} +ext64|{g}|{k}"] = score(texts, sum(store.counter.count_many(texts)), answers, units)
                texts = [p.text for p in source_paragraphs(top, docs, max_tokens=10**9, counter=store.counter)]
                scores[f"{name} +paragraphs|{g}|{k}"] = score(
                    texts, sum(store.counter.count_many(texts)), answers, units
                )
    return {
        "id": item.id,
        "type": item.type,
        "yes_no": yes_no,
        "n_words": item.n_words,
        "scores": scores,
        "timing": timing,
    }


def aggregate(rows: list[dict]) -> dict[str, dict[str, float]]:
    by_key: dict[str, list[list]] = defaultdict(list)
    for row in rows:
        for key, values in row["scores"].items():
            by_key[key].append(values)
    out = {}
    for key, values in by_key.items():
        cov = [v[0] for v in values if v[0] is not None]
        out[key] = {
            "n": len(values),
            "coverage": statistics.fmean(cov) if cov else float("nan"),
            **{m: statistics.fmean(v[i] for v in values) for i, m in enumerate(METRICS) if i},
        }
    return out


def report(dataset: str, agg: dict[str, dict[str, float]], n: int) -> str:
    rows = []
    for key, m in sorted(agg.items(), key=lambda kv: kv[1]["words"]):
        name, g, k = key.split("|")
        rows.append(
            [
                name,
                g,
                k,
                round(m["words"]),
                round(m["tokens"]),
                f"{100 * m['coverage']:.1f}",
                f"{100 * m['strict']:.1f}",
                f"{100 * m['lenient']:.1f}",
                f"{100 * m['recall']:.1f}",
                "✓" if m["words"] <= BUDGET else "",
            ]
        )
    head = [
        "config",
        "g",
        "k",
        "words",
        "tokens",
        "coverage %",
        "all-support strict %",
        "all-support lenient %",
        "support recall %",
        f"≤{BUDGET:,} w",
    ]
    return f"### {dataset} (n={n})\n\n" + md_table(head, rows)


def verdict(dataset: str, agg: dict[str, dict[str, float]]) -> list[str]:
    name, g, k = DEFAULT
    d = agg.get(f"{name}|{g}|{k}")
    if d is None:
        return []
    ok = d["words"] <= BUDGET and d["coverage"] >= TARGET_COVERAGE and d["lenient"] >= TARGET_SUPPORT

    def fmt(key: str) -> str:
        m = agg[key]
        return (
            f"{key.replace('|', ' g=', 1).replace('|', ' k=')}: {m['words']:.0f} words, coverage "
            f"{100 * m['coverage']:.1f}%, all-support {100 * m['strict']:.1f}% strict / "
            f"{100 * m['lenient']:.1f}% lenient"
        )

    lines = [
        f"**{dataset}** default {fmt(f'{name}|{g}|{k}')} -> targets (≥90% coverage, ≥70% all-support, "
        f"≤{BUDGET:,} words) {'MET' if ok else 'NOT met'}"
    ]
    lines += [f"  same g,k  {fmt(f'{base}|{g}|{k}')}" for base in ("dense", "bm25")]
    ks = [int(key.split("|")[2]) for key, m in agg.items() if key.startswith(f"{name}|{g}|") and m["words"] <= BUDGET]
    if ks:  # the default granularity with k raised to the budget, against the baselines at the same g, k
        lines += [f"  k to budget  {fmt(f'{mode}|{g}|{max(ks)}')}" for mode in (name, "dense", "bm25")]
    for mode in ("dense", "bm25", "hybrid"):
        within = [key for key, m in agg.items() if key.startswith(mode) and "+" not in key and m["words"] <= BUDGET]
        if within:
            best = max(within, key=lambda key: (agg[key]["lenient"], agg[key]["coverage"]))
            lines.append(f"  best {mode} ≤{BUDGET:,} words  {fmt(best)}")
    meeting = [
        key
        for key, m in sorted(agg.items(), key=lambda kv: kv[1]["words"])
        if m["words"] <= BUDGET and m["coverage"] >= TARGET_COVERAGE and m["lenient"] >= TARGET_SUPPORT
    ]
    lines.append(
        f"  meeting both targets ≤{BUDGET:,} words: {len(meeting)} configuration(s)"
        + "".join(f"\n    {fmt(key)}" for key in meeting[:8])
        + ("\n    ..." if len(meeting) > 8 else "")
    )
    return lines


def by_type(rows: list[dict], key: str) -> str:
    """Coverage and lenient all-support of one configuration per question type."""
    types: dict[str, list[list]] = defaultdict(list)
    for row in rows:
        types[row["type"]].append(row["scores"][key])
    parts = []
    for t, values in sorted(types.items()):
        cov = [v[0] for v in values if v[0] is not None]
        parts.append(
            f"{t} (n={len(values)}): coverage {100 * statistics.fmean(cov) if cov else float('nan'):.1f}%, "
            f"all-support {100 * statistics.fmean(v[2] for v in values):.1f}%"
        )
    return f"  by type, {key.replace('|', ' g=', 1).replace('|', ' k=')}: " + "; ".join(parts)


SUMMARY_ROWS = (
    [f"{c}|150|{k}" for k in (5, 15) for c in CONFIGS]
    + [f"{c}|150|{k}" for k in (10, 12) for c in ("dense", "bm25", "hybrid 1:1", "hybrid 3:2")]
    + [
        "hybrid 1:1|256|8",
        "hybrid 1:1|400|5",
        "hybrid 1:1 +ext64|150|5",
        "hybrid 1:1 +ext64|150|8",
        "hybrid 1:1 +paragraphs|150|5",
        "hybrid 1:1 +paragraphs|150|8",
    ]
)


def summary(results_file: Path) -> str:
    """A short two-dataset table (the README's) from a saved results file."""
    import json

    data = json.loads(results_file.read_text("utf-8"))["datasets"]
    head, rows = ["config", "g", "k"], []
    for ds, d in data.items():
        head += [f"{ds} (n={d['stats']['n']}) words", "coverage %", "all-support %"]
    for key in SUMMARY_ROWS:
        row = key.split("|")
        for d in data.values():
            m = d["aggregate"].get(key)
            row += [f"{m['words']:.0f}", f"{100 * m['coverage']:.1f}", f"{100 * m['lenient']:.1f}"] if m else ["-"] * 3
        rows.append(row)
    return md_table(head, rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=["hotpotqa", "musique", "both"], default="both")
    p.add_argument("--n", type=int, default=100, help="items per dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--granularities", type=int, nargs="+", default=[150, 256, 400])
    p.add_argument("--ks", type=int, nargs="+", default=[3, 5, 8, 10, 12, 15])
    p.add_argument("--depth", type=int, default=20, help="each retriever's top-N before fusion")
    p.add_argument("--home", type=Path, help="index directory (kept; default: a temporary one, removed)")
    p.add_argument("--max-minutes", type=float, default=None, help="per dataset: stop taking new items after this")
    p.add_argument("--summary", type=Path, help="print the short table of a saved results file and exit")
    args = p.parse_args(argv)
    if args.summary:
        print(summary(args.summary))
        return
    if max(args.ks) > args.depth:
        p.error("the largest k must not exceed --depth")
    offline_env()
    from longqa.retrieval import IndexSettings, IndexStore

    home = args.home or Path(tempfile.mkdtemp(prefix="longqa-bench-"))
    store = IndexStore(IndexSettings(home=home))
    t0 = time.perf_counter()
    store.embedder  # noqa: B018 - load the model outside the timings
    info = {
        "machine": machine(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "home": str(home),
        "model_load_s": round(time.perf_counter() - t0, 2),
        "token_counter": store.counter.name,
        "datasets": {},
    }
    datasets = ["hotpotqa", "musique"] if args.dataset == "both" else [args.dataset]
    try:
        for dataset in datasets:
            items = build(dataset, n=args.n, seed=args.seed)
            rows, start = [], time.perf_counter()
            for i, item in enumerate(items, 1):
                rows.append(evaluate_item(item, store, args.granularities, args.ks, args.depth))
                elapsed = time.perf_counter() - start
                print(f"\r{dataset}: {i}/{len(items)} items, {elapsed:.0f} s", end="", file=sys.stderr, flush=True)
                if args.max_minutes and elapsed > 60 * args.max_minutes:
                    break
            print(file=sys.stderr)
            agg = aggregate(rows)
            timing = defaultdict(list)
            for row in rows:
                for key, v in row["timing"].items():
                    timing[key].append(v)
            answerable = [it for it in items[: len(rows)] if normalize_answer(it.answers[0]) not in ("yes", "no")]
            stats = {
                "n": len(rows),
                "mean_words": statistics.fmean(r["n_words"] for r in rows),
                "yes_no": sum(r["yes_no"] for r in rows),
                "answer_in_context": statistics.fmean(contains_answer(it.context, it.answers) for it in answerable),
                "answer_outside_gold": statistics.fmean(
                    any(
                        contains_answer(block, it.answers)
                        for block in it.context.split("\n\n")
                        if not any(g in block for g in it.gold_paragraphs)
                    )
                    for it in answerable
                ),
                "median_s": {key: round(statistics.median(v), 4) for key, v in timing.items()},
            }
            info["datasets"][dataset] = {"stats": stats, "aggregate": agg, "items": rows}
            section = [
                report(dataset, agg, len(rows)),
                "",
                f"{stats['n']} items, mean {stats['mean_words']:,.0f} words; yes/no answers "
                f"{stats['yes_no']}; normalised answer in the whole context: "
                f"{100 * stats['answer_in_context']:.1f}% (coverage ceiling); answer also in a "
                f"non-gold passage: {100 * stats['answer_outside_gold']:.1f}%",
                "",
                *verdict(dataset, agg),
                by_type(rows, "|".join(map(str, DEFAULT))),
                "",
                "median index build s (items built in this run; nan = all opened from --home): "
                + ", ".join(
                    f"g{g} {stats['median_s'].get(f'index g{g}', float('nan')):.2f}" for g in args.granularities
                ),
                "",
            ]
            print("\n".join(section), flush=True)
    finally:
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)
    finish("retrieval_quality", info, before=f"token counter: {store.counter.name}; ")


if __name__ == "__main__":
    main()
