"""A question from a fresh `longqa ask` process, through the warm server, and in a warm process, side
by side (issue #32).

The bundled sample report (samples/harbor_annual_report.md, ~25k words) is indexed once (not timed).
Then, in rounds, each variant runs in turn, so every variant sees the same load:

  in-process cold   `longqa ask DOC QUESTION --json -q` answered in a new process (`cli.main(argv)`,
                    the path with `--no-warm`), evidence only (no model): wall time from spawn to exit,
                    the process's peak RSS, whether torch was imported; per embedder backend
  ... reader        the same, but starting a file-reader process as every ask did before (the reader
                    starts only when a file must be read now)
  warm first        `longqa ask ...` (the console script pip installed beside this interpreter; until
                    2026-11-26 this bench ran `python -m longqa.cli`, which missed an import only the
                    script paid) with no warm server running:
                    it starts the server, waits for its imports, and is answered by it
  warm next         the same command with the server running (`--next` per round, `--pause` seconds
                    before each), its question taken by the standby that rehearsed the last ask; and
                    side by side, alternating, the same through a server of a copy of the index with
                    standbys off (LONGQA_WARM_STANDBY=0: a child forked per question, as before)
  after index       the server stopped, `longqa index DOC` run (nothing changed: it starts the warm server
                    and returns), then the same command at once: the first question after an index;
                    and how long after the index returns the server it started answers
  warm run_question in one process per backend, after one untimed question: `run_question` (the CLI's
                    in-process path) for each question, every cached query vector dropped first;
                    `compile each call` compiles the graph per question as `run_question` did before #32;
                    `bridge searches one after the other` runs a question's bridge searches in turn, as
                    before they ran at once

Backends: `torch` (sentence-transformers, the path before #32) and `onnx` (ONNX Runtime, the default).
The citations of every run are compared across variants.

    python bench/cold_start.py --rounds 5 --questions 20 [--backends onnx] [--next 3] [--pause 1]
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

from bench.common import longqa_command, machine, md_table, measured_process, offline_env, save  # noqa: E402

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
NEXT = "warm server, next asks (a standby rehearsed the last ask)"
NEXT_PLAIN = "warm server, next asks, standbys off (LONGQA_WARM_STANDBY=0: a fresh child each)"

COLD = """
import contextlib, io, json, os, resource, sys
from longqa import cli
if os.environ.get("BENCH_START_READER"):  # as every ask did before: a reader process started at once
    from longqa.contracts.settings import Settings
    from longqa.retrieval.read.bounded import reader_for
    reader_for(Settings().read_limits())
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
from longqa.runner.ask import run_question
from longqa.contracts.settings import Settings
from longqa.graph.graph import build_graph
from longqa.retrieval.search.search import forget_query
import longqa.runner.ask as ask
import longqa.nodes.retrieve as retrieve
compiled = ask.compiled_graph
doc, n = sys.argv[1], int(sys.argv[2])
questions = json.loads(sys.argv[3])
settings = Settings()
run_question([doc], questions[0], settings, progress=None)
together = retrieve.with_bridges
def one_after_the_other(*args, **kw):  # the bridge searches as before 2026-11-26 (third session)
    kw.pop("search_all", None)
    return together(*args, **kw)
out = {"warm": [], "compile each call": [], "bridge searches one after the other": []}
for i in range(n):
    for variant in out:
        q = questions[i % len(questions)]
        forget_query()
        if variant == "compile each call":  # the path before #32: a new compiled graph per question
            ask.compiled_graph = lambda checkpointer=None: build_graph().compile()
        else:
            ask.compiled_graph = compiled
        retrieve.with_bridges = one_after_the_other if variant.startswith("bridge") else together
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


def command(args: list[str], env: dict[str, str]) -> tuple[list, float, float]:
    """Run the `longqa` command itself (the warm client's path): (its citations, wall seconds from
    spawn to exit, the client process's own peak RSS MiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        code, wall, rss = measured_process([*longqa_command(), *args], env=env, stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        if code:
            raise RuntimeError(f"failed ({code}): {err.read().decode()[-3000:]}")
        cited = [[c["source"], c["start"], c["end"]] for c in json.loads(out.read())["citations"] or []]
    return cited, wall, rss


def server_rss(home: Path) -> float | None:
    """The warm server's peak RSS (MiB), from /proc."""
    from longqa.cli.warm_client import status

    server = status(home)
    if server is None:
        return None
    for line in Path(f"/proc/{server['pid']}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def stop_server(home: Path, env: dict[str, str]) -> None:
    from longqa.cli.warm_client import status

    subprocess.run([sys.executable, "-m", "longqa.cli", "warm", "stop"], env=env, check=True, capture_output=True)
    deadline = time.monotonic() + 60
    while status(home) is not None and time.monotonic() < deadline:
        time.sleep(0.1)


def index_with_no_server(home: Path, env: dict[str, str]) -> None:
    """The warm server stopped, then `longqa index DOC` (unchanged: nothing embedded; it starts the server)."""
    stop_server(home, env)
    subprocess.run([*longqa_command(), "index", str(DOC), "-q"], env=env, check=True)


def cold_rounds(args, env: dict[str, str], home: Path, plain_home: Path) -> tuple[dict, dict, list]:
    """Every cold variant in turn, `args.rounds` times: {variant: [(wall, rss, torch)]}, citations, loads.
    `plain_home` holds the same index, served with standbys off (LONGQA_WARM_STANDBY=0)."""
    from longqa.cli.warm_client import status

    warm_env = {**env, "LONGQA_WARM": "1", "LONGQA_EMBEDDER_BACKEND": "onnx"}
    plain_env = {**warm_env, "LONGQA_HOME": str(plain_home), "LONGQA_WARM_STANDBY": "0"}
    command(["ask", str(DOC), QUESTIONS[0], "--json", "-q"], plain_env)  # starts its server, not timed
    cold: dict[str, list] = {}
    citations: dict[str, list] = {}
    load = []

    def record(variant: str, wall: float, rss: float, torch: bool, cited: list) -> None:
        cold.setdefault(variant, []).append((wall, rss, torch))
        citations.setdefault(variant, []).append(cited)
        load.append(os.getloadavg()[0])
        print(f"{variant}: {wall:.2f} s, {rss:,.0f} MiB", file=sys.stderr, flush=True)

    for r in range(args.rounds):
        q = QUESTIONS[r % len(QUESTIONS)]
        ask = ["ask", str(DOC), q, "--json", "-q"]
        stop_server(home, warm_env)
        cited, wall, rss = command(ask, warm_env)
        record("warm server, first ask (starts it)", wall, rss, False, cited)
        for _ in range(args.next):  # a pause before each, as between a person's questions (--pause)
            time.sleep(args.pause)
            cited, wall, rss = command(ask, warm_env)
            record(NEXT, wall, rss, False, cited)
            time.sleep(args.pause)
            cited, wall, rss = command(ask, plain_env)
            record(NEXT_PLAIN, wall, rss, False, cited)
        index_with_no_server(home, warm_env)  # then ask at once
        cited, wall, rss = command(ask, warm_env)
        record("first ask right after `longqa index` (the index started the server)", wall, rss, False, cited)
        index_with_no_server(home, warm_env)  # again, timing how long after the index returns the server answers
        ready = time.perf_counter()
        while status(home) is None:
            time.sleep(0.02)
        cold.setdefault("warm server ready, after `longqa index` returned", []).append(
            (time.perf_counter() - ready, 0.0, False)
        )
        for backend in args.backends:
            variant_env = {**env, "LONGQA_EMBEDDER_BACKEND": backend}
            result, wall, rss = run(COLD, [str(DOC), q], variant_env)
            record(f"in-process cold ({backend})", wall, rss, result["torch"], result["citations"])
        result, wall, rss = run(COLD, [str(DOC), q], {**env, "BENCH_START_READER": "1"})
        record(
            "in-process cold (onnx), reader process started (before)", wall, rss, result["torch"], result["citations"]
        )
    return cold, citations, load


def same_citations(citations: dict[str, list], rounds: int, per_round: dict[str, int]) -> bool:
    """Whether every variant cited the same spans as the others for each round's question."""
    by_round = []
    for r in range(rounds):
        seen = []
        for variant, cited in citations.items():
            k = per_round.get(variant, 1)
            seen += cited[r * k : (r + 1) * k]
        by_round.append(all(c == seen[0] for c in seen))
    return all(by_round)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="cold rounds (each: every cold variant once)")
    p.add_argument("--questions", type=int, default=20, help="warm in-process questions per variant")
    p.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS), help="embedder backends")
    p.add_argument("--next", type=int, default=3, help="asks through the running warm server per round")
    p.add_argument("--pause", type=float, default=1.0, help="seconds before each of those asks")
    args = p.parse_args(argv)
    offline_env()
    home = Path(tempfile.mkdtemp(prefix="longqa-coldstart-"))
    env = {**os.environ, "LONGQA_HOME": str(home), "LONGQA_WARM": "0"}
    env.pop("LONGQA_MODEL", None)
    plain_home = Path(tempfile.mkdtemp(prefix="longqa-coldstart-plain-"))  # the same index, standbys off
    plain = {**env, "LONGQA_HOME": str(plain_home)}
    for each in (env, plain):
        subprocess.run([sys.executable, "-m", "longqa.cli", "index", str(DOC), "-q"], env=each, check=True)
    subprocess.run([sys.executable, "-m", "longqa.retrieval.index.embed.onnx_export"], env=env, check=True)
    cold, citations, load = cold_rounds(args, env, home, plain_home)
    server_peak = server_rss(home)
    stop_server(home, {**env, "LONGQA_WARM": "1"})
    stop_server(plain_home, {**plain, "LONGQA_WARM": "1", "LONGQA_WARM_STANDBY": "0"})
    warm = {}
    for backend in args.backends:
        result, _, rss = run(
            WARM,
            [str(DOC), str(args.questions), json.dumps(QUESTIONS)],
            {**env, "LONGQA_EMBEDDER_BACKEND": backend},
        )
        loaded = {"peak_rss_mib": rss, "torch": result.pop("torch")}
        warm[backend] = {v: stats(seconds) for v, seconds in result.items()} | loaded
    same = same_citations(citations, args.rounds, {NEXT: args.next, NEXT_PLAIN: args.next})
    rows = []
    for variant, runs in cold.items():
        walls = [w for w, _, _ in runs]
        rows.append(
            [
                variant,
                f"{statistics.median(walls):.2f} s",
                f"{max(walls):.2f} s",
                f"{max(r for _, r, _ in runs):,.0f}" if any(r for _, r, _ in runs) else "-",  # "-": no process
                "yes" if any(t for _, _, t in runs) else "no",
            ]
        )
    for backend in args.backends:
        for variant in ("compile each call", "bridge searches one after the other", "warm"):
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
    info["server_peak_rss_mib"] = server_peak
    print(f"### Cold, warm-server and warm evidence-only questions ({args.rounds} rounds, {args.questions} warm)\n")
    print(md_table(["run", "median", "max / p95", "peak RSS MiB", "torch imported"], rows))
    print(
        f"\nsame citations in every variant, each round: {same}; load average during the rounds: "
        f"{min(load):.1f}-{max(load):.1f}"
    )
    print(f"warm server's peak RSS: {server_peak or 0:,.0f} MiB (the client's own is in the table)")
    print(f"machine: {info['machine']}")
    print(f"results: {save('cold_start', info)}")


if __name__ == "__main__":
    main()
