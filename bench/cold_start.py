"""A question from a fresh `longqa ask` process and from a warm one, with each embedder backend, side
by side (issue #32).

The bundled sample report (samples/harbor_annual_report.md, ~25k words) is indexed once (not timed).
Then, in rounds, each variant runs in turn, so every variant sees the same load:

  cold       `python -m longqa.cli ask DOC QUESTION --json -q` in a new process, evidence only (no
             model): wall time from spawn to exit, the process's peak RSS, whether torch was imported
  warm       in one process per backend, after one untimed question: `run_question` (the CLI's
             in-process path) for each question, every cached query vector dropped first;
             `compile each call` compiles the graph per question as `run_question` did before #32

Backends: `torch` (sentence-transformers, the path before #32) and `onnx` (ONNX Runtime, the default).
The citations of every cold run are compared across backends.

    python bench/cold_start.py --rounds 5 --questions 20
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, offline_env, save  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "samples" / "harbor_annual_report.md"
QUESTIONS = [
    "Which shipyard built the dredger Marrowdeep?",
    "When did the Saltreach Bulk Terminal open?",
    "What was the authority's operating revenue?",
    "How many berths does the bulk terminal have?",
    "Who chairs the board of the harbour authority?",
    "How deep is the main channel?",
]
BACKENDS = ("torch", "onnx")

COLD = """
import contextlib, io, json, resource, sys
from longqa import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["ask", sys.argv[1], sys.argv[2], "--json", "-q"])
result = json.loads(out.getvalue())
print("RESULT " + json.dumps({"code": code, "torch": "torch" in sys.modules,
      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
      "citations": [[c["source"], c["start"], c["end"]] for c in result["citations"] or []]}))
"""

WARM = """
import json, resource, sys, time
from longqa.ask import run_question
from longqa.contracts.settings import Settings
from longqa.graph.graph import build_graph
from longqa.retrieval.search import forget_query
import longqa.ask as ask
compiled = ask.compiled_graph
doc, n = sys.argv[1], int(sys.argv[2])
questions = json.loads(sys.argv[3])
settings = Settings()
run_question([doc], questions[0], settings, progress=None)
out = {"warm": [], "compile each call": []}
for i in range(n):
    for variant in out:
        q = questions[i % len(questions)]
        forget_query()
        if variant == "compile each call":  # the path before #32: a new compiled graph per question
            ask.compiled_graph = lambda checkpointer=None: build_graph().compile()
        else:
            ask.compiled_graph = compiled
        t = time.perf_counter()
        result = run_question([doc], q, settings, progress=None)
        out[variant].append(time.perf_counter() - t)
        assert result["status"] == "evidence-only", result
out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["torch"] = "torch" in sys.modules
print("RESULT " + json.dumps(out))
"""


def stats(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * p95, "n": len(ordered)}


def run(code: str, args: list[str], env: dict[str, str]) -> tuple[dict, float, float]:
    """Run `code` in a new interpreter: (its RESULT, wall seconds from spawn to exit, its peak RSS MiB)."""
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"failed ({proc.returncode}): {proc.stderr[-3000:]}")
    result = json.loads(lines[-1][len("RESULT ") :])
    return result, wall, result.pop("rss")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="cold runs per backend")
    p.add_argument("--questions", type=int, default=20, help="warm questions per variant")
    args = p.parse_args(argv)
    offline_env()
    home = Path(tempfile.mkdtemp(prefix="longqa-coldstart-"))
    env = {**os.environ, "LONGQA_HOME": str(home)}
    env.pop("LONGQA_MODEL", None)
    subprocess.run([sys.executable, "-m", "longqa.cli", "index", str(DOC), "-q"], env=env, check=True)
    subprocess.run([sys.executable, "-m", "longqa.retrieval.onnx_export"], env=env, check=True)
    cold: dict[str, list[tuple[float, float, bool]]] = {b: [] for b in BACKENDS}
    citations: dict[str, list] = {b: [] for b in BACKENDS}
    load = []
    for r in range(args.rounds):
        for backend in BACKENDS:
            q = QUESTIONS[r % len(QUESTIONS)]
            result, wall, rss = run(COLD, [str(DOC), q], {**env, "LONGQA_EMBEDDER_BACKEND": backend})
            cold[backend].append((wall, rss, result["torch"]))
            citations[backend].append(result["citations"])
            load.append(os.getloadavg()[0])
            print(f"round {r + 1} cold {backend}: {wall:.2f} s, {rss:,.0f} MiB", file=sys.stderr, flush=True)
    warm = {}
    for backend in BACKENDS:
        result, _, rss = run(
            WARM,
            [str(DOC), str(args.questions), json.dumps(QUESTIONS)],
            {**env, "LONGQA_EMBEDDER_BACKEND": backend},
        )
        loaded = {"peak_rss_mib": rss, "torch": result.pop("torch")}
        warm[backend] = {v: stats(seconds) for v, seconds in result.items()} | loaded
    same = citations["torch"] == citations["onnx"]
    rows = []
    for backend in BACKENDS:
        walls = [w for w, _, _ in cold[backend]]
        rows.append(
            [
                f"cold `longqa ask` ({backend})",
                f"{statistics.median(walls):.2f} s",
                f"{max(walls):.2f} s",
                f"{max(r for _, r, _ in cold[backend]):,.0f}",
                "yes" if any(t for _, _, t in cold[backend]) else "no",
            ]
        )
    for backend in BACKENDS:
        for variant in ("compile each call", "warm"):
            s = warm[backend][variant]
            rows.append(
                [
                    f"warm `run_question`, {variant} ({backend})",
                    f"{s['median_ms']:.1f} ms",
                    f"{s['p95_ms']:.1f} ms",
                    f"{warm[backend]['peak_rss_mib']:,.0f}",
                    "yes" if warm[backend]["torch"] else "no",
                ]
            )
    info = {"machine": machine(), "cold": cold, "warm": warm, "same_citations": same, "loadavg": load}
    print(f"### Cold and warm evidence-only questions ({args.rounds} cold rounds, {args.questions} warm questions)\n")
    print(md_table(["run", "median", "max / p95", "peak RSS MiB", "torch imported"], rows))
    print(
        f"\nsame citations torch vs onnx in every cold run: {same}; load average during cold runs: "
        f"{min(load):.1f}-{max(load):.1f}"
    )
    print(f"machine: {info['machine']}")
    print(f"results: {save('cold_start', info)}")


if __name__ == "__main__":
    main()
