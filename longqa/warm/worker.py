"""What runs in the warm server's forked children (longqa/warm/server.py): a question's worker, which
becomes the client's `longqa` process (its streams, folder, environment and arguments) and runs the
CLI's `main`, and the standby, which rehearses the last ask first and then waits for the next question.
Each ends with `os._exit`, never in the server's loop."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable

from longqa.cli.warm_protocol import MAX_REQUEST_BYTES, WarmError, receive_message, send_message

Runner = Callable[[list[str]], int]
Rehearsal = Callable[[list[str]], str]  # the last ask's arguments -> what happened (longqa/warm/rehearsal.py)


def run_child(request: dict, fds: list[int], closing: list, run: Runner) -> None:
    """In the forked child: become the client's `longqa` process and run its arguments."""
    code = 1
    try:
        _leave_the_server(closing)
        code = _answer(request, fds, run)
    except BaseException:  # noqa: BLE001 - whatever happens, the child exits here, never in the server's loop
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        _exit(code)


def run_standby(
    sock: socket.socket, rehearsal: dict | None, closing: list, run: Runner, rehearse: Rehearsal | None
) -> None:
    """In the forked standby: rehearse the last ask (its output to /dev/null), say `ready`, wait for
    the question the server passes on (with the client's three streams) and run it as `run_child` does.
    The server closing the socket ends it quietly."""
    code = 0
    try:
        _leave_the_server(closing)
        outcome = "none"
        if rehearsal is not None and rehearse is not None:
            devnull = os.open(os.devnull, os.O_RDWR)
            for target in (0, 1, 2):
                os.dup2(devnull, target)
            os.close(devnull)
            _become_client(rehearsal)
            outcome = rehearse([str(a) for a in rehearsal.get("argv", [])])
        with contextlib.suppress(OSError):  # the server may have passed a question on already, and closed its end
            send_message(sock, {"status": "ready", "rehearsal": outcome})
        try:
            message, fds = receive_message(sock, MAX_REQUEST_BYTES + 1024, fds=3)
        except (EOFError, WarmError, OSError):
            os._exit(0)  # no question came: the server dropped this standby
        sock.close()
        _flush()  # what the rehearsal left in Python's buffers goes to /dev/null, not to the client
        code = _answer(dict(message.get("request") or {}), fds, run)
    except BaseException:  # noqa: BLE001 - whatever happens, the standby exits here, never in the server's loop
        code = 1
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        _exit(code)


def _leave_the_server(closing: list) -> None:
    """Close the server's sockets and descriptors, take the default signal handling, die with the server."""
    for item in closing:
        with contextlib.suppress(OSError):
            item.close() if isinstance(item, socket.socket) else os.close(item)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _die_with_parent()


def _answer(request: dict, fds: list[int], run: Runner) -> int:
    """Take the client's three streams, folder and environment, and run its arguments."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    _become_client(request)
    return _run_main(run, [str(a) for a in request.get("argv", [])])


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _exit(code: int) -> None:
    _flush()
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


def close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
