"""The warm server `longqa ask` reuses (longqa/warm/server.py, warm_client.py, warm_protocol.py):
the protocol and its limits with a stand-in for the CLI, then the real command, whose output must be
the in-process output byte for byte."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from longqa.cli import warm_client
from longqa.cli.warm_client import Ask, Fallback
from longqa.cli.warm_protocol import (
    peer_allowed,
    receive_message,
    socket_path,
)
from longqa.warm.server import Server

from .conftest import harbor_text

# a warm server whose "CLI" is this stand-in: the protocol without the imports
SERVER = """
import os, sys, time
from pathlib import Path
from longqa.warm.server import serve

def run(argv):
    if argv[0] == "print":
        print("out", os.getcwd(), os.environ.get("WARM_TEST"), flush=True)
        print("err line", file=sys.stderr)
        return int(argv[1])
    if argv[0] == "crash":
        raise RuntimeError("boom")
    if argv[0] == "sleep":
        Path(argv[1]).write_text(str(os.getpid()))
        time.sleep(60)
    return 3

sys.exit(serve(Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), run=run))
"""

# the same stand-in with a rehearsal: a standby records what it rehearsed, so a question shows where it ran
REHEARSING_SERVER = (
    SERVER.replace(
        'if argv[0] == "print":',
        'if argv[0] == "where":\n        print("rehearsed", REHEARSED, os.getcwd(), flush=True)\n        return 0\n'
        '    if argv[0] == "print":',
    )
    .replace(
        "run=run))",
        "run=run, rehearse=rehearse))",
    )
    .replace(
        "def run(argv):",
        """REHEARSED = []

def rehearse(argv):
    if argv and argv[0] == "rehearse-slowly":
        time.sleep(1.5)
    if argv and argv[0] == "rehearse-forever":
        time.sleep(600)
    REHEARSED.append([argv, os.getcwd(), os.environ.get("WARM_TEST")])
    return "rehearsed"

def run(argv):""",
    )
)


def _start_fake(
    home: Path, idle: float = 60, max_run: float = 30, script: str = SERVER, env: dict | None = None
) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", script, str(home), str(idle), str(max_run)], env=env)
    deadline = time.monotonic() + 60
    while warm_client.status(home) is None:
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    return proc


@contextlib.contextmanager
def _serving(home: Path, script: str = SERVER):
    """A stand-in server: started, (home, process) given, stopped."""
    proc = _start_fake(home, script=script)
    try:
        yield home, proc
    finally:
        warm_client.stop(home)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def fake(tmp_path):
    with _serving(tmp_path / "home") as served:
        yield served


def _ask(home: Path, argv: list[str], own_stamp: str | None = None) -> int:
    own_stamp = own_stamp or warm_client.status(home)["stamp"]  # before connecting: requests are read one at a time
    conn = warm_client._connect(home)
    assert conn is not None
    with conn:
        return warm_client._converse(conn, Ask(argv, home, False), own_stamp)


def _wait_for(predicate, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# -- the protocol, with a stand-in CLI ----------------------------------------------------------


def test_a_question_runs_with_the_clients_streams_folder_and_environment(fake, capfd, monkeypatch, tmp_path):
    home, _ = fake
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("WARM_TEST", "from the client")
    assert _ask(home, ["print", "7"]) == 7
    out, err = capfd.readouterr()
    assert out == f"out {folder} from the client\n" and err == "err line\n"
    directory = socket_path(home).parent
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(socket_path(home).stat().st_mode) == 0o600


def test_a_failing_question_never_stops_the_server(fake, capfd):
    home, _ = fake
    pid = warm_client.status(home)["pid"]
    assert _ask(home, ["crash"]) == 1
    assert "RuntimeError: boom" in capfd.readouterr().err
    assert _ask(home, ["other"]) == 3
    assert warm_client.status(home)["pid"] == pid


def test_a_worker_killed_mid_question_is_reported(fake, capfd, tmp_path):
    home, _ = fake
    pid_file = tmp_path / "worker.pid"

    def kill_worker():
        _wait_for(lambda: pid_file.exists() and pid_file.read_text())
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_worker)
    killer.start()
    assert _ask(home, ["sleep", str(pid_file)]) == 1
    killer.join()
    assert "worker was ended by SIGKILL before it finished; ask again, or with --no-warm" in capfd.readouterr().err
    assert warm_client.status(home) is not None  # still serving


def test_the_server_dying_mid_question_is_reported_and_ends_the_worker(tmp_path, capfd):
    home = tmp_path / "home"
    proc = _start_fake(home)
    pid_file = tmp_path / "worker.pid"

    def kill_server():
        _wait_for(lambda: pid_file.exists() and pid_file.read_text())
        proc.kill()

    killer = threading.Thread(target=kill_server)
    killer.start()
    own = warm_client.status(home)["stamp"]
    assert _ask(home, ["sleep", str(pid_file)], own) == 1
    killer.join()
    proc.wait(10)
    assert "the warm server stopped before the answer was complete" in capfd.readouterr().err
    worker = int(pid_file.read_text())
    _wait_for(lambda: not Path(f"/proc/{worker}").exists() or "Z" in _proc_state(worker))


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]
    except (OSError, IndexError):
        return "Z"


def test_a_question_past_its_time_is_stopped(tmp_path, capfd):
    home = tmp_path / "home"
    proc = _start_fake(home, max_run=1)
    try:
        assert _ask(home, ["sleep", str(tmp_path / "pid")]) == 1
        assert "ran past 1.0 s (LONGQA_WARM_MAX_RUN_S) and was stopped" in capfd.readouterr().err
    finally:
        warm_client.stop(home)
        proc.wait(10)


def test_an_oversize_or_malformed_request_is_refused_and_the_server_goes_on(fake):
    home, _ = fake
    for payload in (struct.pack("!I", 2 << 20) + b"{", struct.pack("!I", 2) + b"[]"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(socket_path(home)))
            conn.sendall(payload)
            reply, _ = receive_message(conn, 1 << 16)
        assert reply["status"] == "error" and "bad request" in reply["reason"]
    assert "too large" in _raw_reply(home, struct.pack("!I", 2 << 20))["reason"]
    own = warm_client.status(home)["stamp"]
    body = json.dumps({"op": "ask", "stamp": own}).encode()  # an ask without its three streams
    assert "three standard streams" in _raw_reply(home, struct.pack("!I", len(body)) + body)["reason"]
    assert warm_client.status(home) is not None


def _raw_reply(home: Path, payload: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(socket_path(home)))
        conn.sendall(payload)
        return receive_message(conn, 1 << 16)[0]


def test_another_stamp_is_refused_and_the_out_of_date_server_exits(fake, capfd):
    home, proc = fake
    conn = warm_client._connect(home)
    with conn, pytest.raises(Fallback, match="answered 'stale'"):
        warm_client._converse(conn, Ask(["print", "0"], home, False), "another stamp")
    assert capfd.readouterr().out == ""  # nothing ran
    proc.wait(10)
    assert not socket_path(home).exists()


def test_a_stale_socket_file_is_replaced(tmp_path):
    home = tmp_path / "home"
    path = socket_path(home)
    path.parent.mkdir(parents=True, mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(path))  # a server that died without removing its socket
    assert warm_client._connect(home) is None  # refused: treated as no server
    proc = _start_fake(home)
    try:
        assert warm_client.status(home)["pid"] == proc.pid
    finally:
        warm_client.stop(home)
        proc.wait(10)
    assert not path.exists()


def test_an_idle_server_exits_and_stop_stops_one(tmp_path):
    home = tmp_path / "home"
    proc = _start_fake(home, idle=0.5)
    assert proc.wait(20) == 0 and not socket_path(home).exists()
    proc = _start_fake(home)
    assert warm_client.stop(home)["pid"] == proc.pid
    assert proc.wait(20) == 0 and warm_client.status(home) is None and warm_client.stop(home) is None


# -- the standby: a child forked ahead that rehearsed the last ask ----------------------------------


@pytest.fixture
def rehearsing(tmp_path):
    with _serving(tmp_path / "home", REHEARSING_SERVER) as served:
        yield served


def _standby_ready(home: Path) -> dict:
    _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "ready")
    return warm_client.status(home)


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and _proc_state(pid) != "Z"


def test_a_standby_rehearses_the_last_ask_in_its_folder_and_environment_then_takes_the_next(
    rehearsing, capfd, monkeypatch, tmp_path
):
    home, _ = rehearsing
    first = _standby_ready(home)  # the standby forked at the start has no ask to rehearse yet
    assert _ask(home, ["where"]) == 0
    assert capfd.readouterr().out == f"rehearsed [] {os.getcwd()}\n"
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("WARM_TEST", "from the client")
    assert _ask(home, ["print", "0"]) == 0
    second = _standby_ready(home)
    assert second["standby_pid"] != first["standby_pid"]  # a new standby for each question that ended
    monkeypatch.chdir(tmp_path)
    assert _ask(home, ["where"]) == 0
    # the question ran in the standby, which had rehearsed `print 0` where and as the client asked it
    assert (
        capfd.readouterr().out.splitlines()[-1]
        == f"rehearsed [[['print', '0'], '{folder}', 'from the client']] {tmp_path}"
    )
    _wait_for(lambda: not _alive(second["standby_pid"]))  # it ended with its question


def test_a_question_that_arrives_mid_rehearsal_waits_for_the_standby(rehearsing, capfd):
    home, _ = rehearsing
    _standby_ready(home)
    assert _ask(home, ["rehearse-slowly"]) == 3
    _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "rehearsing")
    started = time.monotonic()
    assert _ask(home, ["where"]) == 0
    assert "rehearsed [[['rehearse-slowly']" in capfd.readouterr().out  # answered by the standby, after its rehearsal
    assert time.monotonic() - started > 0.5


def test_a_request_too_large_to_wait_for_a_rehearsal_goes_to_a_fresh_child(rehearsing, capfd, monkeypatch):
    home, proc = rehearsing
    _standby_ready(home)
    assert _ask(home, ["rehearse-slowly"]) == 3
    status = warm_client.status(home)
    _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "rehearsing")
    standby = warm_client.status(home)["standby_pid"]
    monkeypatch.setenv("WARM_TEST_BULK", "x" * 100_000)  # the request no longer fits their socket's buffer
    started = time.monotonic()
    assert _ask(home, ["where"], status["stamp"]) == 0
    assert capfd.readouterr().out.splitlines()[-1].startswith("rehearsed [] ")  # not the rehearsing standby
    assert time.monotonic() - started < 1.4 and not _alive(standby) and proc.poll() is None


def test_a_rehearsal_past_its_time_is_ended_and_the_next_question_still_answered(tmp_path, capfd):
    short = "import longqa.warm.server as ws\nws.REHEARSAL_MAX_S = 1.0\nfrom longqa.warm.server import serve"
    script = REHEARSING_SERVER.replace("from longqa.warm.server import serve", short)
    with _serving(tmp_path / "home", script) as (home, proc):
        _standby_ready(home)
        assert _ask(home, ["rehearse-forever"]) == 3
        _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "rehearsing")
        standby = warm_client.status(home)["standby_pid"]
        _wait_for(lambda: not _alive(standby))  # killed after REHEARSAL_MAX_S; none again until a question ends
        assert warm_client.status(home)["standby"] is None
        assert _ask(home, ["where"]) == 0
        assert capfd.readouterr().out.splitlines()[-1].startswith("rehearsed [] ")
        assert proc.poll() is None


def test_a_standby_that_died_is_replaced_by_a_fresh_child(rehearsing, capfd):
    home, proc = rehearsing
    assert _ask(home, ["print", "0"]) == 0
    standby = _standby_ready(home)["standby_pid"]
    os.kill(standby, signal.SIGKILL)
    _wait_for(lambda: not _alive(standby))
    assert _ask(home, ["where"]) == 0
    out = capfd.readouterr().out
    assert out.splitlines()[-1].startswith("rehearsed [] ")  # a fresh child: no rehearsal behind it
    assert proc.poll() is None and _standby_ready(home)["standby_pid"] != standby


def test_stopping_the_server_ends_its_standby_and_standbys_can_be_turned_off(rehearsing, tmp_path, capfd):
    home, proc = rehearsing
    standby = _standby_ready(home)["standby_pid"]
    warm_client.stop(home)
    assert proc.wait(20) == 0
    _wait_for(lambda: not _alive(standby))
    off_home = tmp_path / "off"
    off_script = REHEARSING_SERVER.replace("rehearse=rehearse))", "rehearse=rehearse, standbys=False))")
    off = _start_fake(off_home, script=off_script)
    try:
        assert _ask(off_home, ["print", "0"]) == 0 and _ask(off_home, ["where"]) == 0
        assert capfd.readouterr().out.splitlines()[-1].startswith("rehearsed [] ")
        assert warm_client.status(off_home)["standby"] is None
    finally:
        warm_client.stop(off_home)
        off.wait(10)


def test_another_users_process_is_refused(tmp_path, monkeypatch):
    assert peer_allowed(os.getuid()) and not peer_allowed(os.getuid() + 1)
    assert peer_allowed(0, own_uid=0) and not peer_allowed(0, own_uid=1000)
    monkeypatch.setattr("longqa.warm.server.peer_uid", lambda conn: os.getuid() + 1)
    server, client = socket.socketpair()
    with server, client:
        Server(server, 0, "stamp", run=lambda argv: 0)._handle(server)
        reply, _ = receive_message(client, 1 << 16)
    assert reply == {"status": "refused", "reason": "another user's process"}


LOADING = """
import sys, time
from pathlib import Path
from longqa.warm.server import serve

log = Path(sys.argv[2])

def step(i):
    def load():
        if i == 3:
            raise ImportError("a module this machine lacks")
        time.sleep(0.25)
        with log.open("a") as f:
            f.write(f"{i}\\n")
    return load

loaded = lambda argv: len(log.read_text().split())  # noqa: E731
sys.exit(serve(Path(sys.argv[1]), 60, 30, run=loaded, later=[step(i) for i in range(20)]))
"""


def test_what_loads_after_the_server_listens_never_keeps_a_question_waiting(tmp_path, capfd):
    """The server listens before its later loads: a question is answered between two of them, all of them
    are loaded in order afterwards, and one that fails is logged and skipped."""
    home, log = tmp_path / "home", tmp_path / "loaded.txt"
    log.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", LOADING, str(home), str(log)])
    try:
        _wait_for(lambda: warm_client.status(home) is not None, 60)
        loaded_when_asked = _ask(home, ["count"])  # the stand-in CLI answers how many steps had loaded
        assert loaded_when_asked < 19  # 19 steps take ~4.75 s; the question waited for one step at most
        _wait_for(lambda: len(log.read_text().split()) == 19, 60)
        assert log.read_text().split() == [str(i) for i in range(20) if i != 3]
        assert _ask(home, ["count"]) == 19
        assert "preloading failed: ImportError: a module this machine lacks" in capfd.readouterr().err
    finally:
        warm_client.stop(home)
        proc.wait(20)


# -- the real command ----------------------------------------------------------------------------


def _longqa(home: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "longqa.cli", "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def indexed(tmp_path):
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(paragraphs=24), "utf-8")
    home = tmp_path / "home"
    env = {**os.environ, "LONGQA_WARM": "1", "LONGQA_WARM_IDLE_S": "300"}
    env.pop("LONGQA_MODEL", None)
    done = _longqa(home, "index", str(doc), "-q", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    yield doc, home, env
    _longqa(home, "warm", "stop", env=env)


def _seconds_masked(text: str) -> str:
    return re.sub(r"\d+\.\d\d", "S", text)


def test_the_warm_server_answers_as_the_process_would_and_is_reused(indexed):
    doc, home, env = indexed
    question = ["ask", str(doc), "How deep is the main channel after the dredging?"]
    _wait_for(lambda: warm_client.status(home) is not None, 120)  # the index started it for the questions after it
    started = warm_client.status(home)
    first = _longqa(home, *question, env=env)
    server = warm_client.status(home)
    assert server["pid"] == started["pid"]  # the first ask was answered by the server the index started
    assert server is not None and first.returncode == 0, first.stderr[-2000:]
    second = _longqa(home, *question, env=env)
    assert warm_client.status(home)["pid"] == server["pid"]  # reused, not started again
    alone = _longqa(home, *question, "--no-warm", env=env)
    assert first.stdout == second.stdout == alone.stdout and "Evidence:" in alone.stdout
    assert first.stderr == second.stderr == alone.stderr and "[retrieve]" in alone.stderr
    as_json = [_longqa(home, *question, "--json", *more, env=env) for more in ([], ["--no-warm"])]
    assert as_json[0].stdout == as_json[1].stdout and json.loads(as_json[0].stdout)["citations"]
    scripted = [_longqa(home, *question, "--model", "scripted", *more, env=env) for more in ([], ["--no-warm"])]
    assert scripted[0].returncode == scripted[1].returncode == 0, scripted[0].stderr[-2000:]
    assert "Answer [scripted" in scripted[0].stdout
    assert _seconds_masked(scripted[0].stdout) == _seconds_masked(scripted[1].stdout)
    assert _seconds_masked(scripted[0].stderr) == _seconds_masked(scripted[1].stderr)
    bad = [_longqa(home, "ask", str(doc.parent / "missing.md"), "q?", *more, env=env) for more in ([], ["--no-warm"])]
    assert bad[0].returncode == bad[1].returncode != 0 and "missing.md" in bad[1].stderr + bad[1].stdout
    assert (bad[0].stdout, bad[0].stderr) == (bad[1].stdout, bad[1].stderr)
    assert warm_client.status(home)["pid"] == server["pid"]
    stopped = _longqa(home, "warm", "stop", env=env)
    assert f"warm server {server['pid']}" in stopped.stdout
    _wait_for(lambda: warm_client.status(home) is None)


def test_a_standby_that_opened_the_library_before_its_file_changed_answers_from_the_change(indexed):
    """The standby rehearsed over the library as it was (its vectors and BM25 loaded); the file then
    changes: the next ask updates the library and answers from the new text, as a fresh process does."""
    doc, home, env = indexed
    _wait_for(lambda: warm_client.status(home) is not None, 120)
    assert _longqa(home, "ask", str(doc), "How deep is the main channel?", "--json", env=env).returncode == 0
    _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "ready", 120)
    standby = warm_client.status(home)["standby_pid"]
    assert "question(s) running; standby ready; current" in _longqa(home, "warm", "status", env=env).stdout
    doc.write_text(doc.read_text("utf-8") + "\n\nThe lighthouse keeper of Saltreach is Ottoline Brisk.\n", "utf-8")
    question = ["ask", str(doc), "Who is the lighthouse keeper of Saltreach?", "--json"]
    warm = _longqa(home, *question, env=env)
    assert warm.returncode == 0, warm.stderr[-2000:]
    _wait_for(lambda: not Path(f"/proc/{standby}").exists() or _proc_state(standby) == "Z")  # it took the ask
    alone = _longqa(home, *question, "--no-warm", env=env)  # the library as the warm ask left it (version 2)
    answered, expected = json.loads(warm.stdout), json.loads(alone.stdout)
    assert "version 2: 0 added, 1 changed" in " ".join(answered["trace"])  # the standby's ask updated it
    assert answered["citations"] == expected["citations"]
    assert [c["text"] for c in answered["citations"] if "Ottoline Brisk" in c["text"]]


def test_an_index_run_while_a_standby_holds_the_library_open_is_seen_by_the_next_ask(indexed):
    """Another process (`longqa index`) updates the library the standby opened and loaded: the index is
    not held back by it, and the standby's question searches the new version, as a fresh process does."""
    doc, home, env = indexed
    _wait_for(lambda: warm_client.status(home) is not None, 120)
    assert _longqa(home, "ask", str(doc), "How deep is the main channel?", "--json", env=env).returncode == 0
    _wait_for(lambda: (warm_client.status(home) or {}).get("standby") == "ready", 120)
    standby = warm_client.status(home)["standby_pid"]
    doc.write_text(doc.read_text("utf-8") + "\n\nThe harbour cat of Saltreach is called Pemberton Quill.\n", "utf-8")
    index = _longqa(home, "index", str(doc), env=env)
    assert index.returncode == 0 and "1 changed" in index.stdout, index.stdout + index.stderr[-2000:]
    question = ["ask", str(doc), "What is the harbour cat of Saltreach called?", "--json"]
    warm = _longqa(home, *question, env=env)
    assert warm.returncode == 0, warm.stderr[-2000:]
    _wait_for(lambda: not Path(f"/proc/{standby}").exists() or _proc_state(standby) == "Z")  # it took the ask
    alone = _longqa(home, *question, "--no-warm", env=env)
    answered = json.loads(warm.stdout)
    assert "indexed (version" not in " ".join(answered["trace"])  # the ask found it up to date: nothing to update
    assert answered["citations"] == json.loads(alone.stdout)["citations"]
    assert [c["text"] for c in answered["citations"] if "Pemberton Quill" in c["text"]]


def test_an_index_with_the_warm_path_off_starts_no_server(tmp_path):
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(paragraphs=4), "utf-8")
    env = {**os.environ, "LONGQA_WARM": "0"}
    done = _longqa(tmp_path / "home", "index", str(doc), "-q", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert warm_client.status(tmp_path / "home") is None and not (tmp_path / "home" / "warm").exists()


def test_another_environment_answers_in_process_and_retires_the_server(indexed):
    doc, home, env = indexed
    question = ["ask", str(doc), "Who replanted the seagrass?"]
    assert _longqa(home, *question, env=env).returncode == 0
    pid = warm_client.status(home)["pid"]
    other = _longqa(home, "-v", *question, env={**env, "WARM_TEST_OTHER": "1"})
    assert other.returncode == 0 and "Evidence:" in other.stdout
    assert "answering in this process: the warm server answered 'stale'" in other.stderr
    _wait_for(lambda: not Path(f"/proc/{pid}").exists() or _proc_state(pid) == "Z")
    status = _longqa(home, "warm", "status", env=env)
    assert "no warm server" in status.stdout


def test_a_stopped_server_finishing_a_question_lets_a_new_one_start(tmp_path, capfd):
    home = tmp_path / "home"
    old = _start_fake(home)
    pid_file = tmp_path / "worker.pid"
    own = warm_client.status(home)["stamp"]
    asked = threading.Thread(target=_ask, args=(home, ["sleep", str(pid_file)], own))
    asked.start()
    _wait_for(lambda: pid_file.exists() and pid_file.read_text())
    assert warm_client.stop(home)["pid"] == old.pid  # it stops listening, its question goes on
    new = _start_fake(home)
    try:
        assert warm_client.status(home)["pid"] == new.pid and old.poll() is None
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        asked.join()
        assert old.wait(20) == 0
    finally:
        warm_client.stop(home)
        new.wait(20)
    assert "ended by SIGKILL" in capfd.readouterr().err
