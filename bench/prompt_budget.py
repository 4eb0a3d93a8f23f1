"""Prompt tokens and calls per question, by strategy and route: what a question costs in input tokens,
and whether the default stays within its question budget on every route. A PROMPT-SIZE MEASUREMENT:
with the scripted model (the default) the replies are not a language model's and no answer is scored;
its token counts are the offline counter's. With `--model`/`--base-url` (a real model behind an
OpenAI-compatible server) they are the server's own counts.

    python bench/prompt_budget.py --n 20 --home /tmp/pb-home                  # scripted, all four sets
    python bench/prompt_budget.py --n 4 --datasets hotpotqa --model gemma --base-url http://127.0.0.1:8081/v1

Route = the plan's workflow and the perspectives that ran (e.g. `direct+filter`, `stepwise`,
`direct+extract`), `+lc` when the long-context fallback read, `(error)` when the run ended in one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, offline_env, save  # noqa: E402

STRATEGIES = ["rag", "lc", "self-route", "longrag", "adaptive", "adaptive-precise"]
DATASETS = ["hotpotqa", "musique", "tatqa", "papers"]


def route_of(out: dict[str, Any]) -> str:
    ran = out.get("route") or []
    plan = out.get("plan") or {}
    parts = [plan.get("workflow", "?")]
    parts += [name for node, name in (("cot", "filter"), ("extract", "extract")) if node in ran]
    if "long_context" in ran and plan.get("workflow") != "long_context":
        parts.append("lc")
    return "+".join(parts) + (" (error)" if out.get("status") == "error" else "")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    p.add_argument("--n", type=int, default=20, help="questions per dataset")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--strategies", nargs="+", default=STRATEGIES)
    p.add_argument("--analyzers", nargs="+", default=["local", "llm"], help="for the adaptive strategies")
    p.add_argument("--model", default="scripted", help="'scripted' (default) or the served model's name")
    p.add_argument("--base-url", default=None)
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE")
    p.add_argument("--home", type=Path, required=True, help="index directory (kept between runs)")
    args = p.parse_args(argv)
    offline_env()
    from longqa.evals.converters import convert
    from longqa.graph.graph import graph
    from longqa.llm.budget import spent

    overrides = dict(o.split("=", 1) for o in args.overrides)
    base = {"model": args.model, "base_url": args.base_url, "home": str(args.home), **overrides}
    runs: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    errors: list[str] = []
    t0 = time.perf_counter()
    for dataset in args.datasets:
        records = convert(dataset, n=args.n, seed=args.seed)
        for i, record in enumerate(records, 1):
            for strategy in args.strategies:
                adaptive = strategy.startswith("adaptive")
                for analyzer in args.analyzers if adaptive else ["local"]:
                    context = {**base, "strategy": strategy, "analyzer": analyzer}
                    out = graph.invoke({"question": record["input"], "texts": [record["context"]]}, context=context)
                    label = f"{strategy} ({analyzer} analyzer)" if adaptive else strategy
                    if out.get("status") == "error":
                        errors.append(f"{label}, {dataset} {record['_id']}: {out.get('error')}")
                    runs[(label, dataset, route_of(out))].append(
                        {
                            "calls": len(out.get("usage") or []),
                            "input": spent(out.get("usage")),
                            "budget": (out.get("plan") or {}).get("question_budget"),
                        }
                    )
            print(f"{dataset} {i}/{len(records)} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    rows, summary = [], {}
    for (label, dataset, route), values in sorted(runs.items()):
        inputs = [v["input"] for v in values]
        budget = values[0]["budget"]
        over = sum(1 for v in values if budget and v["input"] > budget)
        summary[f"{label} | {dataset} | {route}"] = {"n": len(values), "max": max(inputs), "over": over}
        rows.append(
            [
                label,
                dataset,
                route,
                len(values),
                f"{statistics.fmean(v['calls'] for v in values):.1f}",
                max(v["calls"] for v in values),
                round(statistics.fmean(inputs)),
                max(inputs),
                budget or "none",
                over,
            ]
        )
    head = ["strategy", "dataset", "route", "n", "calls mean", "calls max", "input mean", "input max", "budget"]
    kind = "scripted model (not a real LLM), offline counts" if args.model.startswith("scripted") else args.model
    print(f"### Prompt tokens per question ({kind})\n")
    print(md_table([*head, "over budget"], rows))
    if errors:
        print("\nruns that ended in an error:\n" + "\n".join(f"- {e}" for e in errors))
    info = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}, "rows": summary, "errors": errors}
    print(f"saved {save('prompt_budget', info)}", file=sys.stderr)


if __name__ == "__main__":
    main()
