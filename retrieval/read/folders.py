"""Which files a set of paths names: files as given, folders walked recursively with include /
exclude patterns. What a folder holds that cannot be indexed is skipped with its reason, never
raised: one unreadable file must not stop a library of a thousand."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .limits import DocumentError, printable_name
from .loaders import SUPPORTED_SUFFIXES

DEFAULT_MAX_FILE_MB = 256  # a larger file is skipped before anything reads it
DEFAULT_MAX_FILE_BYTES = DEFAULT_MAX_FILE_MB << 20


@dataclass(frozen=True)
class Skipped:
    """A file left out of a library, and why (shown to the user, kept in the output)."""

    path: str
    reason: str


@dataclass
class FileSet:
    """The files to index, in a stable order, and what was left out."""

    files: list[Path] = field(default_factory=list)
    named: list[Path] = field(default_factory=list)  # the files given by name (not found in a folder)
    skipped: list[Skipped] = field(default_factory=list)
    folders: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # by rule, not by fault: "hidden" -> how many

    def summary(self) -> str:
        """One line: how many files, the skipped ones counted by reason, and those left out by rule."""
        line = f"{len(self.files)} file(s)"
        if self.folders:
            line += f" in {self.folders} folder(s)"
        if self.skipped:
            line += "; " + skip_summary(self.skipped)
        if self.left_out:
            line += "; " + left_out_summary(self.left_out)
        return line


def skip_summary(skipped: Sequence[Skipped]) -> str:
    """'3 skipped (2 unsupported type, 1 unreadable)': the reasons counted by kind."""
    reasons: dict[str, int] = {}
    for s in skipped:
        kind = s.reason.split(" (")[0].split(";")[0]
        reasons[kind] = reasons.get(kind, 0) + 1
    return f"{len(skipped)} skipped (" + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) + ")"


def left_out_summary(left_out: dict[str, int]) -> str:
    """'4 left out (1 excluded, 2 hidden, 1 hidden folder(s))': what a folder walk passed over by rule."""
    counts = ", ".join(f"{n} {why}" for why, n in sorted(left_out.items()))
    return f"{sum(left_out.values())} left out ({counts})"


def matches(relative: str, patterns: Sequence[str]) -> bool:
    """A glob pattern matches the path relative to its folder (`reports/*.pdf`, `**/draft*`) or
    the file name alone (`*.md`)."""
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(name, bare):
            return True
        if pattern.startswith("**/") and fnmatch.fnmatchcase(relative, bare):
            return True
        if pattern.endswith("/**") and (relative + "/").startswith(pattern[:-2]):
            return True
    return False


def collect_files(
    paths: Sequence[str | Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: Callable[[int], None] | None = None,
) -> FileSet:
    """Files named by `paths`. A file given by name is taken as it is (the loader says if it cannot
    be read); a folder is walked recursively, in name order, without following symbolic links to
    folders (no loops), skipping hidden entries and, with a reason, every file of a type we cannot
    read or larger than `max_file_bytes`. `include` (any must match) and `exclude` (none may match)
    apply to files found in folders. Hidden entries and files the patterns leave out are counted in
    `left_out` by kind (a hidden folder is not walked: it counts once). `progress(files_seen)` is
    called as the walk goes."""
    found = FileSet()
    seen: set[Path] = set()
    for given in paths:
        path = Path(given).expanduser()
        if not path.is_dir():
            if path not in seen:
                seen.add(path)
                found.files.append(path)
                found.named.append(path)
            continue
        found.folders += 1
        for file, reason in _walk(path, include, exclude, max_file_bytes, found.left_out):
            if reason:
                found.skipped.append(Skipped(printable_name(file), reason))
            elif file not in seen:
                seen.add(file)
                found.files.append(file)
                if progress and len(found.files) % 100 == 0:
                    progress(len(found.files))
    return found


def _walk(root: Path, include: Sequence[str], exclude: Sequence[str], max_file_bytes: int, left_out: dict[str, int]):
    """(file, reason to skip it or "") for every file under `root`; what is left out by rule is
    counted in `left_out`."""
    errors: list[OSError] = []

    def leave(why: str) -> None:
        left_out[why] = left_out.get(why, 0) + 1

    for folder, dirs, files in os.walk(root, onerror=errors.append, followlinks=False):
        for _ in (d for d in dirs if d.startswith(".")):
            leave("hidden folder(s)")
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(folder)
        for name in sorted(files):
            if name.startswith("."):
                leave("hidden")
                continue
            file = base / name
            relative = file.relative_to(root).as_posix()
            if include and not matches(relative, include):
                leave("not included")
                continue
            if exclude and matches(relative, exclude):
                leave("excluded")
                continue
            yield file, _link_out_of(file, root) or _reason_to_skip(file, max_file_bytes)
    for e in errors:  # a folder we may not list
        yield Path(e.filename or root), f"unreadable folder ({e.strerror or type(e).__name__})"


def _link_out_of(file: Path, root: Path) -> str:
    """Why a symbolic link in the walked folder is not followed: it leads out of the folder (seen: a link named
    notes.txt to a secret elsewhere was indexed and sent to the model); "" for any other file (a loop or a broken
    link: the checks after this say so). A file named directly is read wherever it leads."""
    if not file.is_symlink():
        return ""
    try:
        target, inside = file.resolve(strict=True), root.resolve(strict=True)
    except (OSError, RuntimeError):
        return ""
    return "" if target.is_relative_to(inside) else "a link leading out of the folder (not followed)"


def _reason_to_skip(file: Path, max_file_bytes: int) -> str:
    suffix = file.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        return f"unsupported type ({suffix or 'no extension'})"
    try:
        st = file.stat()
    except OSError as e:
        return f"unreadable ({e.strerror or type(e).__name__})"
    if not file.is_file():
        return "not a regular file"
    if st.st_size > max_file_bytes:
        return _too_large_reason(st.st_size, max_file_bytes)
    if not os.access(file, os.R_OK):
        return "unreadable (permission denied)"
    return ""


def too_large(file: Path, max_file_bytes: int) -> str:
    """Why a file is too large to read, or "" (also when it cannot be stat'ed: the loader says why)."""
    try:
        size = file.stat().st_size
    except (OSError, RuntimeError):
        return ""
    return _too_large_reason(size, max_file_bytes) if size > max_file_bytes and file.is_file() else ""


def _too_large_reason(size: int, max_file_bytes: int) -> str:
    return f"too large ({size:,} bytes > {max_file_bytes:,}; the max_file_mb limit)"


def skipped_from(error: DocumentError) -> Skipped:
    """A load failure of a file found in a folder, as a skip with its reason."""
    return Skipped(error.source, error.reason)
