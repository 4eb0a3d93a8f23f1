"""cot: the first stage of LongRAG's CoT-guided filter. One chain of thought over all retrieved
chunks gives the global view the per-chunk filter then judges against (table 17, RESULT-1)."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.runtime import settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State
from longqa.llm.calls import LLMError, call_llm
from longqa.prompts import longrag


def cot(state: State, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    evidence = state.get("evidence") or []
    content = "\n\n".join(e["text"] for e in evidence)
    prompt = longrag.COT.format(content=content, question=state["question"])
    try:
        reply, record = call_llm(settings, "cot", [HumanMessage(prompt)])
    except LLMError as e:
        return {"cot": None, "route": ["cot"], "trace": [f"cot: {e}; chunks will not be filtered"]}
    return {
        "cot": reply.strip(),
        "usage": [record],
        "route": ["cot"],
        "trace": [f"cot: {len(reply.split())} words; checking {len(evidence)} chunk(s)"],
    }
