"""cot: LongRAG's CoT-guided filter, first stage (table 17, RESULT-1): one chain of thought over all
retrieved passages gives the global view the passages are judged against.

- filter_mode="per-chunk" (LongRAG): this node writes the CoT; `filter` then judges each passage in
  its own call.
- filter_mode="joint" (the adaptive default): the same call also lists the passages to cite (table
  17's RESULT-2 for all passages at once), so the passages are read once, not twice. Its verdicts are
  written here; an unreadable list keeps every passage (the safe default), and says so.

Under a question budget the prompt holds the best passages that fit what is left, keeping the
generator's share; when not even one fits, the passages go to the generator unfiltered.
"""

from __future__ import annotations

import re

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, State, Verdict, shown_by
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, ask, model_node
from longqa.llm.parsing import parse_dict
from longqa.llm.passages import as_data
from longqa.prompts import longrag


def joint_schema(max_tokens: int) -> dict:
    """The joint reply, constrained where the server can (llama.cpp, vLLM, OpenAI). The thought is
    bounded in characters (two per token of the cap, less the list's room), so the list to cite,
    which comes after it, is not cut off by the reply's cap."""
    thought = {"type": "string", "maxLength": max(40, 2 * (max_tokens - 32))}
    return {
        "type": "object",
        "properties": {"thought": thought, "cite": {"type": "array", "items": {"type": "string"}}},
        "required": ["thought", "cite"],
        "additionalProperties": False,
    }


_LABEL = re.compile(r"\b[EP]\d+\b")


def cot_prompt(evidence: list[Evidence], question: str, joint: bool) -> str:
    if joint:  # labelled, so the reply can name them
        content = "\n\n".join(f"[{e['id']}] {as_data(e['text'])}" for e in evidence)
        return longrag.JOINT_FILTER.format(content=content, question=question)
    return longrag.COT.format(content="\n\n".join(as_data(e["text"]) for e in evidence), question=question)


def parse_joint(reply: str, labels: set[str]) -> tuple[str, set[str] | None]:
    """(the thought process, the labels to cite, or None when the reply names none readably). A reply
    that is not JSON may still say `"cite": [...]` or `cite: E1, E3`."""
    data = parse_dict(reply)
    if data is not None:
        thought, cite = str(data.get("thought") or ""), data.get("cite")
        if isinstance(cite, list):
            return thought, {str(c).strip() for c in cite} & labels
    tail = re.split(r"cite", reply, maxsplit=1, flags=re.IGNORECASE)
    named = set(_LABEL.findall(tail[1])) & labels if len(tail) == 2 else set()
    return (tail[0] if len(tail) == 2 else reply).strip(), (named or None)


@model_node
def cot(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    plan = plan_of(state)
    joint = plan.filter_mode == "joint"
    evidence = state.get("evidence") or []
    try:  # the best passages that fit what is left of the question budget, beside the generator's share
        reply = yield ask(
            settings,
            "cot",
            Prompt(evidence, lambda ev: [HumanMessage(cot_prompt(ev, state["question"], joint))]),
            max_tokens=settings.cot_max_tokens,
            schema=joint_schema(settings.cot_max_tokens) if joint else None,
        )
    except LLMError as e:
        return {"cot": None, "trace": [f"cot: {e}; passages will not be filtered"]}
    shown = reply.kept
    cut = f" (cut at cot_max_tokens={settings.cot_max_tokens})" if reply.truncated else ""
    left_out = f"; {reply.dropped} passage(s) left out to fit the question budget" if reply.dropped else ""
    if not joint:
        return {
            "cot": reply.text.strip(),
            "shown": shown_by("cot", shown),
            "trace": [f"cot: {len(reply.text.split())} words{cut}; checking {len(shown)} passage(s){left_out}"],
        }
    thought, cited = parse_joint(reply.text, {e["id"] for e in shown})
    parsed = cited is not None and not reply.truncated
    keep = cited if parsed else {e["id"] for e in shown}  # unreadable: keep all shown (the safe default)
    verdicts = [Verdict(evidence_id=e["id"], keep=e["id"] in keep, parsed=parsed) for e in shown]
    verdicts += [Verdict(evidence_id=e["id"], keep=False, parsed=True) for e in evidence if e not in shown]
    note = f"cites {len(keep)} of {len(shown)} passage(s)" if parsed else "no readable list of passages; keeping all"
    return {
        "cot": thought or reply.text.strip(),
        "verdicts": verdicts,
        "shown": shown_by("cot", shown),
        "trace": [f"cot: joint CoT + filter, {len(thought.split())} words{cut}; {note}{left_out}"],
    }
