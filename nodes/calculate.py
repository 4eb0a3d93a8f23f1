"""calculate: arithmetic is computed, not generated (our addition, issue 34).
For a question the analyzer calls arithmetic, the model writes the expression over numbers it
copies from the passages (prompts/arithmetic.py) and Python computes it with a safe evaluator
(llm/arithmetic.py). The result is the answer only when every operand is a number the cited
passages write; otherwise (no expression, one that is not arithmetic, an invented operand) the
generator answers as before. The answer cites the passages the numbers come from."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, State, shown_by
from longqa.llm.arithmetic import NotArithmetic, evaluate, formatted, operands
from longqa.llm.grounding import number_values
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, Unaffordable, ask, model_node
from longqa.llm.parsing import parse_dict
from longqa.llm.passages import as_data
from longqa.prompts import arithmetic

EXPRESSION_SCHEMA = {
    "type": "object",
    "properties": {"expression": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}}},
    "required": ["expression", "sources"],
    "additionalProperties": False,
}
EXPRESSION_MAX_TOKENS = 80
# numbers an expression may use that no passage writes: a percentage's 100, units' 1000, small counts
CONSTANTS = {"100", "1000", *(str(i) for i in range(1, 13))}


def expression_prompt(question: str, passages: list[Evidence]) -> str:
    """The calculator's prompt: the passages as quoted data, each under its id, and the question."""
    blocks = "\n\n".join(f"[{e['id']}] {as_data(e['text'])}" for e in passages)
    return arithmetic.EXPRESSION.format(passages=blocks, question=question)


@model_node
def calculate(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    """Ask the model for an arithmetic expression over the passages' numbers and evaluate it here; the result becomes
    the draft answer only when every operand is written in the cited passages (else the generator answers)."""
    settings = settings_of(runtime)
    question = state["question"]
    # the generator's share stays: where no calculation comes of it, the generator still answers
    prompt = Prompt(state.get("evidence") or [], lambda kept: [HumanMessage(expression_prompt(question, kept))])
    try:
        reply = yield ask(settings, "calculate", prompt, max_tokens=EXPRESSION_MAX_TOKENS, schema=EXPRESSION_SCHEMA)
    except Unaffordable:
        return {"trace": ["calculate: the question budget leaves no room beside the generator's share"]}
    except LLMError as e:
        return {"trace": [f"calculate: {e}; the generator answers"]}
    passages = reply.kept
    data = parse_dict(reply.text) or {}
    expression = str(data.get("expression") or "").strip()
    shown = shown_by("calculate", passages)
    if not expression or expression.lower() == "none":
        return {"shown": shown, "trace": ["calculate: no calculation needed; the generator answers"]}
    named = {str(s) for s in data.get("sources") or []}
    cited = [e for e in passages if e["id"] in named] or passages
    written = number_values("\n".join(e["text"] for e in cited)) | CONSTANTS
    invented = [n for n in operands(expression) if _value_of(n) not in written]
    try:
        value = evaluate(expression)
    except NotArithmetic as e:
        return {"shown": shown, "trace": [f"calculate: {e}; the generator answers"]}
    if invented:
        note = f"calculate: {expression!r} uses {', '.join(invented[:4])}, not in the cited passages"
        note += "; the generator answers"
        return {"shown": shown, "trace": [note]}
    answer = formatted(value)
    used = {_value_of(n) for n in operands(expression)}
    cited = [e for e in cited if number_values(e["text"]) & used] or cited
    return {
        "draft": answer,
        "citations": cited,
        "calculation": {"expression": expression, "value": value, "answer": answer},
        "shown": shown,
        "trace": [f"calculate: {expression} = {answer}"],
    }


def _value_of(number: str) -> str:
    return next(iter(number_values(number)), number)
