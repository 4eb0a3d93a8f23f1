"""Judgements several nodes (and the routers) share, so each is made in one place."""

from __future__ import annotations

import re

from .state import Evidence, State, Verdict


def is_unanswerable(answer: str | None) -> bool:
    """Self-Route's decline: the answer starts with "unanswerable" (any case or punctuation)."""
    return bool(answer) and re.sub(r"[^a-z]", "", answer.lower()).startswith("unanswerable")


def kept_evidence(evidence: list[Evidence], verdicts: list[Verdict]) -> tuple[list[Evidence], str | None]:
    """LongRAG's I_d: the chunks the CoT-guided filter judged relevant; all of them (with a note)
    when none is, since an empty context can only produce a worse answer."""
    if not verdicts:
        return evidence, None
    keep = {v["evidence_id"] for v in verdicts if v["keep"]}
    kept = [e for e in evidence if e["id"] in keep]
    if not kept:
        return evidence, f"filter: no chunk passed; keeping all {len(evidence)}"
    return kept, f"filter: kept {len(kept)} of {len(evidence)} chunk(s)"


def needs_long_context(state: State, fallback_allowed: bool) -> bool:
    """Self-Route: a RAG answer of "unanswerable" goes to the long context once, if the plan allows."""
    return (
        fallback_allowed
        and not state.get("error")
        and is_unanswerable(state.get("answer"))
        and "long_context" not in (state.get("route") or [])
    )
