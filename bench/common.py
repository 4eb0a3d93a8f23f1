"""Shared by the benchmarks: offline environment, machine description, results files, tables."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


def offline_env() -> None:
    """No network: the bundled MiniLM, and its word-piece tokenizer for token counts (tiktoken's
    encoding would be downloaded; the app falls back to the same tokenizer when offline)."""
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LONGQA_TOKENIZER": "wordpiece",
        "TOKENIZERS_PARALLELISM": "false",
        "ANONYMIZED_TELEMETRY": "False",
    }.items():
        os.environ.setdefault(key, value)


def whole_number_options(doc: str | None, **defaults: int) -> argparse.Namespace:
    """A benchmark's command line of whole-number options (`--name N`, one per default; `_` in a
    name is `_` on the command line too), parsed, with the offline environment set (`offline_env`)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in defaults.items():
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    offline_env()
    return args


def longqa_command() -> list[str]:
    """The `longqa` command as a user runs it: the console script pip installed beside this interpreter."""
    script = Path(sys.executable).with_name("longqa")
    if not script.exists():
        raise SystemExit(f"no `longqa` script at {script}: install the project (pip install -e .) first")
    return [str(script)]


def measured_process(argv: list[str], **popen: Any) -> tuple[int, float, float]:
    """Run `argv` (`popen`: Popen's keyword arguments) to its end: (exit code, wall seconds from spawn
    to exit, the process's own peak RSS MiB)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, **popen)
    _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), time.perf_counter() - start, usage.ru_maxrss / 1024


def machine() -> dict[str, Any]:
    import torch

    return {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "cpus": len(os.sched_getaffinity(0)),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_start": [round(x, 2) for x in os.getloadavg()],
    }


def save(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(payload, indent=1), "utf-8")
    return path


def finish(name: str, info: dict[str, Any], before: str = "\n") -> None:
    """End a benchmark: the load average at its end, the machine line (after `before`) and where the
    results file was saved."""
    info["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"{before}machine: {info['machine']}")
    print(f"results: {save(name, info)}")


def ms_stats(seconds: list[float]) -> dict[str, float]:
    """Median and 95th percentile (nearest rank) of timings in seconds, in milliseconds, and their count."""
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * p95, "n": len(ordered)}


def timing_table(label: str, timings: dict[str, dict[str, float]]) -> str:
    """`ms_stats` results as a markdown table: one row per named timing, median and p95 in ms."""
    return md_table(
        [label, "median ms", "p95 ms"], [[k, f"{v['median_ms']:.1f}", f"{v['p95_ms']:.1f}"] for k, v in timings.items()]
    )


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        return f"{v:,.1f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def distinct_paragraphs() -> list[tuple[str, str, str | None]]:
    """(title, text, the HotpotQA question it came with or None) of every distinct HotpotQA and
    MuSiQue paragraph in ../shared/data, in file order."""
    from longqa.evals.long_contexts import load_hotpotqa, load_musique

    seen: set[str] = set()
    paragraphs: list[tuple[str, str, str | None]] = []
    for raw in load_hotpotqa("a") + load_hotpotqa("b"):
        for title, sents in zip(raw["context"]["title"], raw["context"]["sentences"], strict=True):
            text = " ".join(" ".join(s.strip() for s in sents).split())
            if text not in seen:
                seen.add(text)
                paragraphs.append((title, text, raw["question"]))
    for raw in load_musique():
        for p in raw["paragraphs"]:
            text = " ".join(p["paragraph_text"].split())
            if text not in seen:
                seen.add(text)
                paragraphs.append((p["title"], text, None))
    return paragraphs


def big_document(min_words: int, seed: int = 0) -> tuple[str, list[str]]:
    """A long text of distinct HotpotQA and MuSiQue paragraphs (seeded order) with at least
    `min_words` words, as `Passage N:\\n<title>\\n<text>` blocks; also the questions of the
    HotpotQA items the paragraphs come from (queries about the document)."""
    from longqa.evals.long_contexts import format_context

    paragraphs = distinct_paragraphs()
    random.Random(seed).shuffle(paragraphs)
    chosen, words = [], 0
    for title, text, question in paragraphs:
        if words >= min_words:
            break
        chosen.append((title, text, question))
        words += 2 + len(title.split()) + len(text.split())
    if words < min_words:
        raise ValueError(f"only {words:,} words of distinct paragraphs available (asked for {min_words:,})")
    questions = list(dict.fromkeys(q for _, _, q in chosen if q))
    return format_context([(t, x) for t, x, _ in chosen]), questions


def document_files(base: Path, n: int, words: int, seed: int = 0, width: int = 4) -> tuple[list[Path], list[str]]:
    """`big_document(words, seed)` split into `n` Markdown files under base/docs (doc0000.md ...), and its
    questions; a file its share of paragraphs leaves empty says so in one line."""
    text, questions = big_document(words, seed)
    paragraphs = text.split("\n\n")
    per = math.ceil(len(paragraphs) / n)
    files = []
    for i in range(n):
        f = base / "docs" / f"doc{i:0{width}d}.md"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("\n\n".join(paragraphs[i * per : (i + 1) * per]) or f"Empty part {i}.", "utf-8")
        files.append(f)
    return files, questions


def chroma_server(path: Path, port: int) -> subprocess.Popen:
    """`chroma run` on 127.0.0.1:`port` storing under `path`, quiet and without telemetry (the caller
    waits for its heartbeat and terminates it)."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "chroma"), "run", "--host", "127.0.0.1", "--port", str(port), "--path",
         str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )  # fmt: skip


@contextlib.contextmanager
def chroma_running(base: Path) -> Iterator[int]:
    """A Chroma server storing under base/chroma (`chroma_server`), its heartbeat awaited; yields its
    port. On leaving, the server is stopped and `base` (the benchmark's temporary folder) removed."""
    from tests.servers import chroma_client, free_port

    port = free_port()
    chroma = chroma_server(base / "chroma", port)
    try:
        for _ in range(300):
            try:
                chroma_client("127.0.0.1", port).heartbeat()
                break
            except Exception:  # noqa: BLE001 - not listening yet
                time.sleep(0.2)
        yield port
    finally:
        chroma.terminate()
        chroma.wait(timeout=20)
        shutil.rmtree(base, ignore_errors=True)
