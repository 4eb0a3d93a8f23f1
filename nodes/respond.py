"""respond: close the run — status, usage totals (cost = input + 4 x output, OkraLong's weighting)
and an AI message with the answer and its citations for chat callers. Without a model the run is
evidence-only: the passages are returned with citations and `answer` stays None. An answer the
grounding check found unsupported by its passages (nodes/ground.py) is declined here, whatever route
led to it: the run answers that the documents do not say, with the passages it read."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from longqa.contracts.failure import ended
from longqa.contracts.settings import Settings, SettingsError, settings_of
from longqa.contracts.state import State, Usage
from longqa.contracts.verdicts import is_unanswerable, is_unsupported
from longqa.llm.scripted import LABEL as SCRIPTED_LABEL


def usage_totals(records: list[dict], question_budget: int | None = None) -> Usage:
    """The run's usage summed over the attempt records (cost: input + 4 x output tokens)."""
    inp = sum(r["input_tokens"] for r in records)
    out = sum(r["output_tokens"] for r in records)
    return Usage(
        calls=len(records),
        input_tokens=inp,
        output_tokens=out,
        cost=inp + 4 * out,
        estimated=any(r["estimated"] for r in records),
        seconds=round(sum(r["seconds"] for r in records), 3),
        question_budget=question_budget,
    )


def _cite(e: dict) -> str:
    return f"[{e['id']}] {e['source']} chars {e['start']}-{e['end']}"


def respond(state: State, runtime: Runtime[Settings]) -> dict:
    """The run's outcome: its status, the answer (unanswerable when its passages do not support it), citations, usage
    totals and the chat message a person reads."""
    try:
        settings = settings_of(runtime)
        has_llm, scripted, model = settings.has_llm, settings.is_scripted, settings.model
    except SettingsError:  # prepare already ended the run with this error: report it, model-less
        has_llm, scripted, model = False, False, None
    answer = state.get("answer")
    unsupported = is_unsupported(state)
    if unsupported:  # an answer its passages do not support is not sent out: the documents do not say
        answer = "unanswerable"
    if ended(state) and not answer:
        status = "error"
    elif not has_llm:
        status = "evidence-only"
    elif is_unanswerable(answer):
        status = "unanswerable"
    elif answer:
        status = "answered"
    else:
        status = "error"
    citations = state.get("citations") or ([] if has_llm else state.get("evidence") or [])
    # a run never ends in error without saying why
    empty = "no answer was produced (the model's reply was empty)"
    error = state.get("error") or (empty if status == "error" else None)
    if status == "evidence-only":
        body = (
            f"Evidence only (no LLM configured): {len(citations)} passage(s) retrieved for the question; "
            "no answer was generated."
        )
    elif status == "error":
        body = f"Error: {error}"
    elif unsupported:
        declined = state["grounding"]["answer"]
        if state["grounding"]["method"] == "subject":
            names = ", ".join(f'"{n}"' for n in state["grounding"]["missing"])
            why = f"is about something else: the documents never mention {names}"
        elif state["grounding"]["method"] == "non-answer":
            why = "is no answer: it says nothing the question does not (a restatement, a heading or a label)"
        else:
            why = "the passages it cites do not support"
        body = f'unanswerable: the documents do not say. The model answered "{declined}", which {why}.'
    else:
        body = answer or ""
    if scripted and status in ("answered", "unanswerable"):
        body = f"[{SCRIPTED_LABEL}] {body}"
    if citations:
        body += "\n\nSources:\n" + "\n".join(_cite(e) for e in citations)
    model = f"{model} - {SCRIPTED_LABEL}" if scripted else model
    return {
        "answer": answer,
        "error": error,
        "status": status,
        "citations": citations,
        "totals": usage_totals(state.get("usage") or [], (state.get("plan") or {}).get("question_budget")),
        "model": model,
        "messages": [AIMessage(content=body, name="longqa")],
    }
