"""How scripts/local_model.sh chooses the server it starts, on any x86-64 host, tested without an AMX host: stand-in
servers (tests/local_model_standin.py) die with SIGILL on their first request the way the native build does on a Xeon
with AMX, or answer. The script must ask every server for a first answer before trusting it, fall back to
`--no-repack`, then to the portable build, say in one line which it used and why, and remember the choice."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "local_model.sh"
STANDIN = Path(__file__).resolve().parent / "local_model_standin.py"


def _server(tmp: Path, name: str, mode: str) -> Path:
    """An executable stand-in server in `mode`."""
    path = tmp / name
    path.write_text(f'#!/bin/sh\nSTANDIN_MODE={mode} exec {sys.executable} {STANDIN} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A model home with the model file in place (the stand-ins never read it)."""
    model_home = tmp_path / "home"
    model_home.mkdir()
    (model_home / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").write_bytes(b"GGUF stand-in")
    return model_home


def _run(home: Path, verb: str, native: Path, portable: Path | None = None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "LONGQA_LOCAL_MODEL_HOME": str(home),
        "LONGQA_LOCAL_MODEL": "qwen-0.5b",
        "LONGQA_LOCAL_MODEL_SERVER": str(native),
        "STANDIN_LOG": str(home / "starts.jsonl"),
    }
    if portable is not None:
        env["LONGQA_LOCAL_MODEL_PORTABLE_SERVER"] = str(portable)
    return subprocess.run(["bash", str(SCRIPT), verb], capture_output=True, text=True, env=env, timeout=120)


def _starts(home: Path) -> list[dict]:
    lines = (home / "starts.jsonl").read_text().splitlines() if (home / "starts.jsonl").exists() else []
    return [json.loads(line) for line in lines]


def _served(result: subprocess.CompletedProcess) -> str:
    """The one line that says which server was used and why."""
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("[local-model] server:")]
    return line


@pytest.fixture
def stop(home: Path, tmp_path: Path):
    """Stops whatever the test started."""
    yield
    _run(home, "stop", tmp_path / "none")


def test_a_native_build_that_answers_is_used_as_it_is(home, tmp_path, stop):
    started = _run(home, "start", _server(tmp_path, "native", "ok"))
    assert started.returncode == 0, started.stderr
    assert "server: native (it answered its first request" in _served(started)
    assert re.search(r"export LONGQA_BASE_URL=http://127\.0\.0\.1:\d+/v1", started.stdout)
    assert [start["mode"] for start in _starts(home)] == ["ok"]
    assert "--no-repack" not in _starts(home)[0]["args"]


def test_a_server_that_dies_of_sigill_on_its_first_request_is_started_again_without_repacking(home, tmp_path, stop):
    native = _server(tmp_path, "native", "sigill-unless-no-repack")
    started = _run(home, "start", native)
    assert started.returncode == 0, started.stderr
    line = _served(started)
    assert line.startswith("[local-model] server: no-repack, because the native build was killed by signal 4")
    assert "SIGILL" in line
    starts = _starts(home)
    assert ["--no-repack" in start["args"] for start in starts] == [False, True]
    # the server left running is the one that answers
    status = _run(home, "status", native)
    assert status.returncode == 0 and "LONGQA_BASE_URL" in status.stdout
    # the choice is remembered for this CPU: the next start goes straight to it
    _run(home, "stop", native)
    again = _run(home, "start", native)
    assert again.returncode == 0, again.stderr
    assert "server: no-repack, as chosen earlier on this CPU" in _served(again)
    assert len(_starts(home)) == 3 and "--no-repack" in _starts(home)[2]["args"]


def test_when_the_native_build_fails_both_ways_the_portable_build_serves(home, tmp_path, stop):
    started = _run(home, "start", _server(tmp_path, "native", "sigill"), _server(tmp_path, "portable", "ok"))
    assert started.returncode == 0, started.stderr
    line = _served(started)
    assert line.startswith("[local-model] server: portable, because the native build was killed by signal 4")
    assert "the native build with --no-repack was killed by signal 4" in line
    assert [start["mode"] for start in _starts(home)] == ["sigill", "sigill", "ok"]


def test_a_server_that_loads_but_cannot_answer_is_not_trusted(home, tmp_path, stop):
    started = _run(home, "start", _server(tmp_path, "native", "error"), _server(tmp_path, "portable", "ok"))
    assert started.returncode == 0, started.stderr
    assert "the native build did not answer a first request" in _served(started)
    assert _served(started).startswith("[local-model] server: portable")


def test_when_nothing_answers_the_script_fails_and_says_what_each_try_did(home, tmp_path, stop):
    started = _run(home, "start", _server(tmp_path, "native", "sigill"), _server(tmp_path, "portable", "sigill"))
    assert started.returncode == 1
    (summary,) = [line for line in started.stderr.splitlines() if "no server answered on this host" in line]
    assert summary.count("killed by signal 4") == 3  # one line names all three tries
    assert "portable build (AVX2, no AVX-512/AMX) was killed by signal 4" in summary
    assert "LONGQA_BASE_URL" not in started.stdout
