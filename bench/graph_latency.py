"""Graph latency benchmark: every strategy, run through the real graph over HTTP, with a fixed LLM latency.

    python bench/graph_latency.py --n 20 --latency 0.2 [--strategies rag,lc,...] [--out results.json]

Run on demand; never part of the test suite (it takes minutes).

What it does
- Builds long-context questions from ../shared/data: half HotpotQA (`hotpotqa_a.jsonl`, bridge and
  comparison alternating) and half MuSiQue (`musique_a.json`), sampled with `--seed`. Each context is
  built LongBench-style: the item's own paragraphs plus distractor paragraphs of other items of the
  same set, shuffled (seeded) to about `--words` words (9,000), formatted `Passage N:\\n<title>\\n<text>`;
  it is passed to the graph inline (`texts`).
- Starts `tests/openai_stub.py` (an OpenAI-compatible HTTP server on 127.0.0.1) with a fixed latency
  L per request (`--latency`) and the scripted reply logic (`llm.scripted`), so every LLM call goes
  over the wire through `langchain_openai.ChatOpenAI`. Usage counts come back from the server: the
  stub counts the prompt and reply with the project's offline tokenizer (`--count tokenizer`, the
  default) or whitespace words (`--count words`).
- Indexes every document at every granularity any strategy uses, and runs each strategy once on the
  first question, before timing: the numbers are for a warm index and warm clients.
- Runs every question through each strategy, one question at a time, and reports per strategy the
  mean per question of: wall time; LLM calls (all, and on the critical path); input and output
  tokens; cost = input + 4 x output (OkraLong's weighting); and the non-LLM overhead
  = wall - critical-path calls x L. The overhead is split, over the critical path's calls, into
  "stub" (the stub's own time beyond L: scripted reply, token counting, JSON — it runs in this
  process), "http" (the rest of the client-measured call time: HTTP, the openai client, LangChain)
  and "graph" (wall minus the client-measured call time: prepare, retrieval, context processing,
  LangGraph itself).

The critical path (rule, derived from the run's route and its usage ledger). The graph's LLM nodes
run in supersteps: analyze, split_question, each reason_step hop, generate and long_context are
each a superstep of their own and run one after another. After process_context, `extract` and
`cot` run in the SAME superstep (both are targets of one conditional edge), and the per-chunk
`filter` calls are a `Send` fan-out: ONE superstep however many chunks. `generate` waits for both
branches (with the filter on, extract hands over to the cot branch). So

    critical = #analyze + #split_question + #reason_step + [extract or cot ran] + [any filter ran]
               + #generate + #long_context

counting only calls that were made (a usage record exists: a step-wise draft answer skips the
generate call). Retrieve fan-outs (one Send per sub-question or hop query) make no LLM call.
The rule is cross-checked on every run against the measured critical path: the number of distinct
LangGraph supersteps (`langgraph_step` in the callback metadata) in which a model call completed.

It also measures the two fan-outs directly: for each run with a per-chunk filter of k >= 2 chunks,
the span from the first filter request reaching the stub to the last reply leaving it (and the
client-side superstep wall time), against L and k x L; and for each split run, the wall time of the
superstep that retrieves the m sub-questions in parallel against the sum of the m retrieve times
(retrieval makes no LLM call: there it is local search time, not L). LangGraph runs a superstep's
tasks on a thread pool (`max_concurrency`, default Python's min(32, cpus + 4) threads): a fan-out
wider than the pool runs in waves, each about one L; the report shows the pool size and the waves.
Indexing is CPU-bound (MiniLM embeddings): about a minute per 9,000-word document on 2 cores, so
use `--home DIR` to keep the index between runs.

Answers are scripted (`llm.scripted`): token counts are real given the retrieval (they are the
prompts the graph really builds from what it retrieved), answer quality needs a real model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/graph_latency.py` as well as `python -m bench.graph_latency`
    sys.path.insert(0, str(ROOT))

# offline before anything imports transformers / the tokenizer (default_counter() caches its choice)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LONGQA_TOKENIZER", "wordpiece")

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SEEDS = ROOT.parent / "shared" / "seeds"
OKRALONG_SEED = SEEDS / "004_65b7aa934b1fa8d0.txt"
ALL_STRATEGIES = ("rag", "lc", "self-route", "longrag", "longrag-ext", "longrag-fil", "adaptive", "adaptive-precise")
SCRIPTED_NOTE = "answers are scripted: token counts are real given the retrieval, answer quality needs a real model"


# -- questions and long contexts ------------------------------------------------------------------


@dataclass
class Question:
    qid: str
    dataset: str
    kind: str
    question: str
    answer: str
    context: str
    words: int
    supporting_titles: list[str] = field(default_factory=list)


def _passages_text(passages: list[tuple[str, str]]) -> str:
    return "\n\n".join(f"Passage {i}:\n{title}\n{text}" for i, (title, text) in enumerate(passages, 1))


def _long_context(
    own: list[tuple[str, str]], pool: list[tuple[str, str]], target_words: int, rng: random.Random
) -> list[tuple[str, str]]:
    """LongBench-style: the item's paragraphs plus distractors from other items until ~target words."""
    titles = {t for t, _ in own}
    passages = list(own)
    words = sum(len(t.split()) + len(x.split()) for t, x in passages)
    for title, text in rng.sample(pool, len(pool)):
        if words >= target_words:
            break
        if title in titles:
            continue
        titles.add(title)
        passages.append((title, text))
        words += len(title.split()) + len(text.split())
    rng.shuffle(passages)
    return passages


def _questions(
    dataset: str,
    items: list[dict],
    chosen: list[dict],
    paragraphs: Callable[[dict], list[tuple[str, str]]],
    kind: Callable[[dict], str],
    supporting: Callable[[dict], list[str]],
    target_words: int,
    seed: int,
) -> list[Question]:
    """Each chosen item over a long context: its own paragraphs among distractors from the other items."""
    out = []
    for item in chosen:
        pool = [p for other in items if other["id"] != item["id"] for p in paragraphs(other)]
        passages = _long_context(paragraphs(item), pool, target_words, random.Random(f"{seed}-{item['id']}"))
        text = _passages_text(passages)
        out.append(
            Question(
                item["id"],
                dataset,
                kind(item),
                item["question"],
                item["answer"],
                text,
                len(text.split()),
                supporting(item),
            )
        )
    return out


def load_hotpotqa(n: int, target_words: int, seed: int) -> list[Question]:
    items = [json.loads(line) for line in (DATA / "hotpotqa_a.jsonl").read_text("utf-8").splitlines() if line]
    rng = random.Random(seed)
    by_type = {
        t: rng.sample([x for x in items if x["type"] == t], sum(1 for x in items if x["type"] == t))
        for t in ("bridge", "comparison")
    }
    chosen = [by_type["bridge" if i % 2 == 0 else "comparison"][i // 2] for i in range(n)]

    def paragraphs(item: dict) -> list[tuple[str, str]]:
        return [
            (t, "".join(s).strip()) for t, s in zip(item["context"]["title"], item["context"]["sentences"], strict=True)
        ]

    def supporting(item: dict) -> list[str]:
        return sorted(set(item["supporting_facts"]["title"]))

    return _questions("hotpotqa", items, chosen, paragraphs, lambda i: i["type"], supporting, target_words, seed)


def load_musique(n: int, target_words: int, seed: int) -> list[Question]:
    items = json.loads((DATA / "musique_a.json").read_text("utf-8"))
    chosen = random.Random(seed).sample(items, n)

    def paragraphs(item: dict) -> list[tuple[str, str]]:
        return [(p["title"], p["paragraph_text"].strip()) for p in item["paragraphs"]]

    def supporting(item: dict) -> list[str]:
        return sorted({p["title"] for p in item["paragraphs"] if p["is_supporting"]})

    def kind(item: dict) -> str:
        return item["id"].split("__")[0]

    return _questions("musique", items, chosen, paragraphs, kind, supporting, target_words, seed)


def build_questions(n: int, target_words: int, seed: int) -> list[Question]:
    n_hotpot = (n + 1) // 2
    hotpot, musique = load_hotpotqa(n_hotpot, target_words, seed), load_musique(n - n_hotpot, target_words, seed)
    mixed = []
    for i in range(max(len(hotpot), len(musique))):  # interleave, so any prefix mixes both sets
        mixed += hotpot[i : i + 1] + musique[i : i + 1]
    return mixed


# -- measuring supersteps -----------------------------------------------------------------------


class StepTimer(BaseCallbackHandler):
    """Client-side timings: each graph task (node run, with its superstep) and each model call."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.root: Any = None
        self.tasks: dict[Any, dict] = {}
        self.calls: dict[Any, dict] = {}

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, metadata=None, **kwargs):
        now = time.perf_counter()
        with self.lock:
            if parent_run_id is None:
                self.root = run_id
            elif parent_run_id == self.root and metadata and "langgraph_node" in metadata:
                self.tasks[run_id] = {
                    "node": metadata["langgraph_node"],
                    "step": metadata.get("langgraph_step"),
                    "start": now,
                    "end": None,
                }

    def _end_task(self, run_id) -> None:
        now = time.perf_counter()
        with self.lock:
            if run_id in self.tasks:
                self.tasks[run_id]["end"] = now

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        self._end_task(run_id)

    def on_chain_error(self, error, *, run_id, **kwargs):
        self._end_task(run_id)

    def on_chat_model_start(self, serialized, messages, *, run_id, metadata=None, **kwargs):
        now = time.perf_counter()
        metadata = metadata or {}
        with self.lock:
            self.calls[run_id] = {
                "node": metadata.get("langgraph_node"),
                "step": metadata.get("langgraph_step"),
                "start": now,
                "end": None,
                "ok": None,
            }

    def _end_call(self, run_id, ok: bool) -> None:
        now = time.perf_counter()
        with self.lock:
            if run_id in self.calls:
                self.calls[run_id].update(end=now, ok=ok)

    def on_llm_end(self, response, *, run_id, **kwargs):
        self._end_call(run_id, True)

    def on_llm_error(self, error, *, run_id, **kwargs):
        self._end_call(run_id, False)

    def llm_steps(self) -> dict[Any, dict]:
        """superstep -> the longest completed model call in it (client side: start, end)."""
        steps: dict[Any, dict] = {}
        for c in self.calls.values():
            if c["ok"] and (
                c["step"] not in steps or c["end"] - c["start"] > steps[c["step"]]["end"] - steps[c["step"]]["start"]
            ):
                steps[c["step"]] = c
        return steps

    def step_span(self, node: str) -> list[dict]:
        """Per superstep that ran `node` more than once: how many tasks, wall span, sum of durations."""
        by_step: dict[Any, list[dict]] = {}
        for t in self.tasks.values():
            if t["node"] == node and t["end"] is not None:
                by_step.setdefault(t["step"], []).append(t)
        return [
            {
                "m": len(ts),
                "wall": max(t["end"] for t in ts) - min(t["start"] for t in ts),
                "sum": sum(t["end"] - t["start"] for t in ts),
            }
            for ts in by_step.values()
            if len(ts) >= 2
        ]


def critical_path_calls(usage_nodes: list[str]) -> int:
    """The rule of the module docstring, from the nodes of the usage ledger (calls made)."""
    c = Counter(usage_nodes)
    return (
        c["analyze"]
        + c["split_question"]
        + c["reason_step"]
        + int(bool(c["extract"] or c["cot"]))
        + int(bool(c["filter"]))
        + c["generate"]
        + c["long_context"]
    )


# -- one run ------------------------------------------------------------------------------------


@dataclass
class Run:
    strategy: str
    qid: str
    dataset: str
    status: str
    wall_s: float
    calls: int
    critical: int
    critical_measured: int
    input_tokens: int
    output_tokens: int
    cost: int
    llm_path_s: float  # client-side: the longest model call of each LLM superstep, summed
    stub_path_s: float  # server-side time beyond L of those calls (the stub's scripted reply, counting, JSON)
    overhead_s: float  # wall - critical x L
    route: list[str]
    workflow: str | None
    filter_k: int = 0
    filter_stub_span_s: float | None = None
    filter_step_wall_s: float | None = None
    split_retrieves: list[dict] = field(default_factory=list)
    stub_requests: int = 0
    error: str | None = None


def run_one(
    graph, stub, question: Question, strategy: str, context: dict, latency: float, max_concurrency: int | None
) -> Run:
    from longqa.llm.scripted import prompt_kind
    from tests.openai_stub import prompt_text

    stub.reset()
    timer = StepTimer()
    config: dict = {"callbacks": [timer]}
    if max_concurrency:
        config["max_concurrency"] = max_concurrency
    t0 = time.perf_counter()
    out = graph.invoke(
        {"question": question.question, "texts": [question.context]},
        context={**context, "strategy": strategy},
        config=config,
    )
    wall = time.perf_counter() - t0
    records = out.get("usage") or []
    totals = out.get("totals") or {}
    nodes = [r["node"] for r in records]
    critical = critical_path_calls(nodes)
    steps = timer.llm_steps()
    timings = stub.timings
    stub_path = 0.0
    for call in steps.values():  # the stub's own time in each critical call (same clock, same process)
        inside = [
            t["end"] - t["start"]
            for t in timings
            if t["end"] is not None and call["start"] <= t["start"] and t["end"] <= call["end"]
        ]
        stub_path += max(inside) - latency if inside else 0.0
    run = Run(
        strategy=strategy,
        qid=question.qid,
        dataset=question.dataset,
        status=out.get("status") or "?",
        wall_s=wall,
        calls=len(records),
        critical=critical,
        critical_measured=len(steps),
        input_tokens=totals.get("input_tokens", 0),
        output_tokens=totals.get("output_tokens", 0),
        cost=totals.get("cost", 0),
        llm_path_s=sum(c["end"] - c["start"] for c in steps.values()),
        stub_path_s=stub_path,
        overhead_s=wall - critical * latency,
        route=out.get("route") or [],
        workflow=(out.get("plan") or {}).get("workflow"),
        stub_requests=len(stub.requests),
        error=out.get("error"),
    )
    filters = [
        t
        for b, t in zip(stub.requests, timings, strict=True)
        if prompt_kind(prompt_text(b.get("messages") or [])) == "filter" and t["end"] is not None
    ]
    if len(filters) >= 2:
        run.filter_k = len(filters)
        run.filter_stub_span_s = max(t["end"] for t in filters) - min(t["start"] for t in filters)
        spans = timer.step_span("filter")
        run.filter_step_wall_s = spans[0]["wall"] if spans else None
    if "split_question" in run.route:
        run.split_retrieves = timer.step_span("retrieve")
    return run


# -- warm-up ------------------------------------------------------------------------------------


def granularities(context: dict) -> list[int]:
    from longqa.contracts.plan import preset
    from longqa.contracts.settings import Settings

    s = Settings(**context)
    sizes = {s.primary_granularity, s.base_granularity, s.absent_factoid_granularity, s.absent_contextual_granularity}
    sizes |= {p.granularity for p in (preset(x, s) for x in ALL_STRATEGIES) if p is not None}
    return sorted(sizes)


def warm_index(questions: list[Question], context: dict) -> float:
    """Index each document at every granularity and prime the searchers; returns seconds."""
    from longqa.contracts.settings import Settings
    from longqa.retrieval import document_from_text
    from longqa.services.stores import searcher_for, store_for

    t0 = time.perf_counter()
    settings = Settings(**context)
    store = store_for(settings)
    sizes = granularities(context)
    for i, q in enumerate(questions, 1):
        document = document_from_text(q.context, source="text-1", max_words=store.settings.max_words)
        store.remember(document)
        for g in sizes:
            store.index(document, g)
        searcher = searcher_for(settings, [document.doc_id])
        for g in sizes:
            for mode in ("hybrid", "dense"):
                searcher.search(q.question, k=5, granularity=g, mode=mode)
        print(f"  indexed {i}/{len(questions)} ({q.words:,} words) at {sizes} tokens", file=sys.stderr, flush=True)
    return time.perf_counter() - t0


# -- OkraLong table 1 (context only) --------------------------------------------------------------


def okralong_table1() -> list[str]:
    """The cost columns of OkraLong's table 1, quoted from the seed text, with line numbers."""
    if not OKRALONG_SEED.exists():
        return [f"(OkraLong table 1 not found: {OKRALONG_SEED} is missing)"]
    lines = OKRALONG_SEED.read_text("utf-8").splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("Method\tAver")), None)
    caption = next((i for i, line in enumerate(lines) if line.startswith("Table 1:")), None)
    weight = next((i for i, line in enumerate(lines) if "four times higher than input" in line), None)
    if header is None:
        return ["(OkraLong table 1 not found in the seed text)"]
    rows = []
    for i in range(header + 2, len(lines)):
        cells = [re.sub(r"<[^>]+>|\*", "", c).strip() for c in lines[i].split("\t")]
        if len(cells) != 15:
            if rows:
                break
            continue
        rows.append((i + 1, cells))
    out = [
        f"OkraLong table 1, cost column (x10^3 tokens per question, GPT-4o; quoted from "
        f"{OKRALONG_SEED.name} lines {rows[0][0]}-{rows[-1][0]}"
        + (f", caption line {caption + 1}" if caption is not None else "")
        + "):"
    ]
    if weight is not None:
        out.append(
            f'  (line {weight + 1}: "we apply a cost-weight to output tokens four times higher than input tokens")'
        )
    out.append(f"  {'method':<18} {'average':>8} {'HotpotQA':>9} {'2WikiMQA':>9}")
    for _, cells in rows:
        out.append(f"  {cells[0]:<18} {cells[2]:>8} {cells[12]:>9} {cells[14]:>9}")
    out.append(
        "  ours -> theirs: rag ~ Std-RAG, lc ~ LC, adaptive ~ OkraLong, adaptive-precise ~ w/ Precise Mode. "
        "Context only: different model, tokenizer, datasets and documents; not comparable numbers."
    )
    return out


# -- report -------------------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def summarize(runs: list[Run], strategies: list[str], latency: float) -> list[dict]:
    rows = []
    for s in strategies:
        rs = [r for r in runs if r.strategy == s]
        if not rs:
            continue
        status = Counter(r.status for r in rs)
        rows.append(
            {
                "strategy": s,
                "n": len(rs),
                "answered": status.get("answered", 0),
                "unanswerable": status.get("unanswerable", 0),
                "error": status.get("error", 0)
                + sum(v for k, v in status.items() if k not in ("answered", "unanswerable", "error")),
                "wall_s": _mean([r.wall_s for r in rs]),
                "calls": _mean([r.calls for r in rs]),
                "critical": _mean([r.critical for r in rs]),
                "input_tokens": _mean([r.input_tokens for r in rs]),
                "output_tokens": _mean([r.output_tokens for r in rs]),
                "cost": _mean([r.cost for r in rs]),
                "overhead_s": _mean([r.overhead_s for r in rs]),
                "stub_s": _mean([r.stub_path_s for r in rs]),
                "http_s": _mean([r.llm_path_s - r.critical * latency - r.stub_path_s for r in rs]),
                "graph_s": _mean([r.wall_s - r.llm_path_s for r in rs]),
                "rule_agrees": sum(r.critical == r.critical_measured for r in rs),
            }
        )
    return rows


def print_report(
    runs: list[Run], strategies: list[str], args, questions: list[Question], index_s: float, default_workers: int
) -> list[dict]:
    latency = args.latency
    rows = summarize(runs, strategies, latency)
    datasets = Counter(q.dataset for q in questions)
    words = [q.words for q in questions]
    print()
    print(
        f"Graph latency over HTTP (OpenAI-compatible stub, L = {latency:g} s per LLM call), "
        f"{len(questions)} questions ({', '.join(f'{v} {k}' for k, v in sorted(datasets.items()))}), "
        f"contexts {min(words):,}-{max(words):,} words; warm index (indexing took {index_s:.1f} s, untimed)."
    )
    print(f"Tokens: the stub's counts ({args.count}); cost = input + 4 x output. Means per question.")
    print()
    head = (
        f"{'strategy':<17}{'ans/unk/err':>12}{'wall s':>8}{'calls':>7}{'crit':>6}{'in tok':>9}{'out tok':>8}"
        f"{'cost':>9}{'crit*L s':>9}{'ovh ms':>8}{'stub ms':>8}{'http ms':>8}{'graph ms':>9}{'rule':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['strategy']:<17}{r['answered']:>4}/{r['unanswerable']}/{r['error']:<4}"
            f"{r['wall_s']:>8.2f}{r['calls']:>7.2f}{r['critical']:>6.2f}{r['input_tokens']:>9.0f}"
            f"{r['output_tokens']:>8.0f}{r['cost']:>9.0f}{r['critical'] * latency:>9.2f}"
            f"{r['overhead_s'] * 1000:>8.0f}{r['stub_s'] * 1000:>8.0f}{r['http_s'] * 1000:>8.0f}"
            f"{r['graph_s'] * 1000:>9.0f}"
            f"{r['rule_agrees']:>4}/{r['n']}"
        )
    print()
    print(
        "  ovh = wall - crit x L (non-LLM overhead) = stub + http + graph, summed over the critical path: "
        "stub = the stub's own time beyond L (scripted reply, token counting, JSON; it shares this process and "
        "its GIL); http = the rest of the client-measured model-call time (HTTP, openai client, LangChain); "
        "graph = wall - client model-call time (prepare, retrieval, context processing, LangGraph). "
        "rule = runs where the critical-path rule equals the measured number of LLM supersteps."
    )
    print(
        "  critical path rule: analyze, split_question, each reason_step hop, generate and long_context are one "
        "superstep each; extract and cot share one superstep; the k per-chunk filter calls are one Send fan-out "
        "superstep; only calls actually made count."
    )

    print()
    print("Fan-outs: one superstep costs about one L, not k x L")
    filt = [r for r in runs if r.filter_k >= 2]
    if filt:
        by_k: dict[int, list[Run]] = {}
        for r in filt:
            by_k.setdefault(r.filter_k, []).append(r)
        print(
            f"  per-chunk CoT filter (longrag, longrag-fil, adaptive with filter): L = {latency:g} s; "
            f"LangGraph's thread pool here has {default_workers} workers"
            + (
                f" (--max-concurrency {args.max_concurrency})"
                if args.max_concurrency
                else " (default: min(32, cpus + 4))"
            )
        )
        print(f"    {'k':>3}{'runs':>6}{'stub span s':>13}{'step wall s':>13}{'span/L':>8}{'waves':>7}{'k x L s':>9}")
        for k in sorted(by_k):
            rs = by_k[k]
            span = _mean([r.filter_stub_span_s for r in rs])
            wall = _mean([r.filter_step_wall_s for r in rs if r.filter_step_wall_s is not None])
            waves = -(-k // default_workers)
            print(
                f"    {k:>3}{len(rs):>6}{span:>13.3f}{wall:>13.3f}{span / latency:>8.2f}{waves:>7}{k * latency:>9.2f}"
            )
        print(
            "    stub span = first filter request in -> last filter reply out (server clock); step wall = the "
            "filter superstep, client side; waves = ceil(k / workers): more chunks than pool threads run in "
            "waves of about one L each (raise with --max-concurrency)."
        )
    else:
        print("  per-chunk CoT filter: no run judged >= 2 chunks")
    splits = [s for r in runs for s in r.split_retrieves]
    if splits:
        print(
            f"  sub-question retrieval (split workflow): {len(splits)} fan-out(s) of "
            f"{'/'.join(str(m) for m in sorted({s['m'] for s in splits}))} retrieves; superstep wall "
            f"{_mean([s['wall'] for s in splits]) * 1000:.0f} ms vs the sum of the retrieves "
            f"{_mean([s['sum'] for s in splits]) * 1000:.0f} ms (no LLM call: local search time, not L; "
            f"the split itself is one LLM call = one L)"
        )
    else:
        n_split = sum(1 for r in runs if "split_question" in r.route)
        print(f"  sub-question retrieval: {n_split} split run(s), none retrieved >= 2 sub-questions in one superstep")
    print()
    for line in okralong_table1():
        print(line)
    print()
    print(SCRIPTED_NOTE)
    return rows


# -- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20, help="questions (half HotpotQA, half MuSiQue); default 20")
    parser.add_argument("--latency", type=float, default=0.2, help="fixed latency L per LLM call, seconds (0.2)")
    parser.add_argument("--strategies", default=",".join(ALL_STRATEGIES), help="comma-separated (default: all)")
    parser.add_argument("--out", type=Path, help="write per-run records and the summary as JSON")
    parser.add_argument("--words", type=int, default=9000, help="target context length in words (9000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--home", type=Path, help="index directory to use/reuse (default: a temporary one)")
    parser.add_argument("--context-window", type=int, default=32768, help="the model's window in tokens (32768)")
    parser.add_argument(
        "--count",
        choices=("tokenizer", "words"),
        default="tokenizer",
        help="how the stub counts usage: the project's offline tokenizer, or whitespace words",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="LangGraph max_concurrency (default: its thread pool's default)",
    )
    args = parser.parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in ALL_STRATEGIES]
    if unknown or not strategies or args.n < 1 or args.latency < 0:
        parser.error(
            f"bad arguments: unknown strategies {unknown}"
            if unknown
            else "need --n >= 1, --latency >= 0 and at least one strategy"
        )

    from longqa.graph.graph import graph
    from longqa.retrieval.tokens import default_counter
    from tests.openai_stub import OpenAIStub, count_words

    print(f"building {args.n} long-context questions from {DATA} ...", file=sys.stderr, flush=True)
    questions = build_questions(args.n, args.words, args.seed)
    counter = default_counter()
    count_fn = counter.count if args.count == "tokenizer" else count_words
    if args.count == "tokenizer":
        args.count = f"tokenizer {counter.name}"
    default_workers = args.max_concurrency or min(32, (os.cpu_count() or 1) + 4)

    with (
        tempfile.TemporaryDirectory(prefix="longqa-bench-") as tmp,
        OpenAIStub(latency_s=args.latency, count_fn=count_fn) as stub,
    ):
        home = args.home or Path(tmp)
        context = {
            "model": "openai:stub-model",
            "base_url": stub.base_url,
            "home": str(home),
            "context_window": args.context_window,
            "max_retries": 0,
            "timeout_s": 60.0,
        }
        print(f"stub at {stub.base_url}; indexing into {home} ...", file=sys.stderr, flush=True)
        index_s = warm_index(questions, context)
        for s in strategies:  # warm clients, searchers and code paths; untimed
            run_one(graph, stub, questions[0], s, context, args.latency, args.max_concurrency)
        runs: list[Run] = []
        for s in strategies:
            t0 = time.perf_counter()
            for q in questions:
                runs.append(run_one(graph, stub, q, s, context, args.latency, args.max_concurrency))
            print(f"  {s}: {len(questions)} questions in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    rows = print_report(runs, strategies, args, questions, index_s, default_workers)
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "latency_s": args.latency,
                    "n": args.n,
                    "seed": args.seed,
                    "words": args.words,
                    "count": args.count,
                    "note": SCRIPTED_NOTE,
                    "questions": [{k: v for k, v in asdict(q).items() if k != "context"} for q in questions],
                    "summary": rows,
                    "runs": [asdict(r) for r in runs],
                },
                indent=1,
                default=str,
            )
        )
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
