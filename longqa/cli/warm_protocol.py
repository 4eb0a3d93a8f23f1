"""What the warm server (`longqa/warm/server.py`) and `longqa ask` (`longqa/cli/warm_client.py`) share:
where the socket lives (and how the server binds and removes it), how a message is framed, who may
talk to it, and the stamp that says which code and environment a server answers with.

Standard library only: the client imports this module before it knows whether it will need anything
else, and a question answered by the server costs the client only these imports.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import socket
import stat
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MAX_REQUEST_BYTES = 1 << 20  # the arguments and the environment of one `longqa ask`
MAX_REPLY_BYTES = 1 << 16
REQUEST_READ_S = 5.0  # a client that does not send its whole request within this is dropped
DEFAULT_IDLE_S = 600.0  # a server with no request for this long exits (LONGQA_WARM_IDLE_S)
DEFAULT_MAX_RUN_S = 3600.0  # a question that runs longer is stopped (LONGQA_WARM_MAX_RUN_S)
SOCKET_NAME = "ask.sock"
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes on Linux
_HEADER = struct.Struct("!I")

# longqa's folders (one import package, tests/test_package.py): their files make the code stamp
SUBPACKAGES = ("analyzer", "contracts", "evals", "graph", "llm", "nodes", "prompts", "retrieval", "services")

# Variables a question reads only when it runs (the run settings' defaults, `Settings()`), so a
# server started under other values answers correctly: the worker takes the client's environment.
# Any other variable may be read once by a library at import or by a process-wide cache, so a server
# answers only clients whose other variables are its own (tests/test_warm.py checks the list).
RUNTIME_VARIABLES = frozenset(
    {
        "LONGQA_MODEL",
        "LONGQA_BASE_URL",
        "OPENAI_BASE_URL",
        "LONGQA_STRATEGY",
        "LONGQA_ANALYZER",
        "LONGQA_TIMEOUT_S",
        "LONGQA_DEADLINE_S",
        "LONGQA_CONTEXT_WINDOW",
        "LONGQA_QUESTION_BUDGET",
        "LONGQA_HOME",
        "LONGQA_WARM",
        "LONGQA_WARM_IDLE_S",
        "LONGQA_WARM_MAX_RUN_S",
    }
)
# a shell's and a terminal's own variables, which change between commands and no library reads
VOLATILE_VARIABLES = frozenset(
    {"_", "PWD", "OLDPWD", "SHLVL", "COLUMNS", "LINES", "PS1", "PS2", "PROMPT_COMMAND", "PYTEST_CURRENT_TEST"}
)
VOLATILE_PREFIXES = ("TERM", "COLORTERM", "SSH_", "TMUX", "WINDOWID", "DISPLAY", "STY", "HIST")


class WarmError(Exception):
    """The warm server cannot be used for this question (the message says why)."""


def warm_dir(home: Path) -> Path:
    """The folder of the home's warm server: its socket, lock and log (mode 0700)."""
    return Path(os.path.abspath(home)) / "warm"


def socket_path(home: Path) -> Path:
    """The warm server's socket under `home`."""
    return warm_dir(home) / SOCKET_NAME


def private_dir(path: Path) -> Path:
    """Make `path` (and its parents) a folder only this user can enter, or say why it is not one:
    owned by someone else, or not a folder."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise WarmError(f"{path} is not a folder")
    if st.st_uid != os.getuid():
        raise WarmError(f"{path} belongs to another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def check_socket_path(path: Path) -> None:
    """A socket path the kernel can bind (AF_UNIX paths are short)."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise WarmError(f"the socket path is too long for a Unix socket ({len(os.fsencode(path))} bytes): {path}")


def peer_uid(conn: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket (SO_PEERCRED: the kernel's word)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def peer_allowed(uid: int, own_uid: int | None = None) -> bool:
    """Only this user's own processes may ask (root included only when the server is root's)."""
    return uid == (os.getuid() if own_uid is None else own_uid)


def send_message(conn: socket.socket, message: Mapping[str, Any], fds: list[int] | None = None) -> None:
    """One framed JSON message; `fds` ride along with it (SCM_RIGHTS)."""
    body = json.dumps(message).encode("utf-8")
    data = _HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(conn, [data], fds)
        data = data[sent:]
    if data:
        conn.sendall(data)


def receive_message(conn: socket.socket, limit: int, fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One framed JSON message of at most `limit` bytes (and up to `fds` descriptors passed with it).
    EOFError when the peer closed before a whole message; WarmError when it is too large or not a
    JSON object. The socket's timeout bounds each read."""
    received: list[int] = []
    header = b""
    while len(header) < _HEADER.size:
        if fds and not received:
            chunk, got, _flags, _addr = socket.recv_fds(conn, _HEADER.size - len(header), fds)
            received += got
        else:
            chunk = conn.recv(_HEADER.size - len(header))
        if not chunk:
            _close_all(received)
            raise EOFError("the connection closed")
        header += chunk
    (size,) = _HEADER.unpack(header)
    if size > limit:
        _close_all(received)
        raise WarmError(f"message too large ({size:,} bytes; the limit is {limit:,})")
    body = bytearray()
    while len(body) < size:
        chunk = conn.recv(min(65536, size - len(body)))
        if not chunk:
            _close_all(received)
            raise EOFError("the connection closed mid-message")
        body += chunk
    try:
        message = json.loads(body)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        _close_all(received)
        raise WarmError("the message is not a JSON object")
    return message, received


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def stamp(environ: Mapping[str, str] = os.environ) -> str:
    """Which code and environment a process answers with: this interpreter, the size and time of
    every Python file of longqa's folders, the modification times of the folders it imports packages from
    (an install or upgrade changes them), and the environment but for the run-time and volatile
    variables. A server answers only a client whose stamp is its own."""
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{sys.version}\0{os.getuid()}\0".encode())
    for folder in _code_folders():
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(f for f in files if f.endswith(".py")):  # code: not what runs write (evals/runs)
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    for entry in sys.path[1:]:  # [0] is the script's folder or the working folder: not an install
        try:
            digest.update(f"{entry}\0{os.stat(entry or '.').st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
        except OSError:
            continue
    digest.update(json.dumps(fixed_environment(environ), sort_keys=True).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


def fixed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a server must share with its clients (all but the run-time and volatile ones)."""
    return {
        k: v
        for k, v in environ.items()
        if k not in RUNTIME_VARIABLES and k not in VOLATILE_VARIABLES and not k.startswith(VOLATILE_PREFIXES)
    }


def _code_folders() -> list[str]:
    import longqa

    folders = list(longqa.__path__)
    for name in SUBPACKAGES:
        spec = importlib.util.find_spec(f"longqa.{name}")
        if spec is not None and spec.submodule_search_locations:
            folders += [f for f in spec.submodule_search_locations if f not in folders]
    return folders


def unlink_if_ours(path: str, inode: int) -> None:
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
