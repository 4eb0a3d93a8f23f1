"""reason_step: OkraLong's step-wise reasoner (table 10). From the evidence retrieved so far it
writes the existing evidence and a next-step query, or the answer. The loop through `retrieve`
counts its own hops and stops at `plan.max_hops`."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Hit, State, Step, shown_hits
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, Unaffordable, ask, model_node
from longqa.llm.parsing import echoes, fixed_text
from longqa.llm.passages import as_data
from longqa.prompts import okralong

# a field runs to the next "### Name:" header of any name (an echoed "### Context:" ends it too)
_HEADER = r"###\s*([A-Za-z][A-Za-z -]{0,30}?)\s*:"
_FIELD = re.compile(_HEADER + r"\s*(.*?)(?=" + _HEADER.replace("(", "(?:", 1) + r"|$)", re.DOTALL)
_NONE = re.compile(r"^(?:none|null|n/a|nothing|unknown)\b", re.IGNORECASE)
# the system prompt and the demonstration: a step that repeats them is an echo, not reasoning
_FIXED = fixed_text(okralong.REASONER_SYSTEM, okralong.REASONER_DEMO_USER, okralong.REASONER_DEMO_ASSISTANT)


def parse_step(reply: str, context: str = "") -> tuple[str, str | None, str | None]:
    """(evidence, next query or None, answer or None) from table 10's format, tolerantly. A field
    whose value starts with "None" is empty; a step whose evidence repeats the demonstration (and
    not the context) is an echo: no next query, no answer."""
    fields: dict[str, str] = {}
    for name, value in _FIELD.findall(reply or ""):
        fields.setdefault(name.strip().lower(), value.strip())
    evidence = fields.get("evidence", (reply or "").strip()[:500])
    if echoes(evidence, _FIXED, quoting=context):
        return "", None, None
    next_query = _value(fields.get("next-query"), context)
    answer = _value(fields.get("answer"), context)
    if answer:
        answer = re.sub(r"^the answer is\s*:?\s*", "", answer, flags=re.IGNORECASE).strip().rstrip(".") or None
    return evidence, next_query, answer


def _value(text: str | None, context: str) -> str | None:
    if not text or _NONE.match(text) or echoes(text, _FIXED, quoting=context):
        return None
    return text


def reasoner_messages(hits: list[Hit], earlier: str, question: str) -> list:
    """Table 10's prompt: the notes of the earlier hops, then this hop's chunks in document order."""
    ordered = sorted(hits, key=lambda h: (h["doc_id"], h["start"]))
    context = (earlier + "\n" + "\n".join(as_data(h["text"]) for h in ordered)).strip()
    return [
        SystemMessage(okralong.REASONER_SYSTEM),
        HumanMessage(okralong.REASONER_DEMO_USER),
        AIMessage(okralong.REASONER_DEMO_ASSISTANT),
        HumanMessage(okralong.REASONER_USER.format(context=context, question=question)),
    ]


@model_node
def reason_step(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    hop = state.get("hops", 0) + 1
    # this hop's chunks; the earlier hops' chunks are carried by their notes (the existing evidence)
    read_before = {s["query"] for s in state.get("steps") or []}
    hits = [h for h in state.get("hits") or [] if h["query"] not in read_before] or state.get("hits") or []
    earlier = " ".join(f"(hop {s['hop']}) {s['evidence']}" for s in state.get("steps") or [])
    # the best of this hop's chunks that fit; the generator reads every hop's notes too: room for them
    prompt = Prompt(hits, lambda hs: reasoner_messages(hs, earlier, state["question"]), notes=earlier)
    try:
        reply = yield ask(settings, "reason_step", prompt, max_tokens=settings.reason_max_tokens)
    except LLMError as e:
        unpaid = isinstance(e, Unaffordable)  # not sent: this hop did not happen
        why = f"{e}; no hop {hop}" if unpaid else f"reason_step: {e}; stopping the loop"
        empty = Step(hop=hop, query="", evidence="", next_query=None, answer=None)
        return {"hops": hop - 1 if unpaid else hop, "trace": [why], "steps": [empty]}
    hits = reply.kept
    context = "\n".join(h["text"] for h in hits)
    quoting = f"{context}\n{state['question']}"  # what a real step may repeat
    evidence, next_query, answer = parse_step(reply.text, quoting)
    problem = None
    if reply.truncated:  # a cut reply's last field may be cut too: no answer and no next query from it
        problem = f"reply cut at reason_max_tokens={settings.reason_max_tokens}"
    elif echoes(reply.text, _FIXED, quoting=quoting) and not (answer or next_query):
        problem = "reply repeats the prompt's demonstration"
        evidence = ""  # the demonstration's facts are not this document's
    if problem:
        next_query = answer = None
    last_query = next(
        (s["next_query"] for s in reversed(state.get("steps") or []) if s["next_query"]), state["question"]
    )
    step = Step(hop=hop, query=last_query, evidence=evidence, next_query=next_query, answer=answer)
    note = f"answer {answer!r}" if answer else f"next query {next_query!r}"
    if problem:
        note = f"{problem}; stopping the loop"
    return {
        "hops": hop,
        "steps": [step],
        "draft": answer,
        "shown": shown_hits("reason_step", hits, f"hop{hop}"),
        "trace": [f"reason_step: hop {hop}: {note}"],
    }
