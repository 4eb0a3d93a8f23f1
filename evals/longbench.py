"""LongBench jsonl: the one input format of `longqa eval` (converters write it, the runner reads it).

One JSON object a line:

    {"_id": "...", "input": "<question>", "context": "<long text>", "answers": ["...", ...],
     "length": <words>, "dataset": "hotpotqa", ...extra fields...}

`_id`, `input`, `context` (non-empty) and `answers` (a non-empty list of strings) are required;
`length` and `dataset` are optional (`dataset` defaults to the file's stem). Any other field is kept
in `EvalItem.extra`; `supporting` (a list of strings: the gold supporting sentences or paragraphs)
is what the retrieval-only scores check for. A line that is not valid JSON, lacks a required field,
has a field of the wrong type, has an empty context or repeats an `_id` is reported with its line
number and skipped — never silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUIRED = ("_id", "input", "context", "answers")
KNOWN = (*REQUIRED, "length", "dataset")


@dataclass(frozen=True)
class EvalItem:
    """One question of a LongBench jsonl file: id, question, context, gold answers, dataset, length, and its other
    fields in `extra`."""

    id: str
    question: str
    context: str
    answers: list[str]
    dataset: str
    length: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def supporting(self) -> list[str]:
        """The item's supporting texts that are non-blank strings (none when the file gives none)."""
        return [s for s in self.extra.get("supporting") or [] if isinstance(s, str) and s.strip()]

    @property
    def context_hash(self) -> str:
        """The SHA-256 of the context (part of the cache key)."""
        return hashlib.sha256(self.context.encode("utf-8")).hexdigest()

    def to_record(self) -> dict[str, Any]:
        """The item as a LongBench record again (`_id`, `input`, ... and its extra fields)."""
        return {
            "_id": self.id,
            "input": self.question,
            "context": self.context,
            "answers": self.answers,
            "length": self.length,
            "dataset": self.dataset,
            **self.extra,
        }


@dataclass(frozen=True)
class BadLine:
    """A dataset line skipped because it is not a usable LongBench record, and why."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason} — skipped"


def record(id: str, question: str, context: str, answers: Iterable[str], dataset: str, **extra: Any) -> dict[str, Any]:
    """A LongBench record (`length` = words of the context)."""
    return {
        "_id": id,
        "input": question,
        "context": context,
        "answers": list(answers),
        "length": len(context.split()),
        "dataset": dataset,
        **extra,
    }


def write_jsonl(records: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write records as JSON lines through a temporary file replaced in one step; returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(path)
    return n


def _problem(obj: Any) -> str | None:
    if not isinstance(obj, dict):
        return f"not a JSON object ({type(obj).__name__})"
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    if not isinstance(obj["_id"], str | int) or isinstance(obj["_id"], bool) or not str(obj["_id"]).strip():
        return "'_id' must be a non-empty string"
    if not isinstance(obj["input"], str) or not obj["input"].strip():
        return "empty question ('input')"
    if not isinstance(obj["context"], str):
        return f"'context' must be a string (got {type(obj['context']).__name__})"
    if not obj["context"].strip():
        return "empty context"
    answers = obj["answers"]
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        return "'answers' must be a non-empty list of strings"
    if not any(a.strip() for a in answers):
        return "'answers' holds only empty strings"
    if "length" in obj and (not isinstance(obj["length"], int) or isinstance(obj["length"], bool)):
        return "'length' must be an integer"
    if "dataset" in obj and not isinstance(obj["dataset"], str):
        return "'dataset' must be a string"
    if "supporting" in obj and (
        not isinstance(obj["supporting"], list) or not all(isinstance(s, str) for s in obj["supporting"])
    ):
        return "'supporting' must be a list of strings"
    return None


def _repeated(obj: dict[str, Any], number: int, asked: dict[tuple[str, str], int]) -> str | None:
    """Why a record that asks an earlier line's question over the same context is skipped (None when it does not,
    and it is remembered): one item counted twice narrows every interval of a comparison without adding evidence."""
    key = (" ".join(obj["input"].split()).casefold(), hashlib.sha256(obj["context"].encode("utf-8")).hexdigest())
    if key in asked:
        return f"the same question over the same context as line {asked[key]} (an item counted twice)"
    asked[key] = number
    return None


def read_jsonl(path: str | Path, limit: int | None = None) -> tuple[list[EvalItem], list[BadLine]]:
    """The valid items of a LongBench jsonl file (the first `limit` of them) and its bad lines."""
    path = Path(path)
    items: list[EvalItem] = []
    bad: list[BadLine] = []
    seen: set[str] = set()
    asked: dict[tuple[str, str], int] = {}  # (question, context hash) -> the line that asked it first
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if limit is not None and len(items) >= limit:
                break
            if not line.strip():
                bad.append(BadLine(str(path), number, "empty line"))
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                bad.append(BadLine(str(path), number, f"invalid JSON ({e.msg} at column {e.colno})"))
                continue
            problem = _problem(obj)
            if problem is None and str(obj["_id"]) in seen:
                problem = f"duplicate _id {obj['_id']!r}"
            if problem is None:
                problem = _repeated(obj, number, asked)
            if problem:
                bad.append(BadLine(str(path), number, problem))
                continue
            seen.add(str(obj["_id"]))
            items.append(
                EvalItem(
                    id=str(obj["_id"]),
                    question=obj["input"].strip(),
                    context=obj["context"],
                    answers=[a for a in obj["answers"] if a.strip()],
                    dataset=obj.get("dataset") or path.stem,
                    length=obj.get("length") or len(obj["context"].split()),
                    extra={k: v for k, v in obj.items() if k not in KNOWN},
                )
            )
    return items, bad
