"""compare: which of two came first, or whether two both are one kind, is read from the passages, not generated (our
addition, like the calculator). For a question that offers two options and asks which is older, younger, earlier or
later ("Who was born first, Marino Girolami or Daniel Myrick?"), the date each option's passage writes next to its
name is compared (llm/comparison.py) and the option the dates pick is the answer. For one that asks whether two named
things are both one kind ("Were Daniel Mann and Todd Solondz both directors?"), "yes" where the sentence introducing
each in its own passage says every word of the kind (llm/shared_attribute.py). Either cites the two passages; no
model call. Undecided (a date missing, the two not ordered, a word of the kind left out), the run goes on as planned
and the generator answers."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings
from longqa.contracts.state import Calculation, Evidence, State
from longqa.llm.comparison import compared
from longqa.llm.shared_attribute import shared


def compare(state: State, runtime: Runtime[Settings]) -> dict:
    """The answer the evidence decides (the option its dates pick, or "yes" both are the kind asked about) as the draft,
    cited by the passages that decided it; nothing (a trace) when they do not decide."""
    evidence = state.get("evidence") or []
    question = state["question"]
    if dated := compared(question, evidence):
        expression, year = dated.expression(), float(dated.dates[dated.option].year)
        return _decided(evidence, set(dated.sources.values()), dated.answer, expression, year)
    if kind := shared(question, evidence):
        ids = {passage_id for passage_id, _ in kind.introductions.values()}
        return _decided(evidence, ids, kind.answer, f"both {kind.description}: {kind.expression()}", None)
    return {
        "trace": [
            "compare: the passages do not decide (no date for each option, no kind both are said to be); "
            "the generator answers"
        ]
    }


def _decided(evidence: list[Evidence], ids: set[str], answer: str, expression: str, value: float | None) -> dict:
    return {
        "draft": answer,
        "citations": [e for e in evidence if e["id"] in ids],
        "calculation": Calculation(expression=expression, value=value, answer=answer),
        "trace": [f"compare: {expression} ({', '.join(sorted(ids))}): {answer}"],
    }
