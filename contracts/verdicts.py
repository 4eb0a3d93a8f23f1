"""Judgements several nodes (and the routers) share, so each is made in one place."""

from __future__ import annotations

import re

from .failure import ended
from .state import Evidence, State, Verdict

_SOURCE = r"(?:passages?|documents?|texts?|context|articles?|information|sources?|evidence|excerpts?|data)"
# how models decline besides Self-Route's word: "not mentioned in the passages", "the documents do not
# say", "cannot be determined", "no information", "I don't know", "unknown"
_DECLINES = re.compile(
    r"^\W*(?:unanswerable|unknown|none|n/?a|not (?:available|given|mentioned|specified|stated|provided))\W*$"
    r"|\b(?:is|are|was|were)?\s*not (?:explicitly )?(?:mentioned|stated|specified|provided|given|found|"
    rf"included|available|discussed|addressed|indicated|described) (?:in|by|within|from) (?:the |any |these |this )?"
    rf"(?:given |provided |retrieved |above )?{_SOURCE}"
    rf"|\b(?:the |these |this )?(?:given |provided |retrieved |above )?{_SOURCE} (?:do|does|did) not "
    r"(?:say|mention|state|contain|provide|specify|include|give|indicate|tell|answer|have)"
    r"|\b(?:cannot|can ?not|can't|could not|couldn't|unable to) (?:be )?(?:determine|determined|answer|answered|"
    r"find|found|tell|say|infer|inferred|know|known|identify|identified)"
    rf"|\bno (?:relevant |specific |such |explicit )?(?:information|mention|data|details?|indication)"
    r"|\b(?:not enough|insufficient) (?:information|context|evidence|data)"
    r"|\bi (?:do not|don't) know\b|\bthere is no (?:way|record)",
    re.IGNORECASE,
)
_FIRST_CLAUSE = re.compile(r"^[^.;!?\n]*")


def is_unanswerable(answer: str | None) -> bool:
    """A decline: Self-Route's "unanswerable" at the start (any case or punctuation), or an answer
    whose first clause says the documents do not hold it ("not mentioned in the passages", "cannot be
    determined from the text", "no information", "I don't know"). An answer that gives something
    first and names a missing detail after it ("Amelie Kortsen; her age is not mentioned") is kept."""
    if not answer:
        return False
    if re.sub(r"[^a-z]", "", answer.lower()).startswith("unanswerable"):
        return True
    first = _FIRST_CLAUSE.match(answer.strip())
    return bool(first and _DECLINES.search(first.group(0) or answer.strip()))


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


def is_unsupported(state: State) -> bool:
    """The grounding check found the answer unsupported by the passages it cites (nodes/ground.py)."""
    check = state.get("grounding") or {}
    return check.get("verdict") == "unsupported" and check.get("answer") == state.get("answer")


def declined(state: State) -> bool:
    """The answer is a decline, or one its passages do not support: Self-Route treats both alike."""
    return is_unanswerable(state.get("answer")) or is_unsupported(state)


def needs_long_context(state: State, fallback_allowed: bool) -> bool:
    """Self-Route: a declined (or unsupported) RAG answer goes to the long context once, if the plan allows."""
    return (
        fallback_allowed and not ended(state) and declined(state) and "long_context" not in (state.get("route") or [])
    )
