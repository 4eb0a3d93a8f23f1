"""How fast each way scripts/local_model.sh can serve the local model reads a prompt and writes tokens, side by side
in one run: the native build, the native build with `--no-repack` (the first fallback) and the portable AVX2 build
(the second), each started as the script starts it (one thread by default). Each round sends every server the same
~600-token prompt and asks for a fixed number of tokens (the server's own `timings`: prompt tokens/s, generated
tokens/s); servers take turns round by round, so a change in the machine's load falls on all of them alike.

    .venv/bin/python -m bench.local_model_speed [--rounds 5] [--tokens 64] [--threads 1] [--model qwen-0.5b]

A way whose build is missing (the portable one is built when the native one fails, or by
`bash scripts/local_model.sh install-portable`) is left out with a note. Quote the CPU line it prints."""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import time
import urllib.request
from pathlib import Path

from bench.common import finish, md_table
from tests.local_model_paths import GGUF, MODEL_HOME, llama_server_binary

HOME = MODEL_HOME
PROMPT = " ".join(
    f"Line {i}: the harbour authority logged vessel {i * 7} at berth {i % 13} with {i * 3} tonnes of cargo."
    for i in range(30)
)


def _cpu() -> str:
    """Vendor and model of the first CPU, and whether it reports AMX (what decides the fallback)."""
    first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    fields = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in first.splitlines())}
    amx = "amx_tile" in fields.get("flags", "").split()
    return f"{fields.get('vendor_id', '?')} {fields.get('model name', '?')} ({'AMX' if amx else 'no AMX'})"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(binary: str, model: Path, threads: int, extra: list[str]) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    argv = [binary, "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--ctx-size", "4096"]
    argv += ["--threads", str(threads), "--jinja", *extra]
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
            return server, port
        except OSError:
            if server.poll() is not None:
                raise RuntimeError(f"{binary} {' '.join(extra)} exited with {server.returncode}") from None
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("server did not start within 300 s")


def _timings(port: int, tokens: int, salt: int) -> dict[str, float]:
    """One request (a new prompt each round, so no cached prefix): the server's own timings."""
    body = {
        "messages": [{"role": "user", "content": f"Round {salt}. {PROMPT} Summarise the log."}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    reply = json.load(urllib.request.urlopen(request, timeout=600))
    return reply["timings"]


def main() -> None:
    """Start each available way, measure in alternating rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default="qwen-0.5b", choices=sorted(GGUF))
    args = parser.parse_args()
    model = HOME / GGUF[args.model]
    ways = {
        "native": (llama_server_binary(HOME / "venv"), []),
        "native --no-repack": (llama_server_binary(HOME / "venv"), ["--no-repack"]),
    }
    ways["portable (AVX2)"] = (llama_server_binary(HOME / "venv-portable"), [])
    servers, samples = {}, {}
    try:
        for name, (binary, extra) in ways.items():
            if binary is None:
                print(f"{name}: not built, left out")
                continue
            servers[name] = _start(binary, model, args.threads, extra)
            samples[name] = []
        for round_ in range(args.rounds):
            for name, (_, port) in servers.items():
                samples[name].append(_timings(port, args.tokens, round_))
    finally:
        for server, _ in servers.values():
            server.kill()
    rows, base = [], None
    for name, runs in samples.items():
        prompt = statistics.median(run["prompt_per_second"] for run in runs)
        gen = statistics.median(run["predicted_per_second"] for run in runs)
        base = base or (prompt, gen)
        rows.append([name, prompt, gen, f"{prompt / base[0]:.2f}x", f"{gen / base[1]:.2f}x"])
    prompt_words = len(PROMPT.split())
    print(f"\n{args.model}, {args.threads} thread(s), {args.rounds} rounds of {prompt_words}-word prompts")
    print(f"CPU: {_cpu()}\n")
    print(md_table(["server", "prompt tok/s", "generated tok/s", "prompt vs native", "generated vs native"], rows))
    info = {"cpu": _cpu(), "args": vars(args), "samples": samples, "machine": {"loadavg_start": os.getloadavg()}}
    finish("local_model_speed", info)


if __name__ == "__main__":
    main()
