"""A simple, honest rule-based analyzer: lexical cues for the question type and information
pattern, word coverage of the primary retrieval for evidence. No model, no LLM call; its
accuracy is whatever the rules give (measured by bench/, not assumed)."""

from __future__ import annotations

import re

from longqa.retrieval.bm25 import bm25_tokens

from .schema import Analysis, QuestionType

_ARITHMETIC = re.compile(
    r"\b(how (much|many)|percent(age)?|%|ratio|average|mean|sum|total|difference|change[ds]?|increase[ds]?|"
    r"decrease[ds]?|grow(th)?|decline[ds]?|proportion|rate|margin|compute|calculate)\b",
    re.I,
)
_SUMMARIZING = re.compile(
    r"\b(summari[sz]e|summary|overview|describe|explain|discuss|main|key|principal|overall|approach(es)?|"
    r"how (does|do|did|is|are|was|were)|why|what (are|were) the (main|key|major|principal))\b",
    re.I,
)
_COMPARISON = re.compile(
    r"(,\s*[^,?]+\s+or\s+[^,?]+\?$)|\b(both|either|neither|compare|comparison|same|in common|"
    r"(older|younger|larger|smaller|bigger|longer|shorter|earlier|later|first|more|less|fewer|higher|lower)\b.*"
    r"\bor\b)",
    re.I,
)
_BRIDGE = re.compile(
    r"\b(of|by|for|in) the \w+( \w+)? (of|that|which|who|whose|where)\b|\bwhose\b|"
    r"\b(the \w+ (that|which|who) \w+)",
    re.I,
)
_EXACT = re.compile(r"\d|\"[^\"]+\"|'[^']+'|\b[A-Z]{2,}\b")


def question_type(question: str) -> QuestionType:
    """The question's OkraLong type by keyword rules: comparison, arithmetic, bridge and summary cues in that order,
    else extractive."""
    q = question.strip()
    if _COMPARISON.search(q):
        return "multi-source"
    if _ARITHMETIC.search(q):
        return "arithmetic"
    if _BRIDGE.search(q):
        return "multi-bridge"
    if _SUMMARIZING.search(q):
        return "summarizing"
    return "extractive"


def info_pattern(question: str) -> str:
    """Whether the question needs exact matching (a digit, a quote, an acronym, or two or more names past its
    start), semantic search (no such name, four or more terms) or either (`same`)."""
    names = re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]+", question.strip())
    if _EXACT.search(question) or len(names) >= 2:
        return "exact"
    if not names and len(bm25_tokens(question)) >= 4:
        return "semantic"
    return "same"


def evidence_present(question: str, contexts: list[str]) -> bool:
    """Yes when one primary chunk holds at least 60% of the question's content words and all
    chunks together hold at least 75%."""
    words = set(bm25_tokens(question))
    if not words or not contexts:
        return False
    per_chunk = [len(words & set(bm25_tokens(c))) / len(words) for c in contexts]
    union = len(words & set().union(*(set(bm25_tokens(c)) for c in contexts))) / len(words)
    return max(per_chunk) >= 0.6 and union >= 0.75


def analyze_rules(question: str, contexts: list[str]) -> Analysis:
    """The rule-based analysis (backend `local-rules`): question type, information pattern, and whether the primary
    chunks hold the evidence."""
    return Analysis(
        question_type=question_type(question),
        info_pattern=info_pattern(question),
        evidence="yes" if evidence_present(question, contexts) else "no",
        backend="local-rules",
    )
