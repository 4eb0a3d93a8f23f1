"""`plot.png`: cost vs score per strategy, one panel per dataset, with the Pareto frontier (like
OkraLong's figure 3). matplotlib is optional: without it the plot is skipped with a note."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .oracle import ORACLE_TITLE
from .titles import RETRIEVAL_TITLE, SCRIPTED_TITLE


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


def _axes(with_llm: bool) -> tuple[str, str, str, str, float]:
    """The row keys plotted, the axes' labels and the score's scale: F1 vs cost, or without a model
    the answer-in-evidence rate vs evidence tokens."""
    if with_llm:
        return "cost", "f1", "cost per question: input + 4 × output tokens", "F1 (LongBench, ×100)", 100.0
    return (
        "evidence_tokens",
        "answer_in_evidence_pct",
        "evidence tokens per question",
        "gold answer in evidence (%)",
        1.0,
    )


def _points(
    ax: Any, group: list[dict[str, Any]], points: list[tuple[float, float]], strategies: list[str], colors: Any
) -> None:
    """Each strategy's point, its own marker and colour; the non-dominated ones ringed, joined by the frontier."""
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


def _limits(ax: Any, points: list[tuple[float, float]]) -> None:
    """A log cost axis when costs span over 20x; the score axis padded around the points; the legend."""
    xs = [p[0] for p in points]
    if xs and min(xs) > 0 and max(xs) / min(xs) > 20:
        ax.set_xscale("log")
    if points:
        ys = [p[1] for p in points]
        pad = max(2.0, (max(ys) - min(ys)) * 0.12)
        top = max(ys) + pad
        ax.set_ylim(max(0.0, min(ys) - pad), min(top, 105.0) if max(ys) <= 100 else top)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def _subtitle(report: dict[str, Any]) -> str:
    """What the numbers are: the oracle, the scripted model, retrieval-only, or the model's name."""
    if report.get("oracle"):
        return ORACLE_TITLE
    if report["scripted"]:
        return SCRIPTED_TITLE
    return RETRIEVAL_TITLE if report["retrieval_only"] else f"model {report['model']}"


def draw(report: dict[str, Any], plt: Any) -> Any:
    """The plot's figure (see `plot`)."""
    xkey, ykey, xlabel, ylabel, scale = _axes(not report["retrieval_only"])
    rows = [r for r in report["rows"] if r.get(xkey) is not None and r.get(ykey) is not None]
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    colors = plt.get_cmap("tab10")
    datasets = list(dict.fromkeys(r["dataset"] for r in rows)) or ["(no data)"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.4 * len(datasets), 4.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        group = [r for r in rows if r["dataset"] == dataset]
        points = [(float(r[xkey]), float(r[ykey]) * scale) for r in group]
        _points(ax, group, points, strategies, colors)
        _limits(ax, points)
        ax.set_title(f"{dataset} (n={group[0]['n'] if group else 0} questions)", fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Cost vs score per strategy\n{_subtitle(report)}", fontsize=11)
    fig.tight_layout()
    return fig
