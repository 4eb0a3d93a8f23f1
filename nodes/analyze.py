"""analyze: OkraLong's analyzer (§3.2). From the question and the primary retrieval it judges the
question type, the information pattern and whether evidence is present.

Backends: the local analyzer (the default, `analyzer="local"`; no LLM call, so no usage record): the
trained one of analyzer/trained.py, which reads the question and the primary hits with their dense and
BM25 scores — or, when its weights file is missing or unusable, the rule-based one; or the LLM with
OkraLong table 8's prompt (`analyzer="llm"`, or "auto" with a model). A reply that cannot be parsed
yields the recorded safe default (extractive / same / no) field by field; a failed LLM call falls back
to the local analyzer, and the analysis says so.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from longqa.analyzer import SAFE_DEFAULT, Analysis, analyze_local
from longqa.analyzer.schema import INFO_PATTERNS, QUESTION_TYPES
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import State, shown_hits
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, Unaffordable, ask, model_node
from longqa.llm.parsing import parse_dict
from longqa.llm.passages import as_data
from longqa.prompts import okralong

ANALYZE_SHARE = 0.35  # the most of the question budget the LLM analyzer (question + primary chunks) may read

# table 8's dictionary, constrained where the server can (llama.cpp, vLLM, OpenAI)
ANALYSIS_SCHEMA = {
    "type": "object",
    "properties": {
        "question-type": {"enum": list(QUESTION_TYPES)},
        "info-type": {"enum": list(INFO_PATTERNS)},
        "containing": {"enum": ["yes", "no"]},
    },
    "required": ["question-type", "info-type", "containing"],
    "additionalProperties": False,
}

# spellings models use for the five types; table 8 itself calls summarizing "abstractive"
_TYPE_ALIASES = {
    "abstractive": "summarizing",
    "summarising": "summarizing",
    "summary": "summarizing",
    "multisource": "multi-source",
    "multi source": "multi-source",
    "comparison": "multi-source",
    "multibridge": "multi-bridge",
    "multi bridge": "multi-bridge",
    "multi-hop": "multi-bridge",
    "multihop": "multi-bridge",
    "factoid": "extractive",
    "numerical": "arithmetic",
}


def parse_analysis(reply: str) -> Analysis:
    """Tolerant parse of table 8's dictionary; each unreadable field takes the safe default."""
    data = parse_dict(reply)
    if data is None:
        return SAFE_DEFAULT.model_copy(update={"backend": "llm", "note": "unparseable reply; safe default"})
    fields = {str(k).strip().lower().replace("_", "-"): str(v).strip().lower() for k, v in data.items()}
    qtype = fields.get("question-type", fields.get("type", ""))
    qtype = _TYPE_ALIASES.get(qtype, qtype)
    pattern = fields.get("info-type", fields.get("info-pattern", ""))
    containing = fields.get("containing", fields.get("evidence", ""))
    containing = {"true": "yes", "false": "no"}.get(containing, containing)
    defaulted = [
        name
        for name, ok in (
            ("question-type", qtype in QUESTION_TYPES),
            ("info-type", pattern in INFO_PATTERNS),
            ("containing", containing in ("yes", "no")),
        )
        if not ok
    ]
    return Analysis(
        question_type=qtype if qtype in QUESTION_TYPES else SAFE_DEFAULT.question_type,
        info_pattern=pattern if pattern in INFO_PATTERNS else SAFE_DEFAULT.info_pattern,
        evidence=containing if containing in ("yes", "no") else SAFE_DEFAULT.evidence,
        backend="llm",
        used_default=bool(defaulted),
        note=f"safe default for {', '.join(defaulted)}" if defaulted else "",
    )


def _messages(hits: list, question: str) -> list:
    return [
        SystemMessage(okralong.ANALYZER_SYSTEM),
        HumanMessage(
            okralong.ANALYZER_USER.format(context="\n\n".join(as_data(h["text"]) for h in hits), question=question)
        ),
    ]


@model_node
def analyze(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    question = state["question"]
    hits = state.get("primary") or []
    use_llm = settings.analyzer == "llm" or (settings.analyzer == "auto" and settings.has_llm)
    update: dict = {}
    if use_llm and settings.has_llm:
        try:  # the LLM analyzer's share of the question budget: the best primary chunks that fit it
            reply = yield ask(
                settings,
                "analyze",
                Prompt(hits, lambda hs: _messages(hs, question), share=ANALYZE_SHARE),
                max_tokens=settings.analyze_max_tokens,
                schema=ANALYSIS_SCHEMA,
            )
            analysis = parse_analysis(reply.text)
            update["shown"] = shown_hits("analyze", reply.kept, "primary")
        except Unaffordable as e:
            analysis = analyze_local(question, hits)
            analysis.note = (
                f"the question budget's analyzer share ({e.cap} tokens) cannot hold table 8's prompt with a chunk; "
                "used the local analyzer" + (f"; {analysis.note}" if analysis.note else "")
            )
        except LLMError as e:
            analysis = analyze_local(question, hits)
            analysis.note = f"LLM analyzer failed ({e}); used the local analyzer" + (
                f"; {analysis.note}" if analysis.note else ""
            )
    else:
        analysis = analyze_local(question, hits)
        if settings.analyzer == "llm":
            analysis.note = "analyzer=llm but no model is configured; used the local analyzer" + (
                f"; {analysis.note}" if analysis.note else ""
            )
    trace = (
        f"analyze[{analysis.backend}]: {analysis.question_type} / {analysis.info_pattern} / evidence "
        f"{analysis.evidence}" + (f" ({analysis.note})" if analysis.note else "")
    )
    return {**update, "analysis": analysis.model_dump(), "trace": [trace]}
