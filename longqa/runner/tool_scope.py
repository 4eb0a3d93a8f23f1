"""What `longqa_tool`'s model may ask it to read (longqa/runner/agent_tool.py): the files and folders
its builder allowed, checked on resolved paths (`..` and symbolic links followed first), and at most
`max_files` files per call, counted by a walk that stops when the call's deadline passes. A refusal
is a `ScopeRefused` whose message the model reads; nothing outside the allowed paths is read or walked."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from longqa.retrieval.read.loaders import printable_name

SHOWN_CHARS = 200  # a path the model wrote is echoed at most this long


class ScopeRefused(ValueError):
    """A path the model named may not be read by this tool (or cannot be); the message says why."""


class WalkStopped(Exception):
    """The call's deadline passed while its folders were being counted."""


def shown(path: str) -> str:
    """A path the model wrote, as a message quotes it: printable, on one line, cut short."""
    text = printable_name(path)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def resolved(path: str, documents_root: Path | None) -> Path:
    """`path` as the graph would read it (relative: under the documents root when one is set, else the
    working folder), with `~`, `..` and every symbolic link resolved; `ScopeRefused` when it cannot be."""
    if not path.strip():
        raise ScopeRefused("an empty path")
    if "\x00" in path:
        raise ScopeRefused(f"{shown(path)}: not a path (it holds a NUL character)")
    try:
        p = Path(path).expanduser()
        if documents_root is not None and not p.is_absolute():
            p = Path(documents_root).expanduser() / p
        return p.resolve()
    except RuntimeError:  # pathlib: "Symlink loop from ..."
        raise ScopeRefused(f"{shown(path)}: cannot be resolved (symlink loop)") from None
    except (OSError, ValueError) as e:
        raise ScopeRefused(f"{shown(path)}: cannot be resolved ({getattr(e, 'strerror', None) or e})") from None


@dataclass(frozen=True)
class ToolScope:
    """The builder's choice: `defaults` are read when a call names no documents (as given, trusted);
    the model may name only paths inside `roots` (files or folders); `max_files` (None: no limit)
    bounds the files the paths a call names may hold, the defaults themselves excepted."""

    defaults: tuple[str, ...]
    roots: tuple[str, ...]
    documents_root: Path | None = None
    max_files: int | None = 1000

    def paths_for(self, documents: Sequence[str] | None, stop: threading.Event | None = None) -> list[str]:
        """The paths a call reads: the defaults when it names none, else the resolved paths it names, each
        checked to lie inside the roots and counted. `ScopeRefused` names the first path refused;
        `WalkStopped` when `stop` is set during the count."""
        if not documents:
            return list(self.defaults)
        roots = self._resolved_roots()
        defaults = {r for r in map(self._try_resolve, self.defaults) if r is not None}
        paths: list[Path] = []
        for path in documents:
            real = resolved(path, self.documents_root)
            if not any(real.is_relative_to(root) for root in roots):
                raise ScopeRefused(f"{shown(path)}: {self._outside()}")
            paths.append(real)
        if self.max_files is not None:
            counted = [p for p in paths if p not in defaults]  # the builder's own paths are read as given
            if count_files(counted, self.max_files, stop) > self.max_files:
                raise ScopeRefused(
                    f"the documents named hold more than {self.max_files} files (this tool reads at most "
                    f"{self.max_files} in one call); name a smaller folder or the files themselves"
                )
        return [str(p) for p in paths]

    def _try_resolve(self, path: str) -> Path | None:
        try:
            return resolved(path, self.documents_root)
        except ScopeRefused:
            return None

    def _resolved_roots(self) -> list[Path]:
        return [r for r in map(self._try_resolve, self.roots) if r is not None]

    def _outside(self) -> str:
        if not self.roots:
            return "this tool reads only its default documents, and it has none; it cannot read other paths"
        return "outside the documents this tool may read; omit 'documents' to read its default documents"


def count_files(paths: Sequence[Path], limit: int, stop: threading.Event | None = None) -> int:
    """The files `paths` hold as the graph's folder walk finds them (a file: 1; a folder: its files, hidden
    entries and links to folders left out), counted up to `limit` + 1 and no further. `WalkStopped`
    when `stop` is set (checked at each folder)."""
    total = 0
    for path in paths:
        if not path.is_dir():
            total += 1
            if total > limit:
                return total
            continue
        for _folder, dirs, files in os.walk(path, followlinks=False):
            if stop is not None and stop.is_set():
                raise WalkStopped()
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            total += sum(1 for f in files if not f.startswith("."))
            if total > limit:
                return total
    return total
