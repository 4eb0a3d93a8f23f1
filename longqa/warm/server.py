"""The warm server: one process per user and index home that has already imported what a question
needs, so `longqa ask` answers without paying the imports each time (issue #32). It listens once
LangGraph, the compiled graph and the ONNX query encoder are loaded, and loads the rest (Chroma, BM25,
the model client, the tokenizer) while it waits, one step at a time between requests.

`longqa ask` starts it on demand (`python -m longqa.warm.server --home HOME`, detached) and talks to
it over a Unix socket under the home (`HOME/warm/ask.sock`; the folder 0700, the socket 0600). Each
question runs in a child forked from the warm process: the child takes the client's standard
streams (passed over the socket), working folder, environment and arguments, and runs the CLI's own
`main`; the output is therefore the in-process output. A child that fails, is killed, or runs past
LONGQA_WARM_MAX_RUN_S ends alone: the server reports it and keeps serving. The server answers only
its own user (SO_PEERCRED), reads at most MAX_REQUEST_BYTES within REQUEST_READ_S, refuses a client
whose code or environment stamp differs from its own (then exits: it is out of date), and exits
after LONGQA_WARM_IDLE_S without a question or on `longqa warm stop`.

Between questions one child waits ahead, the standby: forked when a question ends, it rehearses that
ask (the same documents, a fixed question, evidence only, reading only: longqa/warm/rehearsal.py), so its
library is open and its indexes loaded, and then takes the next question in place of a fresh child.
A standby still rehearsing when a question arrives takes it after the rehearsal when the request fits
their socket's buffer, else it is killed and a fresh child runs the question. LONGQA_WARM_STANDBY=0
turns standbys off.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from longqa.cli.warm_protocol import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_RUN_S,
    MAX_REQUEST_BYTES,
    REQUEST_READ_S,
    WarmError,
    listen,
    peer_allowed,
    peer_uid,
    private_dir,
    receive_message,
    send_message,
    stamp,
    unlink_if_ours,
)
from longqa.warm.preload import later_loads, preload
from longqa.warm.worker import Rehearsal, Runner, close_fds, run_child, run_standby

REHEARSAL_MAX_S = 120.0  # a standby still rehearsing after this long is killed (a hung folder, a huge walk)
QUEUED_REQUEST_BYTES = 64 << 10  # a request this small waits in the socket buffer for a rehearsing standby


@dataclass
class Running:
    """One question being answered: the child's pid, its client's connection, when it started."""

    pid: int
    conn: socket.socket
    started: float


@dataclass
class Standby:
    """The child waiting for the next question: its pid, the server's end of their socket pair, when it
    was forked, and whether its rehearsal is over (it said so on the socket)."""

    pid: int
    sock: socket.socket
    born: float
    ready: bool = False


@dataclass
class Server:
    """The accept loop: requests are read one at a time (each bounded), questions run in children."""

    listener: socket.socket
    bound_inode: int
    own_stamp: str
    run: Runner
    lock: int = -1  # the home's server lock: released with the socket, so a new server may start at once
    idle_s: float = DEFAULT_IDLE_S
    max_run_s: float = DEFAULT_MAX_RUN_S
    later: list[Callable[[], object]] = field(default_factory=list)  # loaded between requests, in order
    running: dict[int, Running] = field(default_factory=dict)
    stopping: bool = False
    last_active: float = field(default_factory=time.monotonic)
    rehearse: Rehearsal | None = None  # what a standby runs before it waits (None: it only waits)
    standbys: bool = True  # LONGQA_WARM_STANDBY=0: every question in a fresh child
    standby: Standby | None = None
    standby_wanted: bool = True  # one standby per question that ended (and one at the start): never a loop
    last_ask: dict | None = None  # the request a new standby rehearses

    def serve(self) -> None:
        """Answer until stopped (by a request, SIGTERM, a client with another stamp) or idle."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        self._wake = (wake_r, wake_w)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(wake_r, selectors.EVENT_READ, "wake")
        while not (self.stopping and not self.running):
            if not self.running and time.monotonic() - self.last_active > self.idle_s:
                break
            events = self.selector.select(timeout=0 if self.later else self._next_timeout())
            if not events and self.later:
                self._load_next()
            for key, _ in events:
                if key.data == "accept" and not self.stopping:
                    self._accept()
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_r, 512)
                elif isinstance(key.data, Running):
                    self._client_spoke(key.data)
                elif key.data == "standby":
                    self._standby_spoke()
            self._reap()
            self._enforce_deadlines()
            if self.stopping:
                self._stop_listening()
            elif self.standby_wanted and not self.running and not self.later:
                self._fork_standby()
        self._drop_standby()

    def _load_next(self) -> None:
        """One step of what the server loads while nothing waits (a request waits at most one import)."""
        step = self.later.pop(0)
        try:
            step()
        except Exception as e:  # noqa: BLE001 - a question that needs it loads it itself and reports the fault
            print(f"longqa warm server: preloading failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)

    def _next_timeout(self) -> float:
        now = time.monotonic()
        ends = [r.started + self.max_run_s for r in self.running.values()]
        ends.append(self.last_active + self.idle_s)
        if self.standby is not None and not self.standby.ready:
            ends.append(self.standby.born + REHEARSAL_MAX_S)
        return max(0.05, min(ends) - now)

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_active = time.monotonic()
        try:
            self._handle(conn)
        except Exception as e:  # noqa: BLE001 - one bad request never stops the server
            print(f"longqa warm server: request failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            with contextlib.suppress(OSError):
                send_message(conn, {"status": "error", "reason": f"{type(e).__name__}: {e}"})
            conn.close()

    def _handle(self, conn: socket.socket) -> None:
        if not peer_allowed(peer_uid(conn)):
            send_message(conn, {"status": "refused", "reason": "another user's process"})
            conn.close()
            return
        conn.settimeout(REQUEST_READ_S)
        try:
            request, fds = receive_message(conn, MAX_REQUEST_BYTES, fds=3)
        except (WarmError, EOFError, TimeoutError) as e:
            with contextlib.suppress(OSError):
                send_message(conn, {"status": "error", "reason": f"bad request: {e}"})
            conn.close()
            return
        op = request.get("op")
        if op == "ask" and request.get("stamp") == self.own_stamp and len(fds) == 3:
            self._start(conn, request, fds)
            return
        close_fds(fds)
        send_message(conn, self._reply(op, request))
        conn.close()

    def _reply(self, op: object, request: dict) -> dict:
        if op == "ping":
            standby = None if self.standby is None else ("ready" if self.standby.ready else "rehearsing")
            return {
                "status": "ok",
                "pid": os.getpid(),
                "stamp": self.own_stamp,
                "running": len(self.running),
                "standby": standby,
                "standby_pid": None if self.standby is None else self.standby.pid,
            }
        if op == "stop":
            self.stopping = True
            return {"status": "stopping", "pid": os.getpid()}
        if op == "ask" and request.get("stamp") != self.own_stamp:
            self.stopping = True  # its code or environment is out of date: the next ask starts a new one
            return {"status": "stale", "reason": "the warm server runs other code or another environment"}
        return {"status": "error", "reason": f"bad request: {op!r} (an ask passes its three standard streams)"}

    def _start(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        self.last_ask = request
        pid = self._hand_to_standby(request, fds)
        if pid is None:
            pid = _fork()
            if pid == 0:  # the child: never returns
                run_child(request, fds, closing=[conn, self.listener, self.lock, *self._open_fds()], run=self.run)
        close_fds(fds)
        conn.settimeout(None)
        conn.setblocking(False)
        running = Running(pid, conn, time.monotonic())
        self.running[pid] = running
        self.selector.register(conn, selectors.EVENT_READ, running)
        _send_quietly(conn, {"status": "started", "worker": pid})

    def _open_fds(self) -> list:
        standby = [self.standby.sock] if self.standby is not None else []
        return [*self._wake, *(r.conn for r in self.running.values()), *standby]

    # -- the standby -----------------------------------------------------------------------------
    def _fork_standby(self) -> None:
        """Fork the child that waits for the next question, after rehearsing the last ask."""
        self.standby_wanted = False
        if not self.standbys:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = _fork()
        if pid == 0:  # the standby: never returns
            closing = [ours, self.listener, self.lock, *self._open_fds()]
            run_standby(theirs, self.last_ask, closing, run=self.run, rehearse=self.rehearse)
        theirs.close()
        ours.setblocking(False)
        self.standby = Standby(pid, ours, time.monotonic())
        self.selector.register(ours, selectors.EVENT_READ, "standby")

    def _standby_spoke(self) -> None:
        """The standby's rehearsal is over (a `ready` line), or it died (the socket closed)."""
        standby = self.standby
        if standby is None:
            return
        try:
            data = standby.sock.recv(4096)  # its one short `ready` message
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            standby.ready = True
        else:
            self._drop_standby()

    def _hand_to_standby(self, request: dict, fds: list[int]) -> int | None:
        """Pass the question to the standby (its pid), or None when there is none that can take it now:
        one still rehearsing takes only a request small enough to wait in their socket's buffer."""
        standby = self._detach_standby()
        if standby is None:
            return None
        message = {"request": request}
        try:
            alive = os.waitpid(standby.pid, os.WNOHANG)[0] == 0  # killed since (the OOM killer, a user): a fresh child
        except ChildProcessError:
            alive = False
        if alive and (standby.ready or len(json.dumps(message)) <= QUEUED_REQUEST_BYTES):
            try:
                send_message(standby.sock, message, fds=fds)  # non-blocking: a full buffer raises
                standby.sock.close()
                return standby.pid
            except OSError:
                pass
        self._kill_standby(standby)
        return None

    def _detach_standby(self) -> Standby | None:
        """The standby, no longer the server's to watch (None: there is none)."""
        standby, self.standby = self.standby, None
        if standby is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(standby.sock)
        return standby

    def _drop_standby(self) -> None:
        standby = self._detach_standby()
        if standby is not None:
            self._kill_standby(standby)

    @staticmethod
    def _kill_standby(standby: Standby) -> None:
        """A standby only ever read libraries before it took a question: killing it loses nothing. (One
        killed in the instant between the check above and the hand-over fails its question as a
        worker killed mid-question does: the client says so.)"""
        standby.sock.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(standby.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(standby.pid, 0)

    def _client_spoke(self, running: Running) -> None:
        """An interrupt (Ctrl-C at the client): the child gets SIGINT, as it would in a terminal; a
        client gone (killed): SIGTERM, which ends the child quietly."""
        try:
            data = running.conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(running.conn)
        with contextlib.suppress(ProcessLookupError):
            os.kill(running.pid, signal.SIGINT if data else signal.SIGTERM)

    def _reap(self) -> None:
        for pid in list(self.running):
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done == 0:
                continue
            running = self.running.pop(pid)
            if os.WIFSIGNALED(status):
                reply = {"status": "killed", "signal": signal.Signals(os.WTERMSIG(status)).name}
            else:
                reply = {"status": "done", "exit": os.waitstatus_to_exitcode(status)}
            self._finish(running, reply)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        if self.standby is not None and not self.standby.ready and now - self.standby.born > REHEARSAL_MAX_S:
            self._drop_standby()
        for running in list(self.running.values()):
            if now - running.started > self.max_run_s:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(running.pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(running.pid, 0)
                del self.running[running.pid]
                self._finish(running, {"status": "timeout", "seconds": self.max_run_s})

    def _finish(self, running: Running, reply: dict) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(running.conn)
        running.conn.setblocking(True)
        running.conn.settimeout(REQUEST_READ_S)
        _send_quietly(running.conn, reply)
        running.conn.close()
        self.last_active = time.monotonic()
        self.standby_wanted = True

    def _stop_listening(self) -> None:
        if self.listener.fileno() >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(self.listener)
            unlink_if_ours(self.listener.getsockname(), self.bound_inode)
            self.listener.close()
            if self.lock >= 0:
                os.close(self.lock)
                self.lock = -1


def _fork() -> int:
    """os.fork(), with the server's own output flushed first (a child would write it again)."""
    sys.stdout.flush()
    sys.stderr.flush()
    return os.fork()


def _send_quietly(conn: socket.socket, message: dict) -> None:
    with contextlib.suppress(OSError):
        send_message(conn, message)


def serve(
    home: Path,
    idle_s: float,
    max_run_s: float,
    run: Runner | None = None,
    later: list | None = None,
    rehearse: Rehearsal | None = None,
    standbys: bool = True,
) -> int:
    """Run the home's warm server until it is stopped or idle; 0 at once when another holds the lock.
    `run` replaces the CLI, `later` what is loaded between requests and `rehearse` what a standby runs
    first (tests); without `run` the CLI's imports are loaded first, `later_loads()` after the server
    listens, and standbys rehearse with longqa/warm/rehearsal.py. `standbys=False`: a fresh child per question."""
    directory = private_dir(home / "warm")
    lock = os.open(directory / "server.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another server is running or starting: the client waits for that one
    own_stamp = stamp()  # before the imports: code changed while they load makes the next ask restart
    runner = run or preload()
    listener, inode = listen(directory)
    path = listener.getsockname()
    print(f"longqa warm server {os.getpid()} listening on {path}", file=sys.stderr, flush=True)
    steps = later_loads() if run is None else list(later or [])
    if run is None:
        from longqa.warm.rehearsal import rehearse
    server = Server(
        listener, inode, own_stamp, runner, lock, idle_s, max_run_s, steps, rehearse=rehearse, standbys=standbys
    )
    try:
        server.serve()
    finally:
        server._stop_listening()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m longqa.warm.server --home HOME [--idle S] [--max-run S]`."""
    p = argparse.ArgumentParser(prog="longqa-warm-server", description=__doc__.split("\n\n")[0])
    p.add_argument("--home", type=Path, required=True, help="the index home whose questions it answers")
    p.add_argument("--idle", type=float, default=DEFAULT_IDLE_S, help="exit after this many seconds without a question")
    p.add_argument("--max-run", type=float, default=DEFAULT_MAX_RUN_S, help="stop a question that runs longer")
    p.add_argument(
        "--standby",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep a child that rehearsed the last ask for the next question (--no-standby: fork one per question)",
    )
    args = p.parse_args(argv)
    try:
        return serve(args.home.expanduser().absolute(), args.idle, args.max_run, standbys=args.standby)
    except WarmError as e:
        print(f"longqa warm server: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
