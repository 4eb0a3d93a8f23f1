"""Real servers for the tests, started on 127.0.0.1 and free ports and stopped by PID: a Chroma
server (`chroma run` from this interpreter's venv), PostgreSQL (Debian's `postgresql`, run as its
unprivileged `postgres` user when the tests run as root) and longqa replicas (`longqa serve`).
A missing server program is a failure that says how to install it, never a skip: the README's
set-up (scripts/dev.sh) installs every one of them."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HOST = "127.0.0.1"
STARTUP_DEADLINE_S = 90.0
STOP_TIMEOUT_S = 10.0
GROUP_STOP_TIMEOUT_S = 15.0  # a LangGraph server's group: its uvicorn workers end with it


def add_key(env: dict[str, str], *args: str) -> str:
    """A new API key from `longqa keys add ARGS` in `env` (its keys file): the key's text."""
    longqa = str(Path(sys.executable).parent / "longqa")
    done = subprocess.run([longqa, "keys", "add", *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def log_text(log: Path) -> str:
    try:
        return log.read_text("utf-8", errors="replace")[-8000:]
    except OSError as e:
        return f"(no server log: {e})"


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, wait, then SIGKILL if it will not go."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


def wait_until(ready: Callable[[], bool], proc: subprocess.Popen, what: str, log: Path) -> None:
    deadline, last = time.monotonic() + STARTUP_DEADLINE_S, None
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with code {proc.returncode} before it was ready; log:\n{log_text(log)}")
        try:
            if ready():
                return
        except Exception as e:  # noqa: BLE001 - refused until it listens
            last = e
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not ready after {STARTUP_DEADLINE_S:.0f} s ({last!r}); log:\n{log_text(log)}")
        time.sleep(0.2)


def answers_ok(url: str) -> bool:
    """Whether a LangGraph server at `url` answers its /ok."""
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to a server's process group (its PID leads it: start_new_session), wait, SIGKILL what is left."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=GROUP_STOP_TIMEOUT_S)
    with contextlib.suppress(ProcessLookupError):  # anything left in the group (uvicorn workers), and the leader
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.wait(timeout=GROUP_STOP_TIMEOUT_S)


@dataclass
class LanggraphDev:
    """A running `langgraph dev`: its URL and process."""

    url: str
    proc: subprocess.Popen


@contextlib.contextmanager
def langgraph_dev(langgraph: Path, env: dict[str, str], log: Path, cwd: Path, *extra: str) -> Iterator[LanggraphDev]:
    """`langgraph dev` (the CLI at `langgraph`) on 127.0.0.1 and a free port, serving the langgraph.json in `cwd`
    with `extra` arguments, its output in `log`; stopped with its process group after. One that exits or does
    not answer /ok within STARTUP_DEADLINE_S fails the test with the end of its log."""
    port = free_port()
    url = f"http://{HOST}:{port}"
    command = [str(langgraph), "dev", "--no-browser", "--no-reload", "--host", HOST, "--port", str(port), *extra]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(lambda: answers_ok(url), proc, f"langgraph dev on {url}", log)
        yield LanggraphDev(url, proc)
    finally:
        stop_group(proc)


# -- Chroma ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChromaServer:
    host: str
    port: int
    pid: int
    log: Path


def chroma_client(host: str, port: int):
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))


@contextlib.contextmanager
def chroma_server(base: Path, port: int | None = None) -> Iterator[ChromaServer]:
    """`chroma run` with its data under `base`, on `port` (default: a free one; the same base and
    port again: the same server restarted)."""
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.fail(f"no chroma executable next to {sys.executable} (chromadb installs it: bash scripts/dev.sh)")
    log, port = base / "chroma.log", port or free_port()
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [str(chroma), "run", "--host", HOST, "--port", str(port), "--path", str(base / "chroma-data")],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            cwd=base,
        )
    try:
        wait_until(lambda: chroma_client(HOST, port).heartbeat() > 0, proc, "chroma server", log)
        yield ChromaServer(HOST, port, proc.pid, log)
    finally:
        stop(proc)


# -- PostgreSQL --------------------------------------------------------------------------------
def postgres_bin() -> Path:
    """Debian's server programs (/usr/lib/postgresql/<version>/bin), newest version first."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]), reverse=True)
    if not found and shutil.which("initdb"):
        return Path(shutil.which("initdb")).resolve().parent  # type: ignore[arg-type]
    if not found:
        pytest.fail("no PostgreSQL server here: `bash scripts/dev.sh test` installs Debian's postgresql")
    return Path(found[0]).parent


@dataclass
class Postgres:
    uri: str
    restart: Callable[[], None]


@contextlib.contextmanager
def postgres_server() -> Iterator[Postgres]:
    """A throw-away cluster. As root, the server runs as the `postgres` user (PostgreSQL refuses
    to run as root), in a directory of its own outside pytest's private tmp."""
    bindir = postgres_bin()
    base = Path(tempfile.mkdtemp(prefix="longqa-pg-"))
    os.chmod(base, 0o755)
    data, log, port = base / "data", base / "postgres.log", free_port()
    as_user: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "longqa", "-A", "trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
        env=env,
    )
    options = f"-p {port} -k {base} -c listen_addresses={HOST} -c fsync=off"
    start = [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]
    done = subprocess.run(start, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        pytest.fail(f"PostgreSQL did not start: {done.stdout}{done.stderr}\n{log_text(log)}")

    def restart() -> None:  # every client connection is dropped
        again = subprocess.run([*start[:-2], "-m", "fast", "-w", "restart"], capture_output=True, text=True, env=env)
        assert again.returncode == 0, again.stdout + again.stderr

    try:
        yield Postgres(f"postgresql://longqa@{HOST}:{port}/postgres", restart)
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


# -- longqa replicas ---------------------------------------------------------------------------
class Replica:
    """One `longqa serve` process with a home (its caches) of its own."""

    def __init__(self, name: str, home: Path, env: dict[str, str]):
        self.name, self.home, self.env = name, home, env
        self.port = free_port()
        self.log = home.parent / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> Replica:
        self.home.mkdir(parents=True, exist_ok=True)
        longqa = Path(sys.executable).parent / "longqa"
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(longqa), "serve", "--host", HOST, "--port", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env, "LONGQA_HOME": str(self.home)},
            )
        wait_until(lambda: self.get("/health")["ok"], self.proc, f"replica {self.name}", self.log)
        return self

    def kill(self) -> None:
        """SIGKILL: no cleanup runs, as when a machine dies."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)

    def get(self, path: str) -> dict:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def post(self, path: str, body: dict, timeout: float = 600) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.url + path, json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")
