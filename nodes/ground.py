"""ground: is the answer supported by the passages it cites? (Our addition to the three papers,
issue 34: a model that never declines would otherwise send invented answers out with citations.)

First, the subject: where the question names something the searched documents never say
(retrieval/search/mentions.py), no answer from them can be about it, whatever its passages hold, save a "No" to
whether that name is in a set a passage lists whole (llm/absent_member.py: the list leaves it out). Then a reply
that answers nothing (llm/non_answer.py: the question restated, a passage's label or a heading copied,
no word beyond the question's) is declined: its words are all in the passages, yet it says nothing. Then the
lexical check (llm/grounding.py: the answer's numbers, names and content words in the cited
passages, no model). Where it is unsure, one short structured yes/no call asks the model,
when the question budget can pay for it. The verdict goes to the state; `self_route` treats an
unsupported answer as Self-Route treats "unanswerable": the long-context fallback where the plan
allows it, else the honest answer that the documents do not say, with the evidence."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, Grounding, State, shown_by
from longqa.contracts.verdicts import is_unanswerable
from longqa.llm.absent_member import absent_member
from longqa.llm.answer_core import same_answer
from longqa.llm.grounding import lexical_support
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, Unaffordable, ask, model_node
from longqa.llm.non_answer import non_answer
from longqa.llm.parsing import parse_bool
from longqa.llm.passages import as_data
from longqa.prompts import grounding
from longqa.retrieval.search.mentions import question_names

SUPPORT_SCHEMA = {
    "type": "object",
    "properties": {"supported": {"type": "boolean"}},
    "required": ["supported"],
    "additionalProperties": False,
}
SUPPORT_MAX_TOKENS = 12


def support_prompt(question: str, answer: str, passages: list[Evidence]) -> str:
    """The grounding prompt: the cited passages as quoted data, the question and the answer to check."""
    blocks = "\n\n".join(f"[{e['id']}] {as_data(e['text'])}" for e in passages)
    return grounding.SUPPORT.format(passages=blocks, question=question, answer=answer)


def _decided_before_the_words(state: State, answer: str, cited: list[Evidence]) -> dict | None:
    """The verdict where the answer's words need not be looked for: computed from cited operands, about a
    subject the documents never name, or no answer at all; None otherwise."""
    calculation = state.get("calculation")
    if calculation and calculation["answer"] == answer:  # its operands were checked in the cited passages
        verdict = Grounding(answer=answer, verdict="supported", share=1.0, method="computed", missing=[])
        return {
            "grounding": verdict,
            "trace": [f"ground: computed from what the cited passages write ({calculation['expression']})"],
        }
    unmentioned = state.get("unmentioned") or []
    if unmentioned:
        return _about_the_unmentioned(state, answer, cited, unmentioned)
    why = non_answer(answer, state["question"], [*cited, *(state.get("evidence") or [])])
    if why:  # seen (issue 48): a 0.5B model's whole reply was the question, every word of it in the passages
        verdict = Grounding(answer=answer, verdict="unsupported", share=0.0, method="non-answer", missing=[], why=why)
        return {"grounding": verdict, "trace": [f"ground: no answer: {why}"]}
    return None


def _about_the_unmentioned(state: State, answer: str, cited: list[Evidence], unmentioned: list[str]) -> dict:
    """The documents never name what the question asks about: the answer is about something else, unless it is a
    "No" to whether that name is in a set a passage lists whole (llm/absent_member.py)."""
    question = state["question"]
    said = [n for n in question_names(question) if n not in unmentioned]
    shown = [*cited, *(e for e in state.get("evidence") or [] if e not in cited)]
    absent = absent_member(question, answer, unmentioned, said, shown)
    if absent:
        verdict = Grounding(answer=answer, verdict="supported", share=1.0, method="absence", missing=[absent.name])
        listing = [e for e in shown if e["id"] == absent.passage]
        return {
            "grounding": {**verdict, "why": absent.why},
            "citations": cited if listing[0] in cited else [*cited, *listing],
            "trace": [f"ground: supported by what the documents leave out: {absent.why}"],
        }
    names = ", ".join(f'"{n}"' for n in unmentioned)
    verdict = Grounding(answer=answer, verdict="unsupported", share=0.0, method="subject", missing=unmentioned)
    return {"grounding": verdict, "trace": [f"ground: unsupported: the documents never mention {names}"]}


@model_node
def ground(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    """Check that the answer is supported by its cited passages: computed answers pass, an unmentioned subject fails,
    else by its words, and the model decides when the words are unsure."""
    settings = settings_of(runtime)
    plan = plan_of(state)
    answer = state.get("answer")
    if not plan.ground or not answer or is_unanswerable(answer):
        return {"grounding": None}
    cited: list[Evidence] = state.get("citations") or []
    before = state.get("grounding")
    if state.get("reasked") is not None and before and same_answer(before["answer"], answer):
        # asked again, the generator gave the same answer: the check's verdict on it stands (not a second call)
        return {"trace": [f"ground: the same answer as before it was asked again: {before['verdict']} stands"]}
    decided = _decided_before_the_words(state, answer, cited)
    if decided:
        return decided
    computed = bool((state.get("analysis") or {}).get("question_type") == "arithmetic")
    found = lexical_support(answer, [e["text"] for e in cited], state["question"], computed=computed)
    verdict = Grounding(
        answer=answer, verdict=found.verdict, share=round(found.share, 3), method="lexical", missing=found.missing[:12]
    )
    trace = f"ground: {found.verdict} by its words ({found.share:.0%} of {found.checked} found in the cited passages)"
    if found.verdict != "unsure" or not cited:
        return {"grounding": verdict, "trace": [trace]}
    try:  # the cited passages that fit what is left of the question budget
        reply = yield ask(
            settings,
            "ground",
            Prompt(cited, lambda kept: [HumanMessage(support_prompt(state["question"], answer, kept))], answers=True),
            max_tokens=SUPPORT_MAX_TOKENS,
            schema=SUPPORT_SCHEMA,
        )
    except Unaffordable:
        return {"grounding": verdict, "trace": [trace + "; the question budget leaves no room to ask the model"]}
    except LLMError as e:
        return {"grounding": verdict, "trace": [trace, f"ground: the model was not asked ({e}): the words decide"]}
    supported = parse_bool(reply.text, key="supported")
    if supported is None:
        return {"grounding": verdict, "trace": [trace, f"ground: unreadable verdict {reply.text[:60]!r}"]}
    label = "supported" if supported else "unsupported"
    verdict = {**verdict, "verdict": label, "method": "model"}
    return {
        "grounding": verdict,
        "shown": shown_by("ground", reply.kept),
        "trace": [trace, f"ground: the model judges the answer {label} by its passages"],
    }
