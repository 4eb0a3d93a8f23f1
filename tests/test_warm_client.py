"""The warm client's own pieces (longqa/cli/warm_client.py, warm_protocol.py): which command lines it
routes, the home, the stamp and its run-time variables, message limits, and when it may answer
in-process instead of through the server."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from longqa.cli import warm_client, warm_protocol
from longqa.cli.warm_client import Ask, Fallback, parse
from longqa.cli.warm_protocol import (
    RUNTIME_VARIABLES,
    WarmError,
    receive_message,
    send_message,
    stamp,
)

# -- the pieces the client computes alone ---------------------------------------------------------


def test_parse_routes_only_plain_asks(tmp_path):
    env = {"LONGQA_HOME": str(tmp_path)}
    ask = parse(["-v", "--home", "h", "ask", "doc", "question?", "--json"], env)
    assert ask == Ask(["-v", "--home", "h", "ask", "doc", "question?", "--json"], Path("h"), True)
    assert parse(["ask", "doc", "q"], env).home == tmp_path
    assert parse(["--home=x", "ask", "q"], env).home == Path("x")
    for argv in (["index", "doc"], ["ask", "--help"], ["ask", "-h"], ["ask", "q", "--no-warm"], ["ask", "--no-w", "q"]):
        assert parse(argv, env) is None, argv
    assert parse(["ask", "q"], {**env, "LONGQA_WARM": "off"}) is None
    assert parse([], env) is None


def test_the_home_is_the_clis(monkeypatch, tmp_path):
    """The client reads the home from its caller's environment as the CLI's settings read it from theirs."""
    from longqa.retrieval.environment import default_home
    from longqa.retrieval.index.config import IndexSettings

    for variables in ({"LONGQA_HOME": "~/x"}, {"XDG_CACHE_HOME": str(tmp_path)}, {"LONGQA_HOME": "  "}, {}):
        for name in ("LONGQA_HOME", "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        assert default_home(dict(variables)) == IndexSettings().home


def test_the_stamp_follows_code_and_environment_but_not_run_settings(monkeypatch, tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("x = 1")
    monkeypatch.setattr(warm_protocol, "_code_folders", lambda: [str(code)])
    base = {"PATH": "/bin", "HF_HUB_OFFLINE": "1"}
    first = stamp(base)
    assert stamp({**base, "LONGQA_MODEL": "scripted", "PWD": "/elsewhere", "TERM": "dumb"}) == first
    assert stamp({**base, "HF_HUB_OFFLINE": "0"}) != first
    assert stamp({**base, "LONGQA_TOKENIZER": "tiktoken"}) != first  # cached on first use: not a run setting
    (code / "runs").mkdir()
    (code / "runs" / "results.json").write_text("{}")  # what a run writes is not code
    assert stamp(base) == first
    (code / "a.py").write_text("x = 22")
    assert stamp(base) != first


VALUES = {
    "LONGQA_MODEL": "scripted",
    "LONGQA_BASE_URL": "http://127.0.0.1:1/v1",
    "OPENAI_BASE_URL": "http://127.0.0.1:2/v1",
    "LONGQA_STRATEGY": "rag",
    "LONGQA_ANALYZER": "llm",
    "LONGQA_TIMEOUT_S": "7",
    "LONGQA_DEADLINE_S": "70",
    "LONGQA_CONTEXT_WINDOW": "4096",
    "LONGQA_QUESTION_BUDGET": "999",
}


def test_the_run_time_variables_are_read_when_a_run_starts(monkeypatch, tmp_path):
    """Each variable the stamp leaves out is read by `Settings()` (a worker builds its own), so a
    server started under another value still answers with the client's."""
    from longqa.contracts.settings import Settings

    assert set(VALUES) | {"LONGQA_HOME"} == {v for v in RUNTIME_VARIABLES if not v.startswith("LONGQA_WARM")}
    for name in (*VALUES, "LONGQA_HOME"):
        monkeypatch.delenv(name, raising=False)
    before = Settings().model_dump()
    monkeypatch.setenv("LONGQA_HOME", str(tmp_path))
    assert Settings().home == tmp_path
    for name, value in VALUES.items():
        monkeypatch.setenv(name, value)
        assert Settings().model_dump() != before, name
        monkeypatch.delenv(name)


def test_message_limits():
    left, right = socket.socketpair()
    with left, right:
        send_message(left, {"a": "x" * 100})
        with pytest.raises(WarmError, match="too large"):
            receive_message(right, 50)
    left, right = socket.socketpair()
    with left, right:
        left.sendall(struct.pack("!I", 10) + b"{}")
        left.close()
        with pytest.raises(EOFError):  # the peer closed mid-message
            receive_message(right, 50)


def _scripted_server(replies: list[dict]):
    """One end of a socket pair that takes an ask (closing its streams) and sends `replies`, then closes."""
    client, server = socket.socketpair()

    def serve():
        with server:
            _, fds = receive_message(server, 1 << 20, fds=3)
            for fd in fds:
                os.close(fd)
            for reply in replies:
                send_message(server, reply)

    thread = threading.Thread(target=serve)
    thread.start()
    return client, thread


@pytest.mark.parametrize(
    ("replies", "outcome"),
    [
        ([], Fallback),  # closed before it took the question: answered here
        ([{"status": "busy"}], Fallback),
        ([{"status": "started", "worker": 1}], "stopped before the answer was complete"),
        ([{"status": "started", "worker": 1}, {"status": "done", "exit": "x"}], "could not be read"),
        ([{"status": "started", "worker": 1}, {"status": "done", "exit": 4}], 4),
    ],
)
def test_the_client_falls_back_only_before_the_server_takes_the_question(replies, outcome, capfd, tmp_path):
    conn, thread = _scripted_server(replies)
    with conn:
        if outcome is Fallback:
            with pytest.raises(Fallback):
                warm_client._converse(conn, Ask(["ask", "q"], tmp_path, False), "s")
        else:
            code = warm_client._converse(conn, Ask(["ask", "q"], tmp_path, False), "s")
            assert code == (outcome if isinstance(outcome, int) else 1)
            if isinstance(outcome, str):
                assert outcome in capfd.readouterr().err
    thread.join()


def test_a_fault_of_the_warm_path_answers_in_process(monkeypatch, tmp_path, capsys):
    def broken(ask):
        raise RuntimeError("a bug")

    monkeypatch.setenv("LONGQA_WARM", "1")
    monkeypatch.setattr(warm_client, "_answer", broken)
    assert warm_client.answer(["-v", "--home", str(tmp_path), "ask", "doc", "q"]) is None
    assert "in this process: the warm path failed before the server took the question" in capsys.readouterr().err


def test_an_index_starts_the_warm_server_before_it_reads(monkeypatch, tmp_path):
    """`longqa index` starts its home's server as it begins (the server imports while the index embeds),
    only when none runs and the warm path is on, and whatever the index's outcome."""
    from longqa import cli
    from longqa.cli import commands

    calls: list[str] = []
    monkeypatch.setattr(warm_client, "start_server", lambda home: calls.append(f"start {home.name}"))
    monkeypatch.setattr(commands, "main", lambda argv: calls.append(f"run {argv[-2]}") or 3)
    monkeypatch.delenv("LONGQA_WARM", raising=False)
    home = tmp_path / "home"
    monkeypatch.setattr("sys.argv", ["longqa", "--home", str(home), "index", "docs/"])
    assert cli.main() == 3  # the index's own exit code
    assert calls == ["start home", "run index"]
    calls.clear()
    monkeypatch.setattr(warm_client, "_connect", lambda home: socket.socket())  # one is running
    assert cli.main() == 3 and calls == ["run index"]
    calls.clear()
    monkeypatch.setenv("LONGQA_WARM", "0")
    assert cli.main() == 3 and calls == ["run index"]


@pytest.mark.parametrize("value, flag", [(None, "--standby"), ("1", "--standby"), ("0", "--no-standby")])
def test_the_server_is_started_with_the_clients_warm_switches(monkeypatch, tmp_path, value, flag):
    started = []
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **kw: started.append(argv))
    monkeypatch.setenv("LONGQA_WARM_IDLE_S", "42")
    if value is None:
        monkeypatch.delenv("LONGQA_WARM_STANDBY", raising=False)
    else:
        monkeypatch.setenv("LONGQA_WARM_STANDBY", value)
    warm_client.start_server(tmp_path / "home")
    (argv,) = started
    assert argv[argv.index("--idle") + 1] == "42" and argv[-1] == flag


def test_the_longqa_script_imports_only_its_entry_point_before_it_asks(tmp_path):
    """The `longqa` console script runs `from longqa.cli import main`: that must import only the CLI's entry
    point (standard library only), not every in-process command (0.35 s, measured), before the warm server is
    asked. The commands' names are importable from `longqa.cli.commands`."""
    code = (
        "import sys; from longqa.cli import main; print(sorted(m for m in sys.modules if m.startswith('longqa')))\n"
        "from longqa.cli.commands import build_parser; print(build_parser().prog)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["['longqa', 'longqa.cli', 'longqa.cli.entry']", "longqa"]
