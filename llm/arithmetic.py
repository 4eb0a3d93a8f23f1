"""Arithmetic the model writes and Python computes: a small safe evaluator for expressions such as
`(1,092 - 823) / 823 * 100`. Models copy numbers well and compute them badly (issue 34), so the
calculator asks for the expression and computes it here.

Only numbers, + - * /, unary minus and parentheses are read (Python's `ast` parses; nothing is
`eval`ed); thousands separators, currency signs and a trailing `%` on a number are understood; an
expression is at most MAX_CHARS long with at most MAX_NODES parts, and every value stays below
MAX_VALUE, so no input can make it slow or large. Hand-written: the stack has no arithmetic-only
evaluator (sympy and numexpr evaluate far more than arithmetic).
"""

from __future__ import annotations

import ast
import math
import operator
import re

MAX_CHARS = 300
MAX_NODES = 64
MAX_VALUE = 1e15

_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}\b)")  # 1,345,000 -> 1345000
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")  # 12% -> (12/100)
_CURRENCY = re.compile(r"[$€£¥]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class NotArithmetic(ValueError):
    """An expression that is not plain arithmetic, too long, or not computable (division by zero)."""


def _plain(expression: str) -> str:
    text = _CURRENCY.sub("", expression.replace("−", "-").replace("×", "*").replace("÷", "/"))
    return _PERCENT.sub(r"(\1/100)", _GROUPED.sub("", text)).strip()


def operands(expression: str) -> list[str]:
    """The numbers an expression uses, as written without separators ("1,092" -> "1092")."""
    return _NUMBER.findall(_CURRENCY.sub("", _GROUPED.sub("", expression)))


def evaluate(expression: str) -> float:
    """The value of an arithmetic expression; NotArithmetic for anything else."""
    if len(expression) > MAX_CHARS:
        raise NotArithmetic(f"the expression is longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(_plain(expression), mode="eval")
    except SyntaxError as e:
        raise NotArithmetic(f"not an arithmetic expression: {expression[:80]!r}") from e
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise NotArithmetic(f"the expression has more than {MAX_NODES} parts")
    value = _value(tree.body)
    if not math.isfinite(value) or abs(value) > MAX_VALUE:
        raise NotArithmetic("the result is out of range")
    return value


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise NotArithmetic("division by zero")
        result = _OPERATORS[type(node.op)](left, right)
        if not math.isfinite(result) or abs(result) > MAX_VALUE:
            raise NotArithmetic("a value is out of range")
        return result
    raise NotArithmetic(f"only numbers, + - * / and parentheses are computed, not {type(node).__name__}")


def formatted(value: float) -> str:
    """A result as TAT-QA writes one: at most two decimals, no thousands separator ("40695", "32.69")."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
