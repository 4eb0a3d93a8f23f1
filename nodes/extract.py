"""extract: LongRAG's LLM-augmented information extractor. The retrieved chunks are mapped back
to their source paragraphs (f_m, in process_context) and the LLM writes the global information
I_g needed to answer (slides table 16's instruction)."""

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
def extract(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    paragraphs = state.get("paragraphs") or state.get("evidence") or []
    content = "\n\n".join(p["text"] for p in paragraphs)
    prompt = longrag.EXTRACTOR.format(content=content, question=state["question"])
    try:
        reply = yield ask(
            settings,
            "extract",
            [HumanMessage(prompt)],
            max_tokens=settings.extract_max_tokens,
            deadline_at=state.get("deadline_at"),
        )
    except LLMError as e:
        return {
            "global_info": None,
            "usage": e.usage,
            "route": ["extract"],
            "trace": [f"extract: {e}; answering without I_g"],
        }
    cut = f" (cut at extract_max_tokens={settings.extract_max_tokens})" if reply.truncated else ""
    return {
        "global_info": reply.text.strip() or None,
        "usage": reply.usage,
        "route": ["extract"],
        "trace": [f"extract: I_g of {len(reply.text.split())} words{cut} from {len(paragraphs)} paragraph(s)"],
    }
