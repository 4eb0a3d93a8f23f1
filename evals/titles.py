"""The honesty labels of a report: what kind of run it was (scripted model, retrieval-only, oracle
or a real model), in its title, its plot and the CLI's messages."""

from __future__ import annotations

from longqa.contracts.settings import Settings

from .oracle import ORACLE_TITLE

SCRIPTED_TITLE = "scripted model — not a quality measurement"
RETRIEVAL_TITLE = "retrieval-only (no LLM) — evidence coverage, not answer quality"


def mode_title(settings: Settings, oracle: bool = False) -> str:
    """The report's title: which kind of run it was (oracle, scripted model, retrieval-only, or the model's name)."""
    if oracle:
        return f"longqa evaluation — {ORACLE_TITLE}"
    if settings.is_scripted:
        return f"longqa evaluation — {SCRIPTED_TITLE}"
    if not settings.has_llm:
        return f"longqa evaluation — {RETRIEVAL_TITLE}"
    return f"longqa evaluation — model {settings.model}"
