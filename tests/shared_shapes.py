"""Made-up files in the shapes of the shared data (../shared/data) for the benches that read it: HotpotQA's two
splits, MuSiQue, TAT-QA and the papers (tests/test_bench_date_comparison.py, tests/test_bench_shared_description.py)."""

from __future__ import annotations

import json
from pathlib import Path


def hotpot(question: str, answer: str, paragraphs: dict[str, str]) -> str:
    """One HotpotQA line: its paragraphs by title, one sentence each."""
    context = {"title": list(paragraphs), "sentences": [[text] for text in paragraphs.values()]}
    return json.dumps({"question": question, "answer": answer, "context": context})


def write_shared(folder: Path, split_a: list[str], split_b: list[str], musique_question: str) -> None:
    """The two HotpotQA splits' lines, one MuSiQue question, and a TAT-QA and a papers question neither bench reads."""
    (folder / "hotpotqa_a.jsonl").write_text("\n".join(split_a) + "\n", "utf-8")
    (folder / "hotpotqa_b.jsonl").write_text("\n".join(split_b) + "\n", "utf-8")
    (folder / "musique_a.json").write_text(json.dumps([{"question": musique_question}]), "utf-8")
    tatqa = [{"questions": [{"question": "What was the revenue in 2019?"}]}]
    (folder / "tatqa_dev.json").write_text(json.dumps(tatqa), "utf-8")
    (folder / "papers_qa.jsonl").write_text(json.dumps({"instructions": ["What baselines are used?"]}) + "\n", "utf-8")
