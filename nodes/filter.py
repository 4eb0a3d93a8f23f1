"""filter: the second stage of LongRAG's CoT-guided filter (table 17, RESULT-2) in its per-chunk form
(filter_mode="per-chunk"). Each passage is judged True/False against the question and the CoT — one
`Send` per passage, run in parallel. `longqa.contracts.verdicts.kept_evidence` turns the verdicts
into I_d for the generator. (filter_mode="joint" judges all passages in the `cot` call instead.)

Under a question budget, `judgements` sends the best passages whose calls fit what is left beside
the generator's share; the others are not judged, so not kept."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, FilterTask, State, Verdict, shown_by
from longqa.llm.model_node import LLMError, ModelSteps, ask, model_node, paid_tasks
from longqa.llm.parsing import parse_bool
from longqa.llm.passages import as_data
from longqa.prompts import longrag

# table 17's {"status": True/False}, constrained where the server can (llama.cpp, vLLM, OpenAI)
VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"status": {"type": "boolean"}},
    "required": ["status"],
    "additionalProperties": False,
}


def filter_prompt(task: FilterTask) -> str:
    return longrag.FILTER.format(content=as_data(task["evidence"]["text"]), question=task["question"], cot=task["cot"])


def judgements(state: State) -> list[FilterTask]:
    """One task per passage, best first while the question budget pays for them (the driver's
    `paid_tasks`: each carries its own cost as its allowance, and the run's deadline)."""

    def task(e: Evidence) -> dict:
        return {"question": state["question"], "cot": state["cot"], "evidence": e}

    return paid_tasks(state, state.get("evidence") or [], task, filter_prompt)  # type: ignore[return-value]


@model_node
def filter_chunk(task: FilterTask, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    evidence = task["evidence"]
    try:
        reply = yield ask(
            settings,
            "filter",
            [HumanMessage(filter_prompt(task))],
            max_tokens=settings.filter_max_tokens,
            schema=VERDICT_SCHEMA,
        )
    except LLMError as e:
        return {
            "verdicts": [Verdict(evidence_id=evidence["id"], keep=True, parsed=False)],
            "trace": [f"filter {evidence['id']}: {e}; kept"],
        }
    keep = parse_bool(reply.text)
    verdict = Verdict(evidence_id=evidence["id"], keep=True if keep is None else keep, parsed=keep is not None)
    out = {"verdicts": [verdict], "shown": shown_by("filter", [evidence])}
    if keep is None:
        out["trace"] = [f"filter {evidence['id']}: unparseable verdict {reply.text[:80]!r}; kept (safe default)"]
    return out
