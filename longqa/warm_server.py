"""The warm server: one process per user and index home that has already imported what a question
needs, so `longqa ask` answers without paying the imports each time (issue #32). It listens once
LangGraph, the compiled graph and the ONNX query encoder are loaded, and loads the rest (Chroma, BM25,
the model client, the tokenizer) while it waits, one step at a time between requests.

`longqa ask` starts it on demand (`python -m longqa.warm_server --home HOME`, detached) and talks to
it over a Unix socket under the home (`HOME/warm/ask.sock`; the folder 0700, the socket 0600). Each
question runs in a child forked from the warm process: the child takes the client's standard
streams (passed over the socket), working folder, environment and arguments, and runs the CLI's own
`main`; the output is therefore the in-process output. A child that fails, is killed, or runs past
LONGQA_WARM_MAX_RUN_S ends alone: the server reports it and keeps serving. The server answers only
its own user (SO_PEERCRED), reads at most MAX_REQUEST_BYTES within REQUEST_READ_S, refuses a client
whose code or environment stamp differs from its own (then exits: it is out of date), and exits
after LONGQA_WARM_IDLE_S without a question or on `longqa warm stop`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from longqa.warm_protocol import (
    DEFAULT_IDLE_S,
    DEFAULT_MAX_RUN_S,
    MAX_REQUEST_BYTES,
    REQUEST_READ_S,
    SOCKET_NAME,
    WarmError,
    check_socket_path,
    peer_allowed,
    peer_uid,
    private_dir,
    receive_message,
    send_message,
    stamp,
)

Runner = Callable[[list[str]], int]
# imported after the server listens, one at a time between requests, beyond what the CLI imports: what
# a question loads lazily (measured with `python -X importtime` and sys.modules after a question in a
# forked child). A child forked before they are loaded imports what its question needs itself; the
# first question therefore need not wait for the model client (langchain_openai, ~0.8 s) it may not use.
LATER_MODULES = (
    "chromadb",
    "chromadb.config",
    "chromadb.api.client",
    "chromadb.api.rust",
    "chromadb.telemetry.product.posthog",
    "bm25s",
    "scipy.sparse",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "langchain_openai",
)


def preload() -> Runner:
    """Import and build what every question needs before the server listens (never a library's store:
    the children open those, so each question sees the index as it is on disk): the CLI, the compiled
    graph and the ONNX query encoder, which loads in a thread while the others import; return the CLI's
    `main`. The rest is `later_loads()`."""
    from longqa.retrieval.embedder import preload_in_background

    loading = preload_in_background()
    from longqa import commands
    from longqa.ask import compiled_graph

    commands.build_parser()
    compiled_graph()
    if loading is not None:  # a load that failed is left to the questions' own, which report it
        loading.join()  # before any fork: the encoder's one-thread session then starts no thread of its own
    return commands.main


def later_loads() -> list[Callable[[], object]]:
    """What the server loads while it waits for questions, one step at a time (`Server.serve`)."""

    def load_counter() -> object:
        from longqa.retrieval.tokens import default_counter

        return default_counter()

    def importer(name: str) -> Callable[[], object]:
        def load() -> object:
            with contextlib.suppress(ImportError):
                return importlib.import_module(name)
            return None

        return load

    return [importer(name) for name in LATER_MODULES] + [load_counter]


@dataclass
class Running:
    """One question being answered: the child's pid, its client's connection, when it started."""

    pid: int
    conn: socket.socket
    started: float


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
            self._reap()
            self._enforce_deadlines()
            if self.stopping:
                self._stop_listening()

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
        _close_fds(fds)
        send_message(conn, self._reply(op, request))
        conn.close()

    def _reply(self, op: object, request: dict) -> dict:
        if op == "ping":
            return {"status": "ok", "pid": os.getpid(), "stamp": self.own_stamp, "running": len(self.running)}
        if op == "stop":
            self.stopping = True
            return {"status": "stopping", "pid": os.getpid()}
        if op == "ask" and request.get("stamp") != self.own_stamp:
            self.stopping = True  # its code or environment is out of date: the next ask starts a new one
            return {"status": "stale", "reason": "the warm server runs other code or another environment"}
        return {"status": "error", "reason": f"bad request: {op!r} (an ask passes its three standard streams)"}

    def _start(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _child(request, fds, closing=[conn, self.listener, self.lock, *self._open_fds()], run=self.run)
        _close_fds(fds)
        conn.settimeout(None)
        conn.setblocking(False)
        running = Running(pid, conn, time.monotonic())
        self.running[pid] = running
        self.selector.register(conn, selectors.EVENT_READ, running)
        _send_quietly(conn, {"status": "started", "worker": pid})

    def _open_fds(self) -> list:
        return [*self._wake, *(r.conn for r in self.running.values())]

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

    def _stop_listening(self) -> None:
        if self.listener.fileno() >= 0:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(self.listener)
            _unlink_if_ours(self.listener.getsockname(), self.bound_inode)
            self.listener.close()
            if self.lock >= 0:
                os.close(self.lock)
                self.lock = -1


def _child(request: dict, fds: list[int], closing: list, run: Runner) -> None:
    """In the forked child: become the client's `longqa` process and run its arguments."""
    code = 1
    try:
        for item in closing:
            with contextlib.suppress(OSError):
                item.close() if isinstance(item, socket.socket) else os.close(item)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _die_with_parent()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _become_client(request)
        code = _run_main(run, [str(a) for a in request.get("argv", [])])
    except BaseException:  # noqa: BLE001 - whatever happens, the child exits here, never in the server's loop
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code & 0xFF)


def _become_client(request: dict) -> None:
    """The client's working folder, environment and stream settings (encoding, line buffering)."""
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request.get("env") or {}).items()})
    streams = dict(request.get("streams") or {})
    for name in ("stdin", "stdout", "stderr"):
        stream, wanted = getattr(sys, name), dict(streams.get(name) or {})
        with contextlib.suppress(Exception):
            stream.reconfigure(
                encoding=wanted.get("encoding") or stream.encoding,
                errors=wanted.get("errors") or stream.errors,
                **({"line_buffering": bool(wanted.get("line_buffering"))} if name != "stdin" else {}),
            )


def _run_main(run: Runner, argv: list[str]) -> int:
    """`run(argv)` as the interpreter would run it as a program: SystemExit's code, a traceback
    and 1 for an uncaught exception, 130 for an interrupt that escaped."""
    try:
        return int(run(argv) or 0)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return int(e.code or 0)
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except Exception:  # noqa: BLE001 - printed as Python prints an uncaught exception
        sys.excepthook(*sys.exc_info())
        return 1


def _die_with_parent() -> None:
    """A child whose server dies is killed too (Linux's PR_SET_PDEATHSIG), so it never writes to a
    client that has already reported the server gone."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _send_quietly(conn: socket.socket, message: dict) -> None:
    with contextlib.suppress(OSError):
        send_message(conn, message)


def _unlink_if_ours(path: str, inode: int) -> None:
    """Remove the socket file if it is still the one this server bound (a newer server may own the path)."""
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == inode:
            os.unlink(path)


def listen(directory: Path) -> tuple[socket.socket, int]:
    """Bind the socket (0600 from the start), replacing a stale file left by a server that died;
    return it and the socket file's inode."""
    path = directory / SOCKET_NAME
    check_socket_path(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # this process holds the lock: whatever is there is stale
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener, os.stat(path).st_ino


def serve(home: Path, idle_s: float, max_run_s: float, run: Runner | None = None, later: list | None = None) -> int:
    """Run the home's warm server until it is stopped or idle; 0 at once when another holds the lock.
    `run` replaces the CLI and `later` what is loaded between requests (tests); without `run` the CLI's
    imports are loaded first and `later_loads()` after the server listens."""
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
    server = Server(listener, inode, own_stamp, runner, lock, idle_s, max_run_s, later=steps)
    try:
        server.serve()
    finally:
        server._stop_listening()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m longqa.warm_server --home HOME [--idle S] [--max-run S]`."""
    p = argparse.ArgumentParser(prog="longqa-warm-server", description=__doc__.split("\n\n")[0])
    p.add_argument("--home", type=Path, required=True, help="the index home whose questions it answers")
    p.add_argument("--idle", type=float, default=DEFAULT_IDLE_S, help="exit after this many seconds without a question")
    p.add_argument("--max-run", type=float, default=DEFAULT_MAX_RUN_S, help="stop a question that runs longer")
    args = p.parse_args(argv)
    try:
        return serve(args.home.expanduser().absolute(), args.idle, args.max_run)
    except WarmError as e:
        print(f"longqa warm server: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
