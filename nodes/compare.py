"""compare: which of two came first is read from the dates, not generated (our addition, like the calculator).
For a question that offers two options and asks which is older, younger, earlier or later ("Who was born first,
Marino Girolami or Daniel Myrick?"), the date each option's passage writes next to its name is compared
(llm/comparison.py) and the option the dates pick is the answer, citing the two passages; no model call. Where
a date is missing or the two cannot be ordered, the run goes on as planned and the generator answers."""

from __future__ import annotations

from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings
from longqa.contracts.state import Calculation, State
from longqa.llm.comparison import compared


def compare(state: State, runtime: Runtime[Settings]) -> dict:
    """The option the evidence's dates pick as the draft answer, cited by the passages the dates are in; nothing
    (a trace) when they do not decide."""
    evidence = state.get("evidence") or []
    found = compared(state["question"], evidence)
    if found is None:
        return {"trace": ["compare: the passages do not date both options; the generator answers"]}
    ids = set(found.sources.values())
    cited = [e for e in evidence if e["id"] in ids]
    expression, year = found.expression(), float(found.dates[found.option].year)
    return {
        "draft": found.answer,
        "citations": cited,
        "calculation": Calculation(expression=expression, value=year, answer=found.answer),
        "trace": [f"compare: {expression} ({', '.join(sorted(ids))}): {found.answer}"],
    }
