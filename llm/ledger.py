"""What the question budget reads without counting anything: the fixed input tokens of each call's
prompt (`Overheads`, filled in by `longqa.llm.budget.overheads`) and the usage ledger's totals
(`spent`, `calibration`). Pure and light: `longqa.contracts` imports it without the tokenizer, the
model client or the index (tests/test_package.py checks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel


class Overheads(BaseModel):
    """Input tokens of each call's prompt besides its evidence: instructions, question, history."""

    analyze: int
    split: int
    filter: int  # the joint CoT + filter call, or LongRAG's CoT call
    judge: int  # one per-chunk filter call, besides its passage and the CoT
    extract: int
    reason: int  # one step-wise hop, besides its chunks and the notes so far
    generate: int
    long_context: int
    per_passage: int  # the label and source line around each passage shown


def spent(usage: Sequence[dict[str, Any]] | None) -> int:
    """Input tokens the ledger's attempts cost, failed ones and retries included."""
    return sum(int(r.get("input_tokens") or 0) for r in usage or ())


def calibration(usage: Sequence[dict[str, Any]] | None) -> float:
    """How many tokens the model's server counts per token we count (at least 1): the largest ratio
    its replies reported so far, so the next prompt is cut by the model's count, not ours."""
    ratios = [
        r["input_tokens"] / r["counted_tokens"]
        for r in usage or ()
        if not r.get("estimated") and r.get("counted_tokens")
    ]
    return max([1.0, *ratios])
