"""The evidence frontier: answer-in-evidence and all-supporting (%) against the words shown, one point
per evidence budget, from a `bench/evidence_budget.py` result whose strategy rows swept
`evidence_budget` (`--config "evidence_budget=N"`). No model: what the generator would be shown.

    python bench/frontier_plot.py bench/results/evidence_budget-<stamp>.json --out evals/frontier.png
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROW = re.compile(r"^strategy: \S+(?: evidence_budget=(\d+))?$")  # the default's rows: only the budget varies


def points(result: dict, dataset: str, default_budget: int) -> list[tuple[int, float, float, float]]:
    """(budget, words, answer %, all-supporting %) of the strategy rows that vary only the evidence
    budget (the row with no setting is the default's, at `default_budget`), by budget."""
    out = []
    for name, m in result["datasets"][dataset]["aggregate"].items():
        found = ROW.match(name)
        if found:
            out.append((int(found.group(1) or default_budget), m["words"], m["answer"], m["support"]))
    return sorted(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("result", type=Path)
    p.add_argument("--default-budget", type=int, default=900, help="evidence_budget of the row with no setting")
    p.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="DATASET:WORDS:ANSWER:SUPPORT",
        help="a target to mark (answer % and all-supporting % at most WORDS words), e.g. hotpotqa:700:98:95",
    )
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = json.loads(args.result.read_text("utf-8"))
    datasets = list(result["datasets"])
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        pts = points(result, dataset, args.default_budget)
        words = [w for _, w, _, _ in pts]
        ax.plot(words, [a for *_, a, _ in pts], "o-", label="answer in evidence")
        ax.plot(words, [s for *_, s in pts], "s-", label="all supporting facts")
        for target in args.target:
            name, words_cap, answer, support = target.split(":")
            if name == dataset:
                ax.plot(
                    [float(words_cap)] * 2, [float(answer), float(support)], "kx", label="target (at most these words)"
                )
        for budget, w, a, _ in pts:
            ax.annotate(str(budget), (w, a), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
        n = result["datasets"][dataset]["aggregate"][next(iter(result["datasets"][dataset]["aggregate"]))]["n"]
        ax.set_title(f"{dataset} (n = {n}; labels: evidence budget, tokens)")
        ax.set_xlabel("words shown to the generator (mean)")
        ax.set_ylabel("%")
        ax.set_ylim(0, 102)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle("What the default shows, no model: the evidence frontier (bench/evidence_budget.py)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
