"""Server concurrency: 16 runs over 8 documents at once through `langgraph dev`, per node-execution variant.

    python bench/server_concurrency.py --runs 16 --docs 8 --latency 1.0 --strategy longrag --variants 0,64 --rounds 2

Run on demand; never part of the test suite (minutes per round).

What it does
- Writes `--docs` documents of about `--words` words each (distinct HotpotQA/MuSiQue paragraphs from
  ../shared/data, `bench.common.big_document`, one seed per document) into a documents root, and takes
  questions about each from the HotpotQA items its paragraphs come from.
- Starts `tests/openai_stub.py` (an OpenAI-compatible server on 127.0.0.1, one thread per request, so
  it answers any number of calls at once) with a fixed latency L per call and the scripted replies:
  a stand-in for a model server that batches (vLLM, llama.cpp with parallel slots, a hosted API).
- For each round and each variant (interleaved: A B A B), starts `langgraph dev` on a free port with a
  new, empty index home and `--n-jobs-per-worker` = runs, then:
  - cold: `--runs` runs at once, `runs / docs` per document, the first run on each document indexing it;
  - warm: `--runs` more at once over the same (now indexed) documents, other questions.
  - mixed: `--mixed` new documents (`--mixed-words` each) asked about at once, so each must be
    indexed, and 1 s later one run on a document indexed in the cold phase: its time ("indexed-doc
    run s") shows whether a run that needs no indexing waits for a thread behind the builds.
  Each phase reports its wall time, runs per minute, per-run latency (median, max), the most model
  calls in flight at the stub at one moment, and the server's responsiveness: the latency of `GET /ok`
  polled every 100 ms during the phase (median, max). A blocked event loop shows there first.
- A variant is a value of LONGQA_NODE_THREADS, the server's thread pool for the nodes' own work
  (model calls are awaited on the event loop, llm/model_node.py): `0` is Python's default pool
  (min(32, cpus + 4) threads, what LangGraph's server uses unless told), `64` is longqa's default.

Answers are scripted (the stub's replies), so nothing here is an answer-quality number; what is
measured is how runs share the server while the model works.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import REPO, big_document, machine, md_table, offline_env, save
from tests.test_server_sdk import _free_port, _ok, _stop

HOST = "127.0.0.1"


@dataclass
class Phase:
    variant: str
    round: int
    phase: str
    wall_s: float
    runs: int
    failed: int
    run_median_s: float
    run_max_s: float
    peak_in_flight: int
    model_calls: int
    ok_median_ms: float
    ok_max_ms: float
    late_run_s: float | None = None  # mixed: the run on an indexed document, started 1 s into the phase


def write_documents(root: Path, docs: int, words: int, first: int = 0) -> list[tuple[str, list[str]]]:
    """`docs` files of about `words` words, and the questions each can be asked."""
    out = []
    for i in range(first, first + docs):
        text, questions = big_document(words, seed=1000 + i)
        name = f"doc{i}.md"
        (root / name).write_text(text, "utf-8")
        out.append((name, questions))
    return out


def server_env(home: Path, docs: Path, base_url: str, threads: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_"))}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        ANONYMIZED_TELEMETRY="False",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LONGQA_TOKENIZER="wordpiece",
        LONGQA_HOME=str(home),
        LONGQA_DOCUMENTS_ROOT=str(docs),
        LONGQA_MODEL="openai:stub-model",
        LONGQA_BASE_URL=base_url,
        OPENAI_API_KEY="stub",
        LONGQA_NODE_THREADS=threads,
    )
    return env


def start_server(env: dict[str, str], runs: int, log: Path, workdir: Path) -> tuple[subprocess.Popen, str]:
    """`langgraph dev` in its own working directory: the in-memory server persists its runs to
    `.langgraph_api/` there, and a second server in the same directory would pick them up."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = json.loads((REPO / "langgraph.json").read_text("utf-8"))
    config["dependencies"] = [str(REPO)]
    (workdir / "langgraph.json").write_text(json.dumps(config), "utf-8")
    port = _free_port()
    url = f"http://{HOST}:{port}"
    langgraph = Path(sys.executable).parent / "langgraph"
    command = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", HOST, "--port", str(port)]
    command += ["--config", "langgraph.json", "--n-jobs-per-worker", str(runs)]
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 120
    while not _ok(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            raise RuntimeError(f"langgraph dev did not start; see {log}")
        time.sleep(0.5)
    return proc, url


def peak_in_flight(timings: list[dict]) -> int:
    events = sorted([(t["start"], 1) for t in timings] + [(t["end"] or t["start"], -1) for t in timings])
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


async def phase(
    url: str, jobs: list[tuple[str, str]], strategy: str, late: tuple[str, str] | None = None
) -> tuple[float, list[float], int, list[float], float | None]:
    """Run every (document, question) at once, and `late` 1 s after them; poll /ok meanwhile.
    (wall, run seconds, failures, /ok ms, the late run's seconds)."""
    from langgraph_sdk import get_client

    client = get_client(url=url, timeout=600)
    probes: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            while not done.is_set():
                t0 = time.perf_counter()
                await http.get(f"{url}/ok")
                probes.append((time.perf_counter() - t0) * 1000)
                await asyncio.sleep(0.1)

    async def one(document: str, question: str, after_s: float = 0.0) -> tuple[float, bool]:
        await asyncio.sleep(after_s)
        t0 = time.perf_counter()
        out = await client.runs.wait(
            None, "longqa", input={"question": question, "documents": [document]}, context={"strategy": strategy}
        )
        ok = isinstance(out, dict) and out.get("status") in ("answered", "unanswerable")
        return time.perf_counter() - t0, ok

    prober = asyncio.create_task(probe())
    t0 = time.perf_counter()
    runs = [one(d, q) for d, q in jobs] + ([one(*late, after_s=1.0)] if late else [])
    results = await asyncio.gather(*runs)
    wall = time.perf_counter() - t0
    done.set()
    await prober
    late_s = results.pop()[0] if late else None
    return wall, [s for s, _ in results], sum(not ok for _, ok in results), probes, late_s


def jobs_for(documents: list[tuple[str, list[str]]], runs: int, offset: int) -> list[tuple[str, str]]:
    per = max(1, runs // len(documents))
    jobs = []
    for name, questions in documents:
        jobs += [(name, questions[(offset + j) % len(questions)]) for j in range(per)]
    return jobs[:runs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=16, help="runs at once per phase (16)")
    parser.add_argument("--docs", type=int, default=8, help="documents (8)")
    parser.add_argument("--words", type=int, default=3000, help="words per document (3000)")
    parser.add_argument("--latency", type=float, default=1.0, help="the model's fixed latency L per call, s (1.0)")
    parser.add_argument("--strategy", default="longrag", help="the runs' strategy (longrag: a filter call per chunk)")
    parser.add_argument("--variants", default="0,64", help="LONGQA_NODE_THREADS values to compare (0,64)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds; variants interleave within each (2)")
    parser.add_argument("--mixed", type=int, default=7, help="mixed phase: new documents indexed at once (7; 0: none)")
    parser.add_argument("--mixed-words", type=int, default=12000, help="words per new document (12000)")
    args = parser.parse_args(argv)
    offline_env()
    from tests.openai_stub import OpenAIStub

    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    phases: list[Phase] = []
    with tempfile.TemporaryDirectory(prefix="longqa-concurrency-") as tmp, OpenAIStub(latency_s=args.latency) as stub:
        root = Path(tmp) / "docs"
        root.mkdir()
        documents = write_documents(root, args.docs, args.words)
        fresh = write_documents(root, args.mixed, args.mixed_words, first=args.docs)
        log = Path(tmp) / "server.log"
        for rnd in range(1, args.rounds + 1):
            for variant in variants:
                home = Path(tmp) / f"home-{rnd}-{variant}"
                env = server_env(home, root, stub.base_url, variant)
                proc, url = start_server(env, args.runs, log, Path(tmp) / f"server-{rnd}-{variant}")
                try:
                    plan = [("cold", jobs_for(documents, args.runs, 0), None)]
                    plan.append(("warm", jobs_for(documents, args.runs, 2), None))
                    if fresh:  # new documents indexing while a run on an indexed one comes in
                        plan.append(("mixed", [(d, qs[0]) for d, qs in fresh], (documents[0][0], documents[0][1][1])))
                    for name, jobs, late in plan:
                        stub.reset()
                        wall, seconds, failed, probes, late_s = asyncio.run(phase(url, jobs, args.strategy, late))
                        timings = stub.timings
                        phases.append(
                            Phase(
                                variant=variant,
                                round=rnd,
                                phase=name,
                                wall_s=round(wall, 2),
                                runs=len(seconds),
                                failed=failed,
                                run_median_s=round(statistics.median(seconds), 2),
                                run_max_s=round(max(seconds), 2),
                                peak_in_flight=peak_in_flight(timings),
                                model_calls=len(timings),
                                ok_median_ms=round(statistics.median(probes), 1) if probes else float("nan"),
                                ok_max_ms=round(max(probes), 1) if probes else float("nan"),
                                late_run_s=round(late_s, 2) if late_s is not None else None,
                            )  # fmt: skip
                        )
                        print(phases[-1], file=sys.stderr, flush=True)
                finally:
                    _stop(proc)
    headers = ["variant (node threads)", "round", "phase", "wall s", "runs/min", "failed", "run median s", "run max s",
               "model calls", "peak in flight", "/ok median ms", "/ok max ms", "indexed-doc run s"]  # fmt: skip
    rows = [
        [p.variant if p.variant != "0" else "0 (Python default)", p.round, p.phase, p.wall_s,
         round(60 * p.runs / p.wall_s, 1), p.failed, p.run_median_s, p.run_max_s, p.model_calls, p.peak_in_flight,
         p.ok_median_ms, p.ok_max_ms, "" if p.late_run_s is None else p.late_run_s]
        for p in phases
    ]  # fmt: skip
    print(f"\n{args.runs} runs at once over {args.docs} documents of ~{args.words} words; strategy {args.strategy}; "
          f"model latency L = {args.latency} s (stub; answers scripted)\n")  # fmt: skip
    print(md_table(headers, rows))
    payload = {"args": vars(args), "machine": machine(), "phases": [p.__dict__ for p in phases]}
    path = save("server_concurrency", payload)
    print(f"\nsaved {path}")
    return 0 if not any(p.failed for p in phases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
