"""extract: LongRAG's LLM-augmented information extractor. The retrieved chunks are mapped back
to their source paragraphs (f_m, in process_context) and the LLM writes the global information
I_g needed to answer (slides table 16's instruction). With the CoT filter on, it reads only the
paragraphs of the passages the filter kept; under a question budget, the best paragraphs that fit
what is left beside the generator's share."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, State, shown_by
from longqa.contracts.verdicts import kept_evidence
from longqa.llm.model_node import Later, LLMError, ModelSteps, Prompt, ask, model_node
from longqa.llm.passages import as_data
from longqa.prompts import longrag


def surviving(paragraphs: list[Evidence], kept: list[Evidence]) -> list[Evidence]:
    """The paragraphs that hold a passage the filter kept."""
    return [
        p
        for p in paragraphs
        if any(k["doc_id"] == p["doc_id"] and k["start"] < p["end"] and p["start"] < k["end"] for k in kept)
    ]


def extract_prompt(paragraphs: list[Evidence], question: str) -> str:
    return longrag.EXTRACTOR.format(content="\n\n".join(as_data(p["text"]) for p in paragraphs), question=question)


@model_node
def extract(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    plan = plan_of(state)
    paragraphs = state.get("paragraphs") or state.get("evidence") or []
    read_later = state.get("evidence") or []  # what the generator will read
    notes = []
    if plan.filter and state.get("verdicts"):
        read_later, _ = kept_evidence(read_later, state["verdicts"])
        paragraphs = surviving(paragraphs, read_later) or paragraphs
        notes.append(f"the {len(read_later)} passage(s) the filter kept")
    # the best paragraphs that fit what is left of the question budget, beside the generator's passages and I_g
    later = Later(read_later, writes=settings.extract_max_tokens)
    try:
        reply = yield ask(
            settings,
            "extract",
            Prompt(paragraphs, lambda ps: [HumanMessage(extract_prompt(ps, state["question"]))], later=later),
            max_tokens=settings.extract_max_tokens,
        )
    except LLMError as e:
        return {
            "global_info": None,
            "trace": [f"extract: {e}; answering without I_g"],
        }
    if reply.dropped:
        notes.append(f"{reply.dropped} paragraph(s) left out to fit the question budget")
    paragraphs = reply.kept
    read_from = f" ({'; '.join(notes)})" if notes else ""
    if reply.past_cap:  # the server ignored the cap: what it wrote is no notes, and its start would crowd the generator
        past = f"the model ran past extract_max_tokens={settings.extract_max_tokens} ({reply.past_cap})"
        return {
            "global_info": None,
            "shown": shown_by("extract", paragraphs),
            "trace": [f"extract: {past} reading {len(paragraphs)} paragraph(s){read_from}; answering without I_g"],
        }
    cut = f" (cut at extract_max_tokens={settings.extract_max_tokens})" if reply.truncated else ""
    return {
        "global_info": reply.text.strip() or None,
        "shown": shown_by("extract", paragraphs),
        "trace": [
            f"extract: I_g of {len(reply.text.split())} words{cut} from {len(paragraphs)} paragraph(s){read_from}"
        ],
    }
