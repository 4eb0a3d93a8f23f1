"""bench/shared_description.py on a small made-up copy of the shared data's shapes: what it reads as "both D?",
decides and agrees with, a disagreement listed with the sentences read, and the other sets counted."""

from __future__ import annotations

from pathlib import Path

from bench.shared_description import main
from tests.shared_shapes import hotpot, write_shared


def test_decided_agreeing_and_disagreeing_items_are_counted(tmp_path: Path, capsys) -> None:
    bios = {
        "Tomas Reyes": "Tomas Reyes (1914 – 1994) was a Chilean film director.",
        "Ilse Varga": "Ilse Varga (born 1963) is a Hungarian director and editor.",
        "Ola Brandt": "Ola Brandt is a Norwegian editor.",
    }
    lines = [
        hotpot("Were Tomas Reyes and Ilse Varga both directors?", "yes", bios),
        hotpot("Were Tomas Reyes and Ilse Varga both directors?", "no", bios),  # a gold the sentences contradict
        hotpot("Were Tomas Reyes and Ola Brandt both directors?", "no", bios),  # a word left out: undecided
        hotpot("Who directed Harbour Lights?", "Tomas Reyes", bios),  # not read
    ]
    write_shared(tmp_path, lines, [lines[0]], "Are A Band and B Band both bands?")
    assert main(["--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| hotpotqa_a | 3 | 1 | 2 | 1 |" in out and "| hotpotqa_b | 1 | 1 | 1 | 1 |" in out
    assert "Disagreements: 1" in out
    assert '| Were Tomas Reyes and Ilse Varga both directors? | no | yes | Tomas Reyes: "Tomas Reyes (1914' in out
    assert "| musique_a | 1 | 1 |" in out and "| tatqa_dev | 1 | 0 |" in out and "| papers_qa | 1 | 0 |" in out
