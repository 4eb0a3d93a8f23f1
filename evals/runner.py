"""Run strategies over LongBench items through the graph, with a bounded thread pool, a progress
bar and a resumable cache.

Each item's context is passed inline (`texts`) and the run's settings as the graph's context, one
run per item x strategy. What the model read comes from the graph's output alone: `shown` (the
passages the generator was given after the filter, and the long-context spans), or, without a
model, `evidence` (what the generator or the long-context reader would have been given).

Cache: `<out>/results.jsonl`, one JSON record per item x strategy, appended (and flushed) as soon as
a run ends. Its `key` hashes the item id, question and context, the strategy, every Settings field
that can change a result (model, base_url, temperature, context window, analyzer, the OkraLong
numbers, ...; not where indexes live, timeouts or the API-key variable), the token counter and
CACHE_VERSION. A rerun skips the runs whose key is present, so an interrupted evaluation continues
where it stopped, and a changed setting or context runs again (old records stay in the file,
unused). A graph run that ended with status "error" is cached like any result (rerun with
`retry_errors`); a failure of the harness itself is reported and not cached.

Without a model (retrieval-only) `lc`'s record holds the context the long-context step would send,
i.e. the whole document when it fits the window (marked `whole_document`, its text not repeated).

Before the timed runs of an item, its document is indexed at every granularity the strategies may
use, so `seconds` (wall time of one question) does not include building indexes; the indexing time
is reported on its own. It does include embedding the question: the question is dropped from the retrieval's
query-embedding cache before each run, so no strategy rides on another's embedding.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from longqa.contracts.plan import is_adaptive, preset
from longqa.contracts.settings import Settings
from longqa.retrieval import document_from_text
from longqa.retrieval.search.search import forget_query
from longqa.retrieval.tokens import default_counter
from longqa.services.stores import store_for

from .longbench import EvalItem
from .oracle import is_oracle, oracle_settings
from .provenance import code_commit

log = logging.getLogger(__name__)

CACHE_VERSION = 3  # 2: each run embeds its question itself; 3: and its bridge and step queries (forget_query)
RESULTS_FILE = "results.jsonl"
# Settings fields that cannot change a run's result (where things live, how long to wait, which
# variable holds the key, what a server's callers may choose) or that the key names on its own
# (strategy). Any other field, including one added later, is part of the key.
NOT_IN_KEY = frozenset(
    {"home", "chroma_host", "chroma_port", "documents_root", "api_key_env", "timeout_s", "max_retries", "strategy"}
    | {"server", "node_threads", "keys_file", "ceilings", "offered_models"}
)


def settings_fingerprint(settings: Settings) -> dict[str, Any]:
    """The settings that can change a result, as JSON values (every field but NOT_IN_KEY)."""
    return settings.model_dump(mode="json", exclude=set(NOT_IN_KEY))


def _counter_name() -> str:
    return default_counter().name


def cache_key(item: EvalItem, strategy: str, settings: Settings, counter: str | None = None) -> str:
    """The cache key of one run: a hash of the item, the strategy, the result-changing settings, the tokenizer and
    CACHE_VERSION."""
    payload = {
        "v": CACHE_VERSION,
        "id": item.id,
        "dataset": item.dataset,
        "question": item.question,
        "context": item.context_hash,
        "strategy": strategy,
        "settings": settings_fingerprint(settings),
        "tokenizer": counter or _counter_name(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def item_uid(item: EvalItem) -> str:
    """An item's id across datasets: `dataset/id`."""
    return f"{item.dataset}/{item.id}"


class Cache:
    """The append-only results file of an output directory."""

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir)
        self.path = self.dir / RESULTS_FILE
        self._lock = threading.Lock()
        self.corrupt_lines: list[int] = []

    def load(self) -> dict[str, dict[str, Any]]:
        """key -> record (the last record of a key wins). A line cut short by an interruption is
        counted in `corrupt_lines` and ignored (its run is simply done again)."""
        records: dict[str, dict[str, Any]] = {}
        self.corrupt_lines = []
        if not self.path.exists():
            return records
        with self.path.open(encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    records[record["key"]] = record
                except (json.JSONDecodeError, KeyError, TypeError):
                    self.corrupt_lines.append(number)
        return records

    def append(self, record: dict[str, Any]) -> None:
        """Append one record as a JSON line and flush it (on a fresh line if an interrupted run left half of one)."""
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.dir.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                if f.tell() > 0 and not self._ends_with_newline():
                    f.write("\n")  # a previous run was cut mid-line: start a fresh line
                f.write(line)
                f.flush()

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as f:
            f.seek(-1, 2)
            return f.read(1) == b"\n"


# -- one run -----------------------------------------------------------------------------------------


def granularities(strategies: Iterable[str], settings: Settings) -> list[int]:
    """Every chunk size the strategies may search at (the primary one is indexed by `prepare`)."""
    sizes = {settings.primary_granularity}
    for strategy in strategies:
        fixed = preset(strategy, settings)
        if is_adaptive(strategy):  # the organizer picks one of these (growth with absent evidence: k only)
            sizes.add(settings.base_granularity)
            if settings.selection == "k":
                sizes |= {settings.absent_factoid_granularity, settings.absent_contextual_granularity}
        elif fixed.workflow != "long_context":
            sizes.add(fixed.granularity)
    return sorted(sizes)


def _document(item: EvalItem, settings: Settings):
    store = store_for(settings)
    # source "text-1" as `prepare` names the first inline text, so both see the same document
    document = document_from_text(item.context, source="text-1", max_words=store.settings.max_words)
    store.remember(document)
    return store, document


def warm(item: EvalItem, strategies: Sequence[str], settings: Settings) -> float:
    """Index the item's document at every granularity its runs need; returns the seconds spent."""
    t0 = time.perf_counter()
    store, document = _document(item, settings)
    for g in granularities(strategies, settings):
        store.index(document, g)
    return time.perf_counter() - t0


def _passage(e: dict[str, Any], whole: bool = False) -> dict[str, Any]:
    out = {"id": e["id"], "start": e["start"], "end": e["end"]}
    if whole:
        out["whole_document"] = True  # the text is the item's context; not repeated in the cache
    else:
        out["text"] = e["text"]
    return out


def passage_texts(passages: Sequence[dict[str, Any]], context: str) -> list[str]:
    """The texts of recorded passages, the item's context standing in for a `whole_document` one."""
    return [context if p.get("whole_document") else p.get("text", "") for p in passages]


def _evidence_size(passages: list[dict[str, Any]], context: str) -> tuple[int, int]:
    texts = passage_texts(passages, context)
    return sum(default_counter().count_many(texts)), sum(len(t.split()) for t in texts)


def _base_record(item: EvalItem, strategy: str, settings: Settings) -> dict[str, Any]:
    return {
        "id": item.id,
        "dataset": item.dataset,
        "strategy": strategy,
        "model": settings.model,
        "retrieval_only": not settings.has_llm,
        "scripted": settings.is_scripted,
        "oracle": is_oracle(settings),
        "commit": code_commit(),
    }


def run_one(item: EvalItem, strategy: str, settings: Settings) -> dict[str, Any]:
    """One question with one strategy: the answer, usage, route, plan and the passages the model
    was shown (without the cache key, which the caller adds)."""
    code_commit()  # taken before the graph's code is first imported, so the stamp names the code that runs
    from longqa.graph.graph import graph

    run_settings = settings.model_copy(update={"strategy": strategy})
    forget_query()  # the question, and the bridge and step queries an earlier run of it left cached
    t0 = time.perf_counter()
    final = graph.invoke({"question": item.question, "texts": [item.context]}, context=run_settings.model_dump())
    seconds = time.perf_counter() - t0
    plan = final.get("plan") or {}
    route = list(final.get("route") or [])
    read = final.get("shown") if settings.has_llm else final.get("evidence")
    # every passage any model call read (each hop, the analyzer's, the filter's...), each span once
    distinct = {(e["doc_id"], e["start"], e["end"]): e for e in read or []}
    passages = [_passage(e, whole=e["text"] == item.context) for e in distinct.values()]
    tokens, words = _evidence_size(passages, item.context)
    analysis = final.get("analysis") or {}
    grounding = final.get("grounding") or {}
    return {
        **_base_record(item, strategy, settings),
        "status": final.get("status"),
        "answer": final.get("answer"),
        "error": final.get("error"),
        "seconds": round(seconds, 4),
        "route": route,
        "workflow": plan.get("workflow"),
        "question_type": analysis.get("question_type"),
        "analysis_backend": analysis.get("backend"),
        "totals": final.get("totals") or _no_usage(),
        "calls_by_node": dict(Counter(r["node"] for r in final.get("usage") or [])),
        "long_context": "long_context" in route,
        "lc_how": final.get("long_context_selection"),
        "passages": passages,
        # what the answer cites (its grounding is scored against these, evals/scoring.py)
        "cited": [_passage(e, whole=e["text"] == item.context) for e in final.get("citations") or []],
        "grounding": grounding.get("verdict"),
        # how it was judged and what was (a declined reply's words stay readable: issue #52's measurement)
        "grounding_method": grounding.get("method"),
        "judged_answer": grounding.get("answer"),
        "reasked": final.get("reasked"),  # the earlier reply, where the generator was asked again
        "evidence_tokens": tokens,
        "evidence_words": words,
    }


def _no_usage() -> dict[str, Any]:
    return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0, "estimated": False, "seconds": 0.0}


# -- many runs ---------------------------------------------------------------------------------------


@dataclass
class RunResult:
    """What `run_eval` returns: the records of the current keys and counts of planned, cached and new runs, harness
    failures and timings."""

    records: dict[tuple[str, str], dict[str, Any]]  # (item uid, strategy) -> record, for the current keys
    planned: int = 0
    cached: int = 0
    ran: int = 0
    failures: list[str] = field(default_factory=list)  # harness failures (not cached; rerun retries them)
    index_seconds: float = 0.0
    wall_seconds: float = 0.0
    corrupt_cache_lines: list[int] = field(default_factory=list)
    window: int | None = None
    oracle_skipped: int = 0  # items without a gold decomposition (oracle mode)


def context_window_of(settings: Settings) -> int:
    """The model's context window in tokens, as the graph would find it (llm/models.py)."""
    from longqa.llm.models import context_window

    return context_window(settings)


_Todo = tuple[EvalItem, Settings, list[tuple[str, str]]]  # an item, its settings, its (strategy, key) runs


def _plan(
    items: Sequence[EvalItem],
    strategies: Sequence[str],
    settings: Settings,
    cache: Cache,
    result: RunResult,
    retry_errors: bool,
    execute: bool,
    oracle: bool,
) -> list[_Todo]:
    """Count the planned runs, take the cached ones into `result`, and return the items still to run."""
    existing = cache.load()
    result.corrupt_cache_lines = list(cache.corrupt_lines)
    counter = _counter_name()
    todo: list[_Todo] = []
    for item in items:
        item_settings = oracle_settings(item, item_uid(item), settings) if oracle else settings
        if item_settings is None:
            result.oracle_skipped += 1
            continue
        pending = []
        for strategy in strategies:
            key = cache_key(item, strategy, item_settings, counter)
            result.planned += 1
            cached = existing.get(key)
            if cached is not None and not (retry_errors and cached.get("status") == "error"):
                result.records[(item_uid(item), strategy)] = cached
                result.cached += 1
            else:
                pending.append((strategy, key))
        if pending and execute:
            todo.append((item, item_settings, pending))
    return todo


class _Runs:
    """The runs of one evaluation shared by its worker threads: results, cache, progress bar, stop flag."""

    def __init__(self, cache: Cache, result: RunResult, bar: Any, on_record: Callable[[dict[str, Any]], None] | None):
        self.cache, self.result, self.bar, self.on_record = cache, result, bar, on_record
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def work(self, item: EvalItem, item_settings: Settings, pending: list[tuple[str, str]]) -> None:
        """A worker's task: one item's runs, unless an interruption has stopped the evaluation."""
        if self.stop.is_set():
            return
        try:
            self._item(item, item_settings, pending)
        except BaseException:  # an interruption: no queued item may start after it
            self.stop.set()
            raise

    def _fail(self, message: str, runs: int) -> None:
        with self.lock:
            self.result.failures.append(message)
            if self.bar is not None:
                self.bar.update(runs)

    def _item(self, item: EvalItem, item_settings: Settings, pending: list[tuple[str, str]]) -> None:
        try:
            seconds = warm(item, [s for s, _ in pending], item_settings)
        except Exception as e:  # noqa: BLE001 - reported, the item's runs are retried next time
            log.exception("indexing %s failed", item_uid(item))
            self._fail(f"{item_uid(item)}: indexing failed: {type(e).__name__}: {e}", len(pending))
            return
        with self.lock:
            self.result.index_seconds += seconds
        for strategy, key in pending:
            if self.stop.is_set():
                return
            self._run(item, item_settings, strategy, key)

    def _run(self, item: EvalItem, item_settings: Settings, strategy: str, key: str) -> None:
        try:
            record = {
                "key": key,
                **run_one(item, strategy, item_settings),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
        except Exception as e:  # noqa: BLE001 - a harness bug must not end the other runs
            log.exception("run %s / %s failed", item_uid(item), strategy)
            self._fail(f"{item_uid(item)} / {strategy}: {type(e).__name__}: {e}", 1)
            return
        self.cache.append(record)
        with self.lock:
            self.result.records[(item_uid(item), strategy)] = record
            self.result.ran += 1
            if self.bar is not None:
                self.bar.update(1)
        if self.on_record is not None:
            self.on_record(record)


def _drive(runs: _Runs, todo: list[_Todo], concurrency: int) -> None:
    """Run the items on a thread pool; an interruption stops the running items after their current
    strategy, cancels the queued ones and is raised again."""
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="eval")
    futures = set()
    try:
        futures = {pool.submit(runs.work, item, item_settings, pending) for item, item_settings, pending in todo}
        while futures:
            done, futures = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                future.result()  # re-raises an interruption (KeyboardInterrupt) from a worker
    except BaseException:
        runs.stop.set()  # running items stop after their current strategy; queued ones never start
        for future in futures:
            future.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def run_eval(
    items: Sequence[EvalItem],
    strategies: Sequence[str],
    settings: Settings,
    out_dir: str | Path,
    concurrency: int = 2,
    progress: bool = True,
    retry_errors: bool = False,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    execute: bool = True,
    oracle: bool = False,
) -> RunResult:
    """Run every strategy on every item (skipping the runs already in the cache); at most
    `concurrency` items at a time, the strategies of one item one after another. With
    `execute=False` only the cached records are collected. With `oracle`, each item with a gold
    decomposition runs under the decomposition oracle (evals/oracle.py); the others are skipped."""
    cache = Cache(out_dir)
    result = RunResult(records={}, window=context_window_of(settings))
    todo = _plan(items, strategies, settings, cache, result, retry_errors, execute, oracle)
    total = sum(len(p) for _, _, p in todo)
    bar = None
    if progress and total:
        from longqa.cli.console import counter

        bar = counter(total, "eval", "run", sys.stderr, dynamic_ncols=True)
    t_start = time.perf_counter()
    try:
        _drive(_Runs(cache, result, bar, on_record), todo, concurrency)
    finally:
        if bar is not None:
            bar.close()
        result.wall_seconds = time.perf_counter() - t_start
    return result
