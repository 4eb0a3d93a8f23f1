"""Small LongBench files and a shared index home for the evaluation tests (tests/test_eval_*.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

FACTS = [
    (
        "Who keeps the lighthouse at Port Verrin?",
        "Amelie Kortsen",
        "The lighthouse keeper of Port Verrin is Amelie Kortsen.",
    ),
    (
        "Which village was the ferry captain born in?",
        "Haldane",
        "The ferry captain was born in the mountain village of Haldane.",
    ),
    ("How long is the Osterby Bridge?", "615 metres", "The Osterby Bridge spans 615 metres across the canal."),
    ("When did the Brennvik quarry close?", "1987", "The granite quarry at Brennvik closed in 1987 after the flood."),
]

_SUBJECTS = ["The council", "The harbour office", "A survey team", "The planning board", "An inspector"]
_VERBS = ["reviewed", "approved", "postponed", "discussed", "funded"]
_OBJECTS = ["the drainage scheme", "the school roof", "the cycle lanes", "the market hall", "the tram depot"]


def tiny_context(i: int, words: int = 180) -> str:
    """About `words` words in "Passage N:" paragraphs, with FACTS[i]'s sentence in one of them."""
    rng = random.Random(i)
    passages, count = [], 0
    while count < words:
        sentences = [
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} in year {rng.randint(1, 99)}."
            for _ in range(4)
        ]
        if len(passages) == 1:
            sentences.insert(2, FACTS[i % len(FACTS)][2])
        text = " ".join(sentences)
        passages.append(text)
        count += len(text.split())
    return "\n\n".join(f"Passage {n}:\nRecord {n}\n{t}" for n, t in enumerate(passages, 1))


def tiny_record(i: int, **extra) -> dict:
    question, answer, fact = FACTS[i % len(FACTS)]
    context = tiny_context(i)
    return {
        "_id": f"q{i}",
        "input": question,
        "context": context,
        "answers": [answer],
        "length": len(context.split()),
        "dataset": "tiny",
        "supporting": [fact],
        **extra,
    }


def tiny_item(i: int, **extra):
    """`tiny_record(i)` as the harness's EvalItem; `extra` joins its supporting texts."""
    from longqa.evals.longbench import EvalItem

    r = tiny_record(i)
    return EvalItem(
        id=r["_id"],
        question=r["input"],
        context=r["context"],
        answers=r["answers"],
        dataset=r["dataset"],
        length=r["length"],
        extra={"supporting": r["supporting"], **extra},
    )


def write_tiny(path: Path, n: int = 2) -> Path:
    path.write_text("".join(json.dumps(tiny_record(i)) + "\n" for i in range(n)), "utf-8")
    return path


_HOME: list[Path] = []


def shared_eval_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index home for every evaluation test that runs the graph (each tiny document is
    embedded once per granularity for the whole session); each module's `eval_home` fixture
    returns it."""
    if not _HOME:
        _HOME.append(tmp_path_factory.mktemp("eval-home"))
    return _HOME[0]
