"""Read each file under a time and memory ceiling, so one hostile file (a decompression bomb, a
quadratic parse, a reader that hangs) is skipped with its reason and never stops or starves a run.

Files are read in worker processes: each limits its own address space (`RLIMIT_AS`) to what it
had when it started plus `memory_mb`, and a read that takes longer than `timeout_s` has its worker
killed and replaced. A worker leads a process group (a session) of its own, so what it starts (the
Tesseract of an OCR read) is killed with it, and its temporary files go to a folder of its own (its
`tempfile.tempdir`, where pytesseract writes), which the parent removes once the worker has ended,
however it ended; a worker whose parent is gone kills its group itself. Workers are kept between
files, so the common case pays one round trip on a socket per file. Hand-written:
`concurrent.futures.ProcessPoolExecutor` cannot kill one stuck task without breaking the whole pool,
and `multiprocessing` re-imports the parent's `__main__` (a server, a script on stdin) in each
worker; a worker here is `python -m longqa.retrieval.read.bounded`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from ..documents import Document, Paragraph
from .folders import DEFAULT_MAX_FILE_BYTES, too_large
from .limits import DEFAULT_MAX_TEXT_CHARS, DocumentError, printable_name
from .loaders import load_document
from .ocr import OcrLimits, show_page
from .ocr import configure as configure_ocr

DEFAULT_READ_TIMEOUT_S = 60.0
DEFAULT_READ_MEMORY_MB = 2048
PAGE_SLACK_S = 10.0  # past a page's own OCR limit: rendering it, and the worker's answer
WORKER_START_TIMEOUT_S = 60.0  # a worker's imports, before its first read
PARENT_CHECK_S = 1.0  # how often a worker looks whether the process that started it is still there
# imported before a worker says it is ready (python-pptx and calamine by the first such file: most folders hold neither)
_PRELOAD = (
    "longqa.retrieval.read.formats",
    "longqa.retrieval.read.office.word",
    "longqa.retrieval.read.office.office",
    "longqa.retrieval.read.office.sheets",
    "bs4",
    "docx",
    "pypdf",
    "charset_normalizer",
)
MAX_NOTES = 5  # kinds of library warning passed on for a file, then a count of the rest
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadLimits:
    """The ceiling on reading one file. `isolated=False` reads in this process, with no ceiling
    (for measuring what the isolation costs)."""

    timeout_s: float = DEFAULT_READ_TIMEOUT_S
    memory_mb: int = DEFAULT_READ_MEMORY_MB
    max_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_chars: int = DEFAULT_MAX_TEXT_CHARS  # of the text read: a larger one is refused in the worker
    isolated: bool = True
    ocr: OcrLimits = OcrLimits()  # scans: on or off, each page's time, the pages a document may have read


class _Worker:
    """One reader process, the leader of its own process group, the parent's end of its socket, and
    its temporary folder."""

    def __init__(self, memory_mb: int, ocr: OcrLimits | None = None):
        self.tmp = _worker_tmp()
        parent, child = socket.socketpair()
        try:
            with child:
                ocr_limits = json.dumps(asdict(ocr or OcrLimits()))
                command = [sys.executable, "-m", __name__, str(child.fileno()), str(memory_mb), ocr_limits, self.tmp]
                self.process = subprocess.Popen(
                    command,
                    pass_fds=[child.fileno()],
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its group: killed whole, Tesseract with it
                )
        except BaseException:
            parent.close()
            _remove(self.tmp)
            raise
        self.conn = Connection(parent.detach())
        self.healthy = True  # False from a request sent until its answer is read: else it is stopped
        self.ready = False  # its imports done: a read's time limit starts after them

    def wait_ready(self) -> bool:
        """Wait for the worker's imports (bounded): they are not the file's to pay for."""
        if not self.ready and self.conn.poll(WORKER_START_TIMEOUT_S):
            self.ready = self.conn.recv() == ("ready", None)
        return self.ready

    def alive(self) -> bool:
        return self.ended() is None

    def ended(self, wait_s: float = 0.0) -> int | None:
        """The worker's exit status once it has ended (negative: the signal that ended it), else None,
        waiting up to `wait_s` for it. It is not reaped here: until `stop` reaps it, its PID (its
        group's) names no other process, so `stop` killing that group reaches only what it started."""
        deadline = time.monotonic() + wait_s
        while self.process.returncode is None:
            if not hasattr(os, "waitid"):  # not Linux: reaped, as Popen does
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(wait_s)
                return self.process.returncode
            try:
                info = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped already
                return self.process.poll()
            if info is not None:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)
        return self.process.returncode

    def stop(self) -> None:
        """Kill the worker and every process of its group (a Tesseract it started), reap it, and
        remove its temporary folder (what an OCR read killed mid-page left there)."""
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.process.returncode is None:  # not reaped: its PID still names its group
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (OSError, AttributeError):  # the group is gone; not POSIX
                with contextlib.suppress(OSError):
                    self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        _remove(self.tmp)


class BoundedReader:
    """Loads documents in a small pool of worker processes, each read held to `limits`. Safe to
    share between threads: each read takes a worker of its own."""

    def __init__(self, limits: ReadLimits = ReadLimits(), workers: int = 2):
        self.limits = limits
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(max(1, workers))

    def load(self, path: str | Path, max_words: int) -> Document:
        """The document, or `DocumentError` with the loader's reason, or that the read ran past
        the time or memory ceiling, or that it is larger than `limits.max_bytes`."""
        document = self._load(path, max_words)
        for warning in document.warnings:  # said here, in the caller's process, so its logging shows it
            log.warning("%s: not fully read: %s", document.source, warning)
        return document

    def _load(self, path: str | Path, max_words: int) -> Document:
        if reason := too_large(Path(path), self.limits.max_bytes):
            raise DocumentError(path, reason)
        if not self.limits.isolated:  # every reader, plain text and Markdown too, runs in a worker
            configure_ocr(self.limits.ocr, lambda done, total: show_page(printable_name(path), done, total))
            return load_document(path, max_words, self.limits.max_chars)
        with self._slots:
            worker = self._take()
            try:
                return self._ask(worker, Path(path), max_words)
            finally:
                # a worker killed, out of memory or interrupted mid-read (its late answer would be
                # taken for the next file's) is stopped; the next read starts a fresh one
                if worker.healthy:
                    self._idle.put(worker)
                else:
                    worker.stop()

    def start(self) -> BoundedReader:
        """Start a worker now: it imports the readers while the caller walks folders and opens
        the library, so the first file does not wait for it."""
        if self.limits.isolated and self._idle.empty():
            self._idle.put(_Worker(self.limits.memory_mb, self.limits.ocr))
        return self

    def close(self) -> None:
        """Stop the idle workers (a busy one stops when its read returns)."""
        while True:
            try:
                self._idle.get_nowait().stop()
            except queue.Empty:
                return

    def _take(self) -> _Worker:
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return _Worker(self.limits.memory_mb, self.limits.ocr)
            if worker.alive():
                return worker
            worker.stop()

    def _answer(self, worker: _Worker, shown: str) -> tuple[str, object]:
        """The worker's answer within the time limit; each page it reads by OCR is shown and gives
        it one more page's time (a long scan reads for as long as its pages need, each held to its
        own), the whole read at most `ocr.file_timeout_s` (all of a file's OCR, which the worker
        holds it to) longer than `timeout_s`."""
        limits = self.limits
        wait, end, ocr = limits.timeout_s, time.monotonic() + limits.timeout_s, False
        while True:
            left = end - time.monotonic()
            if not worker.conn.poll(max(0.0, min(wait, left))):
                raise DocumentError(shown, _timed_out(limits, ocr, whole=left <= wait))
            kind, value = worker.conn.recv()
            if kind != "page":
                return kind, value
            show_page(shown, *value)
            if not ocr:  # its first page read by OCR: the file's OCR time is added to the read's, once
                ocr, end = True, end + limits.ocr.file_timeout_s + PAGE_SLACK_S
            wait = max(limits.timeout_s, limits.ocr.page_timeout_s + PAGE_SLACK_S)

    def _ask(self, worker: _Worker, path: Path, max_words: int) -> Document:
        shown = printable_name(path)
        worker.healthy = False
        try:
            if not worker.wait_ready():
                raise DocumentError(shown, f"the reader process did not start within {WORKER_START_TIMEOUT_S:g} s")
            worker.conn.send((path, max_words, self.limits.max_chars))
            kind, value = self._answer(worker, shown)
        except (EOFError, OSError):  # the worker died: killed by the kernel, a crash in a C library
            code = worker.ended(5)  # not reaped: `stop` then kills its group (a Tesseract it left running)
            died = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
            raise DocumentError(shown, f"the reader crashed ({died}); the file may be malformed") from None
        if kind == "memory":  # after a MemoryError its heap may be in any state: it is not kept
            raise DocumentError(
                shown,
                f"reading ran out of memory (needs more than {self.limits.memory_mb:,} MB: the read_memory_mb limit)",
            )
        worker.healthy = True
        value, notes = value
        for note in notes:  # a library's warnings while reading this file, named by the file
            log.warning("%s: %s", shown, note)
        if kind == "ok":
            return _document(value)
        raise DocumentError(value[0], value[1])


def _timed_out(limits: ReadLimits, ocr: bool, whole: bool) -> str:
    """Why a read was stopped for its time: before any page read by OCR, after one, or all of it."""
    if not ocr:
        return f"reading timed out (took longer than {limits.timeout_s:g} s: the read_timeout_s limit)"
    if whole:
        total = limits.timeout_s + limits.ocr.file_timeout_s + PAGE_SLACK_S
        return (
            f"reading timed out (took longer than {total:g} s: the read_timeout_s limit, plus ocr_file_timeout_s "
            f"for its OCR and {PAGE_SLACK_S:g} s)"
        )
    step = max(limits.timeout_s, limits.ocr.page_timeout_s + PAGE_SLACK_S)
    return f"reading timed out (nothing for {step:g} s after a page read by OCR: the ocr_page_timeout_s limit)"


def _worker_tmp() -> str:
    """A new temporary folder for a worker (its `tempfile.tempdir`: pytesseract's images and outputs),
    or "" where none can be made (the worker then uses the usual one)."""
    try:
        return tempfile.mkdtemp(prefix="longqa-reader-")
    except OSError as e:
        log.debug("no temporary folder for a reader worker: %s", e)
        return ""


def _remove(tmp: str) -> None:
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


_readers: dict[ReadLimits, BoundedReader] = {}
_readers_lock = threading.Lock()


def reader_for(limits: ReadLimits) -> BoundedReader:
    """The process-wide reader for these limits (its workers are kept between runs)."""
    with _readers_lock:
        if limits not in _readers:
            _readers[limits] = BoundedReader(limits).start()
        return _readers[limits]


def _serve(conn: Connection, memory_mb: int, ocr: OcrLimits | None = None, tmp: str = "") -> None:
    """A worker: read the files it is sent, one at a time, under its address-space limit, its
    temporary files in `tmp` (its own folder, which the parent removes)."""
    import importlib

    if tmp:
        tempfile.tempdir = tmp  # pytesseract's NamedTemporaryFile, and any reader's
    _watch_parent(tmp)
    configure_ocr(ocr or OcrLimits(), lambda done, total: conn.send(("page", (done, total))))
    for module in _PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    _limit_memory(memory_mb)
    logging.getLogger().addHandler(logging.NullHandler())  # nothing printed bare: notes go to the parent
    conn.send(("ready", None))
    while True:
        try:
            path, max_words, max_chars = conn.recv()
        except (EOFError, OSError):
            return
        notes: list[str] = []
        try:
            with _notes(notes):
                document = load_document(path, max_words, max_chars)
            result: tuple = ("ok", _wire(document))
        except DocumentError as e:
            result = ("error", (e.source, e.reason))
        except MemoryError:
            result = ("memory", None)
        except RecursionError:
            result = ("error", (printable_name(path), "nested too deeply to read"))
        except Exception as e:  # a reader's bug must cost one file, never the worker's next files
            result = ("error", (printable_name(path), f"cannot be read ({type(e).__name__})"))
        if result[0] != "memory":
            result = (result[0], (result[1], _summarised(notes)))
        try:
            conn.send(result)
        except MemoryError:
            conn.send(("memory", None))


def _watch_parent(tmp: str) -> None:
    """End this worker's whole group (a Tesseract under way too) and remove its folder when the
    process that started it is gone (killed, so it could not stop it): in a session of its own, a
    signal to the parent's group (Ctrl-C, a supervisor's stop) does not reach it."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        _remove(tmp)
        if os.getpgrp() == os.getpid():  # it leads its group (never the parent's): all of it
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class _NoteHandler(logging.Handler):
    def __init__(self, notes: list[str]):
        super().__init__(logging.WARNING)
        self.notes = notes

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.append(f"{record.getMessage()[:300]} ({record.name.split('.')[0]})")


@contextlib.contextmanager
def _notes(notes: list[str]) -> Iterator[None]:
    """Collect the warnings libraries log or warn while one file is read (pypdf's "Ignoring wrong
    pointing object", a parser's complaints) into `notes`, for the parent to name with the file."""
    handler = _NoteHandler(notes)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        notes += [f"{str(w.message)[:300]} ({w.category.__name__})" for w in caught]
    finally:
        root.removeHandler(handler)


def _summarised(notes: list[str]) -> list[str]:
    """One line per kind of warning (numbers aside), with how many of that kind, at most MAX_NOTES."""
    kinds: dict[str, list[str]] = {}
    for note in notes:
        kinds.setdefault(re.sub(r"\d+", "#", note), []).append(note)
    lines = [same[0] + (f" (and {len(same) - 1} like it)" if len(same) > 1 else "") for same in kinds.values()]
    return lines[:MAX_NOTES] + (
        [f"and {len(lines) - MAX_NOTES} other kinds of warning"] if len(lines) > MAX_NOTES else []
    )


def _limit_memory(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the time limit still holds
        return
    try:  # what the worker holds already (the interpreter, the readers imported) is not the file's
        with open("/proc/self/statm") as f:
            base = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        base = 0
    limit = base + (memory_mb << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _wire(document: Document) -> tuple:
    """A Document as plain values: pickled faster than the pydantic models."""
    paragraphs = [(p.start, p.end, p.is_table) for p in document.paragraphs]
    return (
        document.doc_id,
        document.source,
        document.text,
        paragraphs,
        document.encoding,
        document.warnings,
        document.ocr_pages,
    )


def _document(wire: tuple) -> Document:
    doc_id, source, text, paragraphs, encoding, warnings, ocr_pages = wire
    return Document.model_construct(
        doc_id=doc_id,
        source=source,
        text=text,
        paragraphs=[
            Paragraph.model_construct(id=i, start=s, end=e, is_table=t) for i, (s, e, t) in enumerate(paragraphs)
        ],
        encoding=encoding,
        warnings=warnings,
        ocr_pages=ocr_pages,
    )


if __name__ == "__main__":  # a worker: python -m longqa.retrieval.read.bounded FD MEMORY_MB OCR_LIMITS TMPDIR
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        _serve(Connection(int(sys.argv[1])), int(sys.argv[2]), OcrLimits(**json.loads(sys.argv[3])), sys.argv[4])
    finally:  # its parent gone or done with it (EOF): its folder is removed here too
        _remove(sys.argv[4])
