"""split_question: OkraLong's question splitter (table 9). A question spanning several entities
becomes sub-questions, each retrieved separately (in parallel, one `Send` each) and merged."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import State
from longqa.llm.model_node import LLMError, ModelSteps, ask, model_node
from longqa.prompts import okralong

_NUMBERING = re.compile(r"^\d{1,2}[.)]\s+")  # "1. ", "2) ", "10. " (not "2010 was ...")


def parse_sub_questions(reply: str, limit: int) -> list[str]:
    """One sub-question per line; numbering, bullets and blank lines dropped; duplicates folded."""
    subs: list[str] = []
    for line in reply.splitlines():
        line = line.strip().lstrip("-*•").strip()
        line = _NUMBERING.sub("", line)
        if len(line) > 3 and line.lower() not in (s.lower() for s in subs):
            subs.append(line)
    return subs[:limit]


@model_node
def split_question(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    question = state["question"]
    messages = [
        SystemMessage(okralong.SPLITTER_SYSTEM),
        HumanMessage(okralong.SPLITTER_DEMO_USER),
        AIMessage(okralong.SPLITTER_DEMO_ASSISTANT),
        HumanMessage(okralong.SPLITTER_USER.format(question=question)),
    ]
    try:
        reply = yield ask(settings, "split_question", messages, max_tokens=settings.split_max_tokens)
    except LLMError as e:
        return {
            "sub_questions": [question],
            "trace": [f"split_question: {e}; retrieving the whole question instead"],
        }
    text = reply.text.rsplit("\n", 1)[0] if reply.truncated else reply.text  # a cut last line is no question
    subs = parse_sub_questions(text, settings.max_sub_questions) or [question]
    return {
        "sub_questions": subs,
        "trace": [f"split_question: {len(subs)} sub-question(s): " + " | ".join(subs)],
    }
