"""bench/date_comparison.py on a small made-up copy of the shared data's shapes: what it reads as which-came-first,
decides and agrees with, the disagreement listed with its dates, and the other sets counted."""

from __future__ import annotations

from pathlib import Path

from bench.date_comparison import main
from tests.shared_shapes import hotpot, write_shared


def test_decided_agreeing_and_disagreeing_items_are_counted(tmp_path: Path, capsys) -> None:
    bios = {"Tomas Reyes": "Tomas Reyes (1 February 1914) was a director.", "Ilse Varga": "Ilse Varga (born 1963)."}
    lines = [
        hotpot("Who was born first, Tomas Reyes or Ilse Varga?", "Tomas Reyes", bios),
        hotpot("Who is younger, Tomas Reyes or Ilse Varga?", "Tomas Reyes", bios),  # a gold the dates contradict
        hotpot("Who was born first, Tomas Reyes or Ada Byron?", "Ada Byron", bios),  # undated: undecided
        hotpot("Who directed Harbour Lights?", "Tomas Reyes", bios),  # not a comparison
    ]
    write_shared(tmp_path, lines, [lines[0]], "Who was born first, A or B?")
    assert main(["--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| hotpotqa_a | 3 | 2 | 1 |" in out and "| hotpotqa_b | 1 | 1 | 1 |" in out
    assert "Disagreements: 1" in out
    assert (
        "| Who is younger, Tomas Reyes or Ilse Varga? | Tomas Reyes | Ilse Varga | Tomas Reyes (1 February 1914)" in out
    )
    assert "| musique_a | 1 | 1 |" in out and "| tatqa_dev | 1 | 0 |" in out and "| papers_qa | 1 | 0 |" in out
