"""A request body's shape read from its bytes before it is parsed (longqa/http/limits.py `json_shape_problem`): too
many objects and arrays, or nested too deep, with brackets inside strings (escaped quotes included) left out."""

from __future__ import annotations

import json

from longqa.http.limits import json_shape_problem


def test_many_empty_objects_are_refused_before_parsing():
    raw = b'{"question": "x", "texts": [' + b",".join([b"{}"] * 100_001) + b"]}"
    assert json_shape_problem(raw) == "the body holds 100,003 objects and arrays; at most 100,000"
    assert json_shape_problem(raw, containers=200_000) is None


def test_depth_counts_structure_only():
    assert json_shape_problem(b"[" * 401 + b"]" * 401) == "the body nests deeper than 400 levels"
    assert json_shape_problem(b"[" * 400 + b"]" * 400) is None
    in_strings = json.dumps({"question": "[{" * 3000, "quoted": 'a \\" [[[ " {{{', "texts": [["x"]]}).encode()
    assert json_shape_problem(in_strings) is None
    assert json_shape_problem(json.dumps({"a": {"b": [1, 2, {"c": []}]}}).encode()) is None
    assert json_shape_problem(b"") is None
