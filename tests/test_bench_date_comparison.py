"""bench/date_comparison.py on a small made-up copy of the shared data's shapes: what it reads as which-came-first,
decides and agrees with, the disagreement listed with its dates, and the other sets counted."""

from __future__ import annotations

import json
from pathlib import Path

from bench.date_comparison import main


def _hotpot(question: str, answer: str, paragraphs: dict[str, str]) -> str:
    context = {"title": list(paragraphs), "sentences": [[text] for text in paragraphs.values()]}
    return json.dumps({"question": question, "answer": answer, "context": context})


def test_decided_agreeing_and_disagreeing_items_are_counted(tmp_path: Path, capsys) -> None:
    bios = {"Tomas Reyes": "Tomas Reyes (1 February 1914) was a director.", "Ilse Varga": "Ilse Varga (born 1963)."}
    lines = [
        _hotpot("Who was born first, Tomas Reyes or Ilse Varga?", "Tomas Reyes", bios),
        _hotpot("Who is younger, Tomas Reyes or Ilse Varga?", "Tomas Reyes", bios),  # a gold the dates contradict
        _hotpot("Who was born first, Tomas Reyes or Ada Byron?", "Ada Byron", bios),  # undated: undecided
        _hotpot("Who directed Harbour Lights?", "Tomas Reyes", bios),  # not a comparison
    ]
    (tmp_path / "hotpotqa_a.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (tmp_path / "hotpotqa_b.jsonl").write_text(lines[0] + "\n", "utf-8")
    (tmp_path / "musique_a.json").write_text(json.dumps([{"question": "Who was born first, A or B?"}]), "utf-8")
    tatqa = [{"questions": [{"question": "What was the revenue in 2019?"}]}]
    (tmp_path / "tatqa_dev.json").write_text(json.dumps(tatqa), "utf-8")
    (tmp_path / "papers_qa.jsonl").write_text(
        json.dumps({"instructions": ["What baselines are used?"]}) + "\n", "utf-8"
    )
    assert main(["--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| hotpotqa_a | 3 | 2 | 1 |" in out and "| hotpotqa_b | 1 | 1 | 1 |" in out
    assert "Disagreements: 1" in out
    assert (
        "| Who is younger, Tomas Reyes or Ilse Varga? | Tomas Reyes | Ilse Varga | Tomas Reyes (1 February 1914)" in out
    )
    assert "| musique_a | 1 | 1 |" in out and "| tatqa_dev | 1 | 0 |" in out and "| papers_qa | 1 | 0 |" in out
