"""`longqa ask` through the warm server (`longqa/warm/server.py`): the client's side.

The `longqa` command offers an `ask` here first. This module and `warm_protocol` import only the
standard library, so a question the server answers costs this process its interpreter and a few
milliseconds. The server is started on demand by the first ask (detached; it exits after
LONGQA_WARM_IDLE_S, 600 s by default, without a question) and the client waits for it. Where the
server cannot be used -- turned off (`--no-warm`, LONGQA_WARM=0), not startable, another user's, a
stamp (code or environment) other than this client's, a request it refuses -- `answer` returns None
and the caller answers in its own process, saying why under `-v`. Once the server has started the
question, its outcome is the server's: a worker that dies is reported, never asked twice.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections import namedtuple
from collections.abc import Sequence
from pathlib import Path

from longqa.cli.warm_protocol import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_RUN_S,
    MAX_REPLY_BYTES,
    WarmError,
    check_socket_path,
    peer_allowed,
    peer_uid,
    private_dir,
    receive_message,
    send_message,
    socket_path,
    stamp,
    warm_dir,
)
from longqa.retrieval.environment import default_home  # standard library only, as this client must be

START_WAIT_S = 120.0  # the first ask waits this long for the server's imports (a busy machine is slow)
OFF_VALUES = ("0", "false", "no", "off")


class Fallback(Exception):
    """Answer in this process instead; the message says why."""


class Ask(namedtuple("Ask", "argv home verbose")):  # not a dataclass: `dataclasses` costs the client ~10 ms
    """A `longqa ask` command line the server may answer (`argv`), its home and whether it is verbose."""

    __slots__ = ()


def parse(argv: Sequence[str], environ: dict[str, str] | None = None, command: str = "ask") -> Ask | None:
    """The ask in `argv` (`[-v] [--home H] ask ...`), or None when it is not one for the server:
    another command, help, `--no-warm`, LONGQA_WARM=0, options the real parser must read first.
    `command="index"`: the same for an index command (whose home the server is started for)."""
    environ = dict(os.environ if environ is None else environ)
    if environ.get("LONGQA_WARM", "").strip().lower() in OFF_VALUES:
        return None
    verbose, home, i = False, None, 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-v", "--verbose"):
            verbose = True
        elif arg == "--home" and i + 1 < len(argv):
            home, i = argv[i + 1], i + 1
        elif arg.startswith("--home="):
            home = arg[len("--home=") :]
        else:
            break
        i += 1
    if i >= len(argv) or argv[i] != command:
        return None
    if any(a in ("-h", "--help") or a.startswith("--no-w") for a in argv[i + 1 :]):
        return None
    where = Path(home).expanduser() if home else default_home(environ)
    return Ask(list(argv), where, verbose)


def answer(argv: Sequence[str]) -> int | None:
    """Answer `longqa ARGV` through the home's warm server (starting it when none runs) and return
    the exit code; None when the caller must answer in-process (the reason printed under `-v`)."""
    ask = parse(argv)
    if ask is None:
        return None
    try:
        return _answer(ask)
    except Fallback as e:
        reason = str(e)
    except Exception as e:  # noqa: BLE001 - a fault of this path never fails the question: it is answered here
        reason = f"the warm path failed before the server took the question ({type(e).__name__}: {e})"
    if ask.verbose:
        print(f"longqa: answering in this process: {reason}", file=sys.stderr, flush=True)
    return None


def start_for_index(argv: Sequence[str]) -> None:
    """As `longqa index` begins: start its home's warm server (detached, not waited for) unless one runs
    or the warm path is off, so it imports while the index reads and embeds and the questions that follow
    are answered warm from the first (measured: a first ask that starts the server took 4.3 s, a warm one
    0.4 s; bench/README). An index that then fails leaves it to its idle timeout."""
    index = parse(argv, command="index")
    if index is None:
        return
    try:
        _usable(index.home)
        conn = _connect(index.home)
        if conn is not None:
            conn.close()
            return
        start_server(index.home)
    except (Fallback, WarmError, OSError) as e:  # the index is done; the first ask will start the server
        if index.verbose:
            print(f"longqa: the warm server was not started: {e}", file=sys.stderr, flush=True)


def _usable(home: Path) -> None:
    """Raise Fallback where the home's warm server cannot be used here: no Unix sockets with SO_PEERCRED,
    or a warm folder or socket path that is not private and safe."""
    if not hasattr(socket, "SO_PEERCRED") or not hasattr(socket, "AF_UNIX"):
        raise Fallback("the warm server needs Unix sockets with SO_PEERCRED (Linux)")
    try:
        private_dir(warm_dir(home))
        check_socket_path(socket_path(home))
    except (WarmError, OSError) as e:
        raise Fallback(f"no warm server: {e}") from None


def _answer(ask: Ask) -> int:
    _usable(ask.home)
    own = stamp()
    conn = _connect(ask.home) or _start_and_connect(ask.home)
    with conn:
        return _converse(conn, ask, own)


def _connect(home: Path) -> socket.socket | None:
    """A connection to the home's server, or None when none listens (no socket, or a stale one)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(socket_path(home)))
    except (FileNotFoundError, ConnectionRefusedError):
        conn.close()
        return None
    except OSError as e:
        conn.close()
        raise Fallback(f"cannot reach the warm server: {e}") from None
    if not peer_allowed(peer_uid(conn)):
        conn.close()
        raise Fallback("the warm server's socket belongs to another user")
    return conn


def start_server(home: Path):  # -> subprocess.Popen (imported only here)
    """Start the home's warm server, detached (its own session, no terminal), logging to
    HOME/warm/server.log. It exits at once if another is already starting."""
    import subprocess

    directory = private_dir(warm_dir(home))
    idle = os.environ.get("LONGQA_WARM_IDLE_S", "").strip() or str(DEFAULT_IDLE_S)
    max_run = os.environ.get("LONGQA_WARM_MAX_RUN_S", "").strip() or str(DEFAULT_MAX_RUN_S)
    standby = "--no-standby" if os.environ.get("LONGQA_WARM_STANDBY", "").strip().lower() in OFF_VALUES else "--standby"
    log = os.open(directory / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "longqa.warm.server", "--home", str(home.absolute()), "--idle", idle]
            + ["--max-run", max_run, standby],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=directory,  # its own 0700 folder: `-m` puts the working folder first on sys.path
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)


def _start_and_connect(home: Path) -> socket.socket:
    try:
        process = start_server(home)
    except (OSError, WarmError) as e:
        raise Fallback(f"cannot start the warm server: {e}") from None
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        conn = _connect(home)
        if conn is not None:
            return conn
        if process.poll():  # it failed (0: another server holds the lock and is starting)
            raise Fallback(f"the warm server exited with code {process.returncode} (see {warm_dir(home)}/server.log)")
        time.sleep(0.05)
    raise Fallback(f"the warm server did not start within {START_WAIT_S:g} s (see {warm_dir(home)}/server.log)")


def _request(ask: Ask, own_stamp: str) -> dict:
    streams = {
        name: {
            "encoding": getattr(getattr(sys, name), "encoding", None),
            "errors": getattr(getattr(sys, name), "errors", None),
            "line_buffering": bool(getattr(getattr(sys, name), "line_buffering", False)),
        }
        for name in ("stdin", "stdout", "stderr")
    }
    return {
        "op": "ask",
        "stamp": own_stamp,
        "argv": ask.argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "streams": streams,
    }


def _converse(conn: socket.socket, ask: Ask, own_stamp: str) -> int:
    """Send the question with this process's standard streams; wait for the worker's exit code."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        send_message(conn, _request(ask, own_stamp), fds=[0, 1, 2])
        first, _ = receive_message(conn, MAX_REPLY_BYTES)
    except (EOFError, OSError, WarmError) as e:  # nothing was run: safe to answer here
        raise Fallback(f"the warm server did not take the question ({e})") from None
    if first.get("status") != "started":
        raise Fallback(f"the warm server answered {first.get('status')!r}: {first.get('reason', '')}".rstrip(": "))
    try:
        return _wait(conn)
    except Exception as e:  # noqa: BLE001 - it has taken the question: reported, never asked again here
        return _report(f"the warm server's answer could not be read ({type(e).__name__}: {e})")


def _wait(conn: socket.socket) -> int:
    """The worker's outcome; Ctrl-C is passed on to it (a second one leaves it)."""
    interrupted = False
    while True:
        try:
            final, _ = receive_message(conn, MAX_REPLY_BYTES)
            break
        except KeyboardInterrupt:
            if interrupted:
                return 130
            interrupted = True
            try:
                send_message(conn, {"op": "interrupt"})
            except OSError:
                return 130
        except (EOFError, OSError, WarmError) as e:
            return _report(f"the warm server stopped before the answer was complete ({e})")
    status = final.get("status")
    if status == "done":
        return int(final.get("exit", 1))
    if status == "killed":
        return _report(f"the warm server's worker was ended by {final.get('signal')} before it finished")
    if status == "timeout":
        return _report(f"the question ran past {final.get('seconds')} s (LONGQA_WARM_MAX_RUN_S) and was stopped")
    return _report(f"the warm server answered {status!r}")


def _report(problem: str) -> int:
    print(f"longqa: error: {problem}; ask again, or with --no-warm", file=sys.stderr, flush=True)
    return 1


def _ping(home: Path, op: str) -> dict | None:
    try:
        conn = _connect(home)
    except Fallback:
        return None
    if conn is None:
        return None
    with conn:
        conn.settimeout(10)
        try:
            send_message(conn, {"op": op})
            reply, _ = receive_message(conn, MAX_REPLY_BYTES)
        except (EOFError, OSError, WarmError):
            return None
    return reply


def status(home: Path) -> dict | None:
    """The home's warm server (`pid`, `stamp`, `running`: questions in progress), None when none runs."""
    return _ping(home, "ping")


def stop(home: Path) -> dict | None:
    """Ask the home's warm server to exit (after the questions it is answering); None when none runs."""
    return _ping(home, "stop")


def current_stamp() -> str:
    """This process's stamp (what a server must have to answer it)."""
    return stamp()
