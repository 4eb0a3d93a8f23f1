"""filter: the second stage of LongRAG's CoT-guided filter (table 17, RESULT-2) in its per-chunk form
(filter_mode="per-chunk"). Each passage is judged True/False against the question and the CoT — one
`Send` per passage, run in parallel. `longqa.contracts.verdicts.kept_evidence` turns the verdicts
into I_d for the generator. (filter_mode="joint" judges all passages in the `cot` call instead.)

Under a question budget, `judgements` sends the best passages whose calls fit what is left beside
the generator's share; the others are not judged, so not kept."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.budget import allowance, generator_share
from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import FilterTask, State, Verdict, shown_by
from longqa.llm.budget import prompt_tokens
from longqa.llm.calls import LLMError
from longqa.llm.model_node import ModelSteps, ask, model_node
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
    """One task per passage, best first while the question budget pays for them (each task carries
    its own cost as its allowance; without a budget, every passage and no allowance)."""
    plan = plan_of(state)
    cap, scale = allowance(plan.question_budget, state.get("usage"), generator_share(plan))
    tasks, used = [], 0
    for e in sorted(state.get("evidence") or [], key=lambda e: -e["score"]):
        task = FilterTask(
            question=state["question"],
            cot=state["cot"],
            evidence=e,
            allowance=None,
            deadline_at=state.get("deadline_at"),  # a Send task is its own state: the run's deadline goes with it
        )
        if cap is not None:
            cost = round(prompt_tokens(filter_prompt(task)) * scale)
            if used + cost > cap:
                continue
            used += cost
            task["allowance"] = cost
        tasks.append(task)
    return tasks


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
            allowance=task.get("allowance"),
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
