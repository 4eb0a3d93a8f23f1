"""Which skipped files the command line has already told this index home about, so `longqa ask`
lists only new ones instead of the same "Skipped 12 file(s)" on every question. A skip is the line
"file: reason": a file skipped again for another reason (it changed) is new again."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

RECORD = "shown-skips.json"
MAX_REMEMBERED = 10_000  # skip lines kept (the newest); an older one is shown again once


def not_shown_before(home: Path, skipped: Sequence[str]) -> list[str]:
    """The lines of `skipped` not shown by an earlier `index` or `ask` with this home; all of them
    are recorded as shown from now on."""
    remembered = _read(home / RECORD)
    keys = [_key(line) for line in skipped]
    new = [line for line, key in zip(skipped, keys, strict=True) if key not in remembered]
    if new:
        record(home, skipped, remembered)
    return new


def record(home: Path, skipped: Sequence[str], remembered: list[str] | None = None) -> None:
    """Remember `skipped` as shown (best effort: a home that cannot be written shows them again)."""
    remembered = _read(home / RECORD) if remembered is None else remembered
    keys = [_key(line) for line in skipped]
    kept = [k for k in remembered if k not in set(keys)] + keys
    with contextlib.suppress(OSError):
        home.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=home, prefix=".shown-skips-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(kept[-MAX_REMEMBERED:], f)
        os.replace(tmp, home / RECORD)


def _read(path: Path) -> list[str]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: everything is new
        return []
    return [k for k in value if isinstance(k, str)] if isinstance(value, list) else []


def _key(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8", "surrogateescape")).hexdigest()[:32]
