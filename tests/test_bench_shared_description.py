"""bench/shared_description.py on a small made-up copy of the shared data's shapes: what it reads as "both D?",
decides and agrees with, a disagreement listed with the sentences read, and the other sets counted."""

from __future__ import annotations

import json
from pathlib import Path

from bench.shared_description import main


def _hotpot(question: str, answer: str, paragraphs: dict[str, str]) -> str:
    context = {"title": list(paragraphs), "sentences": [[text] for text in paragraphs.values()]}
    return json.dumps({"question": question, "answer": answer, "context": context})


def test_decided_agreeing_and_disagreeing_items_are_counted(tmp_path: Path, capsys) -> None:
    bios = {
        "Tomas Reyes": "Tomas Reyes (1914 – 1994) was a Chilean film director.",
        "Ilse Varga": "Ilse Varga (born 1963) is a Hungarian director and editor.",
        "Ola Brandt": "Ola Brandt is a Norwegian editor.",
    }
    lines = [
        _hotpot("Were Tomas Reyes and Ilse Varga both directors?", "yes", bios),
        _hotpot("Were Tomas Reyes and Ilse Varga both directors?", "no", bios),  # a gold the sentences contradict
        _hotpot("Were Tomas Reyes and Ola Brandt both directors?", "no", bios),  # a word left out: undecided
        _hotpot("Who directed Harbour Lights?", "Tomas Reyes", bios),  # not read
    ]
    (tmp_path / "hotpotqa_a.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (tmp_path / "hotpotqa_b.jsonl").write_text(lines[0] + "\n", "utf-8")
    (tmp_path / "musique_a.json").write_text(json.dumps([{"question": "Are A Band and B Band both bands?"}]), "utf-8")
    tatqa = [{"questions": [{"question": "What was the revenue in 2019?"}]}]
    (tmp_path / "tatqa_dev.json").write_text(json.dumps(tatqa), "utf-8")
    (tmp_path / "papers_qa.jsonl").write_text(
        json.dumps({"instructions": ["What baselines are used?"]}) + "\n", "utf-8"
    )
    assert main(["--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| hotpotqa_a | 3 | 1 | 2 | 1 |" in out and "| hotpotqa_b | 1 | 1 | 1 | 1 |" in out
    assert "Disagreements: 1" in out
    assert '| Were Tomas Reyes and Ilse Varga both directors? | no | yes | Tomas Reyes: "Tomas Reyes (1914' in out
    assert "| musique_a | 1 | 1 |" in out and "| tatqa_dev | 1 | 0 |" in out and "| papers_qa | 1 | 0 |" in out
