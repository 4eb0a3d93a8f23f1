"""filter: the second stage of LongRAG's CoT-guided filter (table 17, RESULT-2). Each chunk is
judged True/False against the question and the CoT — one `Send` per chunk, run in parallel.
`longqa.contracts.verdicts.kept_evidence` turns the verdicts into I_d for the generator."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.runtime import settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import FilterTask, Verdict
from longqa.llm.calls import LLMError
from longqa.llm.model_node import ModelSteps, ask, model_node
from longqa.llm.parsing import parse_bool
from longqa.prompts import longrag

# table 17's {"status": True/False}, constrained where the server can (llama.cpp, vLLM, OpenAI)
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"status": {"type": "boolean"}},
    "required": ["status"],
    "additionalProperties": False,
}


@model_node
def filter_chunk(task: FilterTask, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    evidence = task["evidence"]
    prompt = longrag.FILTER.format(content=evidence["text"], question=task["question"], cot=task["cot"])
    try:
        reply = yield ask(
            settings,
            "filter",
            [HumanMessage(prompt)],
            max_tokens=settings.filter_max_tokens,
            schema=VERDICT_SCHEMA,
            deadline_at=task.get("deadline_at"),
        )
    except LLMError as e:
        return {
            "verdicts": [Verdict(evidence_id=evidence["id"], keep=True, parsed=False)],
            "usage": e.usage,
            "route": ["filter"],
            "trace": [f"filter {evidence['id']}: {e}; kept"],
        }
    keep = parse_bool(reply.text)
    verdict = Verdict(evidence_id=evidence["id"], keep=True if keep is None else keep, parsed=keep is not None)
    out = {"verdicts": [verdict], "usage": reply.usage, "route": ["filter"]}
    if keep is None:
        out["trace"] = [f"filter {evidence['id']}: unparseable verdict {reply.text[:80]!r}; kept (safe default)"]
    return out
