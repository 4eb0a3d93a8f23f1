"""Arithmetic computed, not generated (issue 34): the safe evaluator, and the calculator node in the
graph (the scripted model writes the expression; its numbers are not a model's)."""

from __future__ import annotations

import json

import pytest

from longqa.llm.arithmetic import MAX_CHARS, NotArithmetic, evaluate, formatted, operands

TABLE = """# Harbor finances

| Item | 2018 | 2019 |
|---|---|---|
| Audit fees | 823 | 1,092 |
| Dredging | 9,196 | 49,891 |

The authority audited its accounts every year. Port dues rose by two percent in 2019.
"""


@pytest.mark.parametrize(
    "expression,value",
    [
        ("49,891 - 9,196", 40695.0),
        ("(1,092-823)/823 * 100", (1092 - 823) / 823 * 100),
        ("(12.4+89.0)/4,073.9", (12.4 + 89.0) / 4073.9),
        ("-3 + +5", 2.0),
        ("$1,200 * 2", 2400.0),
        ("50%", 0.5),
        ("7,155 / 10,290", 7155 / 10290),
    ],
)
def test_plain_arithmetic_is_computed(expression, value):
    assert evaluate(expression) == pytest.approx(value)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('id')",
        "open('/etc/passwd')",
        "2 ** 1000000",  # no powers: a small expression could be a huge number
        "9" * 400,  # longer than MAX_CHARS
        "1/0",
        "x + 1",
        "[1, 2]",
        "1e308 * 1e308",
        "(" * 250 + "1" + ")" * 250,  # nesting beyond what the length allows
        "lambda: 1",
        "",
    ],
)
def test_anything_else_is_refused_with_a_reason(expression):
    with pytest.raises(NotArithmetic):
        evaluate(expression)


def test_results_read_as_tat_qa_writes_them():
    assert formatted(40695.0) == "40695"
    assert formatted((1092 - 823) / 823 * 100) == "32.69"
    assert formatted(-0.001) == "0"
    assert operands("(1,092 - 823) / 823 * 100") == ["1092", "823", "823", "100"]
    assert MAX_CHARS >= 200
    assert evaluate("(" * 40 + "1" + ")" * 40) == 1.0  # parentheses add no parts


def _run(run_graph, scripted, expression: str, sources: list[str], calculator: str = "auto") -> dict:
    reply = json.dumps({"expression": expression, "sources": sources})
    analysis = json.dumps({"question-type": "arithmetic", "info-type": "same", "containing": "yes"})
    name, model = scripted({"analyzer": analysis, "calculator": reply, "generator": "about 300\nSources: E1"})
    out = run_graph(
        model=name,
        inputs={"question": "What was the change in audit fees from 2018 to 2019?", "texts": [TABLE]},
        strategy="adaptive",
        question_budget=0,
        calculator=calculator,
    )
    return out, model


def test_the_model_writes_the_expression_and_python_computes_it(run_graph, scripted):
    out, model = _run(run_graph, scripted, "1,092 - 823", ["E1"])
    assert out["answer"] == "269" and out["status"] == "answered"
    assert out["calculation"] == {"expression": "1,092 - 823", "value": 269.0, "answer": "269"}
    assert "generator" not in model.calls  # the computed answer is the answer
    assert out["grounding"]["method"] == "computed" and out["grounding"]["verdict"] == "supported"
    assert out["citations"] and all("1,092" in c["text"] for c in out["citations"])
    assert out["route"][-6:] == ["process_context", "calculate", "generate", "ground", "self_route", "respond"]


@pytest.mark.parametrize(
    "expression,why",
    [
        ("1,100 - 823", "not in the cited passages"),  # an operand the passages never write
        ("__import__('os')", "only numbers"),
        ("none", "no calculation needed"),
    ],
)
def test_without_a_trusted_expression_the_generator_answers(run_graph, scripted, expression, why):
    out, model = _run(run_graph, scripted, expression, ["E1"])
    assert "generator" in model.calls and out.get("calculation") is None
    assert any(t.startswith("calculate:") and why in t for t in out["trace"]), out["trace"]


def test_the_calculator_can_be_switched_off(run_graph, scripted):
    out, model = _run(run_graph, scripted, "1,092 - 823", ["E1"], calculator="off")
    assert "calculator" not in model.calls and "calculate" not in out["route"]
