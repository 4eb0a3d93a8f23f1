"""reason_step: OkraLong's step-wise reasoner (table 10). From the evidence retrieved so far it
writes the existing evidence and a next-step query, or the answer. The loop through `retrieve`
counts its own hops and stops at `plan.max_hops`."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from longqa.contracts.runtime import settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import State, Step
from longqa.llm.calls import LLMError, call_llm
from longqa.prompts import okralong

_FIELD = re.compile(
    r"###\s*(Evidence|Next-Query|Answer)\s*:\s*(.*?)(?=###\s*(?:Evidence|Next-Query|Answer)\s*:|$)",
    re.IGNORECASE | re.DOTALL,
)


def parse_step(reply: str) -> tuple[str, str | None, str | None]:
    """(evidence, next query or None, answer or None) from table 10's format, tolerantly."""
    fields = {name.lower(): value.strip() for name, value in _FIELD.findall(reply or "")}
    evidence = fields.get("evidence", (reply or "").strip()[:500])
    next_query = fields.get("next-query") or None
    answer = fields.get("answer")
    if answer:
        answer = re.sub(r"^the answer is\s*:?\s*", "", answer, flags=re.IGNORECASE).strip().rstrip(".")
    if not answer or answer.lower() in ("none", "null", "n/a", ""):
        answer = None
    if next_query and next_query.strip().lower() in ("none", "null", "n/a"):
        next_query = None
    return evidence, next_query, answer


def reason_step(state: State, runtime: Runtime[Settings]) -> dict:
    settings = settings_of(runtime)
    hop = state.get("hops", 0) + 1
    hits = sorted(state.get("hits") or [], key=lambda h: (h["doc_id"], h["start"]))
    context = "\n".join(h["text"] for h in hits)
    earlier = " ".join(f"(hop {s['hop']}) {s['evidence']}" for s in state.get("steps") or [])
    messages = [
        SystemMessage(okralong.REASONER_SYSTEM),
        HumanMessage(okralong.REASONER_DEMO_USER),
        AIMessage(okralong.REASONER_DEMO_ASSISTANT),
        HumanMessage(
            okralong.REASONER_USER.format(context=(earlier + "\n" + context).strip(), question=state["question"])
        ),
    ]
    try:
        reply, record = call_llm(settings, "reason_step", messages)
    except LLMError as e:
        return {
            "hops": hop,
            "route": ["reason_step"],
            "trace": [f"reason_step: {e}; stopping the loop"],
            "steps": [Step(hop=hop, query="", evidence="", next_query=None, answer=None)],
        }
    evidence, next_query, answer = parse_step(reply)
    last_query = next(
        (s["next_query"] for s in reversed(state.get("steps") or []) if s["next_query"]), state["question"]
    )
    step = Step(hop=hop, query=last_query, evidence=evidence, next_query=next_query, answer=answer)
    note = f"answer {answer!r}" if answer else f"next query {next_query!r}"
    return {
        "hops": hop,
        "steps": [step],
        "draft": answer,
        "usage": [record],
        "route": ["reason_step"],
        "trace": [f"reason_step: hop {hop}: {note}"],
    }
