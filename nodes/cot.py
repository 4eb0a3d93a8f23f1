"""cot: the first stage of LongRAG's CoT-guided filter. One chain of thought over all retrieved
chunks gives the global view the per-chunk filter then judges against (table 17, RESULT-1)."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.runtime import settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State
from longqa.llm.calls import LLMError
from longqa.llm.model_node import ModelSteps, ask, model_node
from longqa.prompts import longrag


@model_node
def cot(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    evidence = state.get("evidence") or []
    content = "\n\n".join(e["text"] for e in evidence)
    prompt = longrag.COT.format(content=content, question=state["question"])
    try:
        reply = yield ask(
            settings,
            "cot",
            [HumanMessage(prompt)],
            max_tokens=settings.cot_max_tokens,
            deadline_at=state.get("deadline_at"),
        )
    except LLMError as e:
        return {"cot": None, "usage": e.usage, "route": ["cot"], "trace": [f"cot: {e}; chunks will not be filtered"]}
    cut = f" (cut at cot_max_tokens={settings.cot_max_tokens})" if reply.truncated else ""
    return {
        "cot": reply.text.strip(),
        "usage": reply.usage,
        "route": ["cot"],
        "trace": [f"cot: {len(reply.text.split())} words{cut}; checking {len(evidence)} chunk(s)"],
    }
