"""filter: the second stage of LongRAG's CoT-guided filter (table 17, RESULT-2). Each chunk is
judged True/False against the question and the CoT — one `Send` per chunk, run in parallel.
`kept_evidence` turns the verdicts into I_d; if no chunk passes, all are kept (and the trace
says so), since an empty context can only produce a worse answer."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graph.settings import Settings
from graph.state import Evidence, FilterTask, Verdict
from llm.calls import LLMError, call_llm
from llm.parsing import parse_bool
from prompts import longrag

from .resources import settings_of


def filter_chunk(task: FilterTask, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    evidence = task["evidence"]
    prompt = longrag.FILTER.format(content=evidence["text"], question=task["question"], cot=task["cot"])
    try:
        reply, record = call_llm(settings, "filter", [HumanMessage(prompt)])
    except LLMError as e:
        return {"verdicts": [Verdict(evidence_id=evidence["id"], keep=True, parsed=False)], "route": ["filter"],
                "trace": [f"filter {evidence['id']}: {e}; kept"]}
    keep = parse_bool(reply)
    verdict = Verdict(evidence_id=evidence["id"], keep=True if keep is None else keep, parsed=keep is not None)
    out = {"verdicts": [verdict], "usage": [record], "route": ["filter"]}
    if keep is None:
        out["trace"] = [f"filter {evidence['id']}: unparseable verdict {reply[:80]!r}; kept (safe default)"]
    return out


def kept_evidence(evidence: list[Evidence], verdicts: list[Verdict]) -> tuple[list[Evidence], str | None]:
    """I_d: the chunks judged relevant; all of them (with a note) when none is."""
    if not verdicts:
        return evidence, None
    keep = {v["evidence_id"] for v in verdicts if v["keep"]}
    kept = [e for e in evidence if e["id"] in keep]
    if not kept:
        return evidence, f"filter: no chunk passed; keeping all {len(evidence)}"
    return kept, f"filter: kept {len(kept)} of {len(evidence)} chunk(s)"
