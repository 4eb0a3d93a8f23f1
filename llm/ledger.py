"""What the question budget reads without counting anything: the fixed input tokens of each call's
prompt (`Overheads`, filled in by `longqa.llm.budget.overheads`) and the usage ledger's totals
(`spent`, `calibration`). Pure and light: `longqa.contracts` imports it without the tokenizer, the
model client or the index (tests/test_package.py checks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

SAFETY = 0.05  # of the budget kept back: the first call's prompt is sized by our count, not the model's
# what the plan expects a call's output to add to later prompts (a hop's notes, I_g); longer outputs
# are paid for by the later prompts, which are cut to what is left: the budget holds either way
NOTE_TOKENS = 64
GLOBAL_INFO_TOKENS = 128


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


def usable(question_budget: int, usage: Sequence[dict[str, Any]] | None) -> int:
    """Tokens the rest of the run may plan on: the budget less the safety share and what was spent."""
    return int(question_budget * (1 - SAFETY)) - spent(usage)
