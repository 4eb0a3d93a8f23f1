"""What the generator is shown, on LongBench-style long contexts (no LLM): does the evidence hold the
answer and every supporting fact, and at how many words?

Rows, all scored by the same code (`longqa.evals.metrics`: answer containment, skipping yes/no
answers and answers absent from the document; strict containment of every gold supporting unit):

  anchors      no longqa code: plain 300- / 200-word windows, BM25 (rank-bm25 over lower-cased
               words) or dense (MiniLM) top k, as in Self-Route (dense 300 w top 5) and LongRAG
               (dense 200 w top 7), and BM25 300 w top 5.
  retrievers   longqa's index and search (chunking x granularity x mode), chunks picked by a fixed
               k or by a word budget, then longqa's context processor (neighbours merged, cut
               tables recovered), optionally with LLM-free bridge expansion.
  strategies   the graph itself (`graph.invoke`, no model): what each strategy's run returns as its
               evidence (the generator's input), with the settings given by --set.

    python bench/evidence_budget.py --dataset both --n 100 --home /tmp/eb-home
    python bench/evidence_budget.py --dataset hotpotqa --n 10 --only strategies   # quick
    python bench/evidence_budget.py --dataset hotpotqa --hotpotqa-split b --only strategies ...  # held out
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, offline_env, save  # noqa: E402
from longqa.evals.long_contexts import LongItem, build, build_hotpotqa  # noqa: E402
from longqa.evals.metrics import contains_answer, is_yes_no, units_found  # noqa: E402

BUDGET_WORDS = 1_500
STRATEGIES = ["rag", "self-route", "longrag", "adaptive", "adaptive-precise"]
WORD = re.compile(r"\w+")


# -- scoring ------------------------------------------------------------------------------------------


def score(texts: list[str], item: LongItem) -> dict[str, Any]:
    checkable = not is_yes_no(item.answers) and contains_answer(item.context, item.answers)
    found = units_found(texts, item.supporting)
    return {
        "answer": any(contains_answer(t, item.answers) for t in texts) if checkable else None,
        "support": all(found) if found else None,
        "recall": sum(found) / len(found) if found else None,
        "words": sum(len(t.split()) for t in texts),
    }


def aggregate(rows: list[dict[str, Any]]) -> dict[str, float]:
    def mean(key: str) -> float:
        values = [r[key] for r in rows if r[key] is not None]
        return 100.0 * statistics.fmean(values) if values else float("nan")

    return {
        "n": len(rows),
        "answer": mean("answer"),
        "support": mean("support"),
        "recall": mean("recall"),
        "words": statistics.fmean(r["words"] for r in rows),
    }


# -- anchors: no longqa code ----------------------------------------------------------------------------


def windows(text: str, size: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def anchor_rows(item: LongItem, embed: Callable[[list[str]], Any]) -> dict[str, dict[str, Any]]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    out = {}
    for size in (300, 200):
        chunks = windows(item.context, size)
        bm25 = BM25Okapi([WORD.findall(c.lower()) for c in chunks])
        by_bm25 = np.argsort(-bm25.get_scores(WORD.findall(item.question.lower())), kind="stable")
        vectors = embed(chunks)
        by_dense = np.argsort(-(vectors @ embed([item.question])[0]), kind="stable")
        for k in (5, 7):
            out[f"anchor: bm25 {size} w top {k}"] = score([chunks[i] for i in sorted(by_bm25[:k])], item)
            out[f"anchor: dense {size} w top {k}"] = score([chunks[i] for i in sorted(by_dense[:k])], item)
    return out


# -- longqa's retrieval, configured by hand -------------------------------------------------------------


def pick_k(ranked: list, k: int) -> list:
    return ranked[:k]


def pick_budget(ranked: list, words: int) -> list:
    """Chunks in rank order while they fit `words` (a chunk that does not fit is skipped)."""
    chosen, used = [], 0
    for r in ranked:
        n = len(r.chunk.text.split())
        if used + n <= words:
            chosen.append(r)
            used += n
    return chosen


def bridge(searcher, question: str, first: list, g: int, seeds: int, per_seed: int, mode: str) -> list:
    """LLM-free bridge expansion: search again with the question plus each of the best `seeds`
    chunks' text, and keep the best `per_seed` chunks not already chosen."""
    seen = {r.chunk.index for r in first}
    extra = []
    for seed in first[:seeds]:
        results = searcher.search(f"{question} {seed.chunk.text}", k=per_seed + len(seen), granularity=g, mode=mode)
        new = [r for r in results if r.chunk.index not in seen][:per_seed]
        seen |= {r.chunk.index for r in new}
        extra += new
    return extra


def processed(chosen: list, document) -> list[str]:
    """The product's context processor (neighbours merged, cut tables recovered) on the chosen chunks."""
    from longqa.contracts.plan import Plan
    from longqa.contracts.state import hit_from
    from longqa.nodes.process_context import build_passages

    passages, _ = build_passages(
        [hit_from(r, "") for r in chosen], {document.doc_id: document}, Plan(strategy="bench", workflow="direct")
    )
    return [p.text for p in passages]


def retriever_rows(item: LongItem, stores: dict[str, tuple[Any, list[int]]]) -> dict[str, dict[str, Any]]:
    from longqa.retrieval import Searcher, document_from_text

    out = {}
    for chunking, (store, granularities) in stores.items():
        document = document_from_text(item.context, source="text-1")
        searcher = Searcher(store, [document])
        for g in granularities:
            for mode in ("hybrid", "bm25", "dense"):
                ranked = searcher.search(item.question, k=40, granularity=g, mode=mode, depth=40)
                for k in (3, 5, 8, 10, 12):
                    out[f"{chunking} {g} {mode} k={k}"] = score(processed(pick_k(ranked, k), document), item)
                for words in (800, 1000, 1200, 1400):
                    out[f"{chunking} {g} {mode} budget {words} w"] = score(
                        processed(pick_budget(ranked, words), document), item
                    )
                if mode == "dense":
                    continue
                for words, seeds, per_seed in ((1000, 2, 2), (1000, 3, 1), (800, 2, 2)):
                    first = pick_budget(ranked, words)
                    extra = bridge(searcher, item.question, first, g, seeds, per_seed, mode)
                    out[f"{chunking} {g} {mode} budget {words} w + bridge {seeds}x{per_seed}"] = score(
                        processed(first + extra, document), item
                    )
    return out


# -- the product: the graph's evidence ------------------------------------------------------------------


def strategy_rows(
    item: LongItem, home: Path, configs: list[dict[str, Any]], strategies: list[str]
) -> dict[str, dict[str, Any]]:
    """One row per strategy and settings group (`--set` applies to all, each `--config` is a row)."""
    from longqa.graph.graph import graph

    out = {}
    for overrides in configs:
        label = "".join(f" {k}={v}" for k, v in overrides.items())
        for strategy in strategies:
            context = {"model": None, "home": str(home), "strategy": strategy, **overrides}
            final = graph.invoke({"question": item.question, "texts": [item.context]}, context=context)
            if final.get("status") == "error":
                raise RuntimeError(f"{item.id} / {strategy}: {final.get('error')}")
            out[f"strategy: {strategy}{label}"] = score([e["text"] for e in final.get("evidence") or []], item)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", choices=["hotpotqa", "musique", "both"], default="both")
    p.add_argument("--n", type=int, default=100, help="items per dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--hotpotqa-split",
        choices=["a", "b"],
        default="a",
        help="HotpotQA items from hotpotqa_a.jsonl (the set the defaults were chosen on) or the disjoint "
        "hotpotqa_b.jsonl (a held-out check)",
    )
    p.add_argument(
        "--granularities",
        type=int,
        nargs="+",
        default=[150, 256],
        help="chunk sizes of the hand-configured rows, paragraph-aligned chunks",
    )
    p.add_argument(
        "--sentence-granularities",
        type=int,
        nargs="*",
        default=[150],
        help="the same with sentences packed across paragraphs (the chunker before alignment)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        choices=["anchors", "retrievers", "strategies"],
        default=["anchors", "retrievers", "strategies"],
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="Settings field for the strategy rows (repeatable)",
    )
    p.add_argument(
        "--config",
        dest="configs",
        action="append",
        default=[],
        metavar="'FIELD=VALUE ...'",
        help="one more group of strategy rows with these settings, besides --set's (repeatable): the grid "
        "the precision stage and the evidence budget were chosen by",
    )
    p.add_argument("--strategies", nargs="+", default=STRATEGIES, choices=STRATEGIES)
    p.add_argument("--home", type=Path, required=True, help="index directory (kept between runs)")
    p.add_argument("--top", type=int, default=40, help="rows per dataset table (best first)")
    args = p.parse_args(argv)
    offline_env()
    from longqa.retrieval import IndexSettings, IndexStore
    from longqa.retrieval.index.embed.embedder import get_embedder

    overrides = dict(o.split("=", 1) for o in args.overrides)
    configs = [overrides] + [{**overrides, **dict(f.split("=", 1) for f in c.split())} for c in args.configs]
    # the paragraph-aligned store is the graph's own (the default chunking), so its indexes are shared
    stores = {
        "paragraph": (IndexStore(IndexSettings(home=args.home / "graph")), args.granularities),
        "sentence": (
            IndexStore(IndexSettings(home=args.home / "sentence", chunking="sentence")),
            args.sentence_granularities,
        ),
    }
    embedder = get_embedder()
    info: dict[str, Any] = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}, "datasets": {}}
    datasets = ["hotpotqa", "musique"] if args.dataset == "both" else [args.dataset]
    for dataset in datasets:
        t0 = time.perf_counter()
        if dataset == "hotpotqa":
            items = build_hotpotqa(n=args.n, seed=args.seed, split=args.hotpotqa_split)
        else:
            items = build(dataset, n=args.n, seed=args.seed)
        rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for i, item in enumerate(items, 1):
            scores: dict[str, dict[str, Any]] = {}
            if "anchors" in args.only:
                scores |= anchor_rows(item, embedder.embed)
            if "retrievers" in args.only:
                scores |= retriever_rows(item, stores)
            if "strategies" in args.only:
                scores |= strategy_rows(item, args.home / "graph", configs, args.strategies)
            for key, value in scores.items():
                rows[key].append(value)
            print(f"{dataset} {i}/{len(items)} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        agg = {key: aggregate(values) for key, values in rows.items()}
        info["datasets"][dataset] = {"aggregate": agg, "seconds": round(time.perf_counter() - t0, 1)}
        print(table(dataset, agg, args.top))
    print(f"saved {save('evidence_budget', info)}", file=sys.stderr)


def table(dataset: str, agg: dict[str, dict[str, float]], top: int) -> str:
    def rank(kv):
        name, m = kv
        fixed = name.startswith(("anchor", "strategy"))
        within = m["words"] <= BUDGET_WORDS
        return (not fixed, not within, -(m["support"] + m["answer"]))

    rows = [
        [
            name,
            m["n"],
            f"{m['answer']:.1f}",
            f"{m['support']:.1f}",
            f"{m['recall']:.1f}",
            round(m["words"]),
            "✓" if m["words"] <= BUDGET_WORDS else "",
        ]
        for name, m in sorted(agg.items(), key=rank)[:top]
    ]
    head = [
        "configuration",
        "n",
        "answer in evidence %",
        "all supporting %",
        "support recall %",
        "words",
        f"≤{BUDGET_WORDS:,} w",
    ]
    return f"### {dataset}\n\n" + md_table(head, rows) + "\n"


if __name__ == "__main__":
    main()
