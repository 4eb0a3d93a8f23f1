"""Whether two both are one kind, read from the sentences introducing each (llm/shared_attribute.py), against the
gold answers, no model: every HotpotQA question of the shared data it reads as "Are A and B both D?", answered from
the item's own paragraphs; how many it decides ("yes"; it never decides "no") and how many of those the gold agrees
with, every disagreement listed with the sentences read; the gold's own yes/no split of the questions read. Then how
many questions of the other shared sets (MuSiQue, TAT-QA, papers) it would read as one at all.

    python bench/shared_description.py [--data-dir DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.date_comparison import hotpotqa_passages, items_read, report  # noqa: E402
from longqa.llm.shared_attribute import asked, shared  # noqa: E402


def hotpotqa_rows(path: Path) -> tuple[list, list]:
    """([split, read, gold yes among them, decided, agree with gold], the disagreements) for one HotpotQA file."""
    n = gold_yes = decided = agree = 0
    wrong = []
    for item in items_read(path, asked):
        n += 1
        gold = str(item["answer"]).strip().lower()
        gold_yes += gold == "yes"
        found = shared(item["question"], hotpotqa_passages(item))
        if found is None:
            continue
        decided += 1
        if gold == found.answer:
            agree += 1
        else:
            wrong.append([path.stem, item["question"], item["answer"], found.answer, found.expression()])
    return [path.stem, n, gold_yes, decided, agree], wrong


def main(argv: list[str] | None = None) -> int:
    read_as = "read as 'both D?'"
    heads = (
        ["set", read_as, "gold yes", "decided (yes)", "agree with gold"],
        ["set", "question", "gold", "answer", "sentences read"],
    )
    return report(argv, __doc__, hotpotqa_rows, heads, read_as, asked)


if __name__ == "__main__":
    raise SystemExit(main())
