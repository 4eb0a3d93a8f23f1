"""Which of two came first, read from the dates (llm/comparison.py), against the gold answers, no model: every
HotpotQA question of the shared data it reads as a which-came-first question, answered from the item's own
paragraphs; how many it decides and how many of those agree with the gold (token F1 >= 0.5); every disagreement
listed with the dates read. Then how many questions of the other shared sets (MuSiQue, TAT-QA, papers) it would
read as one at all (none should be).

    python bench/date_comparison.py [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals.long_contexts import shared_data_dir  # noqa: E402
from longqa.evals.metrics import f1_score  # noqa: E402
from longqa.llm.comparison import asked, compared  # noqa: E402

AGREES_F1 = 0.5


def items_read(path: Path, asked: Callable[[str], object]) -> Iterator[dict]:
    """The items of one HotpotQA file whose question `asked` reads (shared with bench/shared_description.py)."""
    for line in path.read_text("utf-8").splitlines():
        item = json.loads(line)
        if asked(item["question"]):
            yield item


def hotpotqa_rows(path: Path) -> tuple[list, list]:
    """([split, asked, decided, agree with gold], the disagreements) for one HotpotQA file."""
    n = decided = agree = 0
    wrong = []
    for item in items_read(path, asked):
        n += 1
        found = compared(item["question"], hotpotqa_passages(item))
        if found is None:
            continue
        decided += 1
        if f1_score(found.answer, [item["answer"]]) >= AGREES_F1:
            agree += 1
        else:
            wrong.append([path.stem, item["question"], item["answer"], found.answer, found.expression()])
    return [path.stem, n, decided, agree], wrong


def hotpotqa_passages(item: dict) -> list[dict]:
    """A HotpotQA item's paragraphs as the graph's evidence writes them ("Passage 3:\nTitle\ntext"), ids E1...."""
    titles, sentences = item["context"]["title"], item["context"]["sentences"]
    return [
        {"id": f"E{i}", "text": f"Passage {i}:\n{t}\n" + "".join(s)}
        for i, (t, s) in enumerate(zip(titles, sentences, strict=True), 1)
    ]


def other_questions(data: Path, asked: Callable[[str], object] = asked) -> list[list]:
    """[set, questions, read by `asked`] for the shared sets that are not HotpotQA."""
    rows = []
    musique = json.loads((data / "musique_a.json").read_text("utf-8"))
    items = musique if isinstance(musique, list) else next(iter(musique.values()))
    rows.append(["musique_a", len(items), sum(bool(asked(i["question"])) for i in items)])
    tatqa = [
        q["question"] for doc in json.loads((data / "tatqa_dev.json").read_text("utf-8")) for q in doc["questions"]
    ]
    rows.append(["tatqa_dev", len(tatqa), sum(bool(asked(q)) for q in tatqa)])
    papers = [
        q
        for line in (data / "papers_qa.jsonl").read_text("utf-8").splitlines()
        for q in json.loads(line)["instructions"]
    ]
    rows.append(["papers_qa", len(papers), sum(bool(asked(q)) for q in papers)])
    return rows


def report(
    argv: list[str] | None,
    description: str,
    rows_of: Callable[[Path], tuple[list, list]],
    heads: tuple[list[str], list[str]],
    read_as: str,
    asked: Callable[[str], object],
) -> int:
    """The bench's printout, shared with bench/shared_description.py: `rows_of` over both HotpotQA files (`heads`: its
    row's and a disagreement's columns), the disagreements, then the other sets' questions `asked` reads."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="the shared data (default: ../shared/data)")
    args = parser.parse_args(argv)
    data = shared_data_dir(args.data_dir)
    rows, wrong = [], []
    for name in ("hotpotqa_a.jsonl", "hotpotqa_b.jsonl"):
        row, disagreements = rows_of(data / name)
        rows.append(row)
        wrong += disagreements
    print(md_table(heads[0], rows))
    print(f"\nDisagreements: {len(wrong)}\n")
    if wrong:
        print(md_table(heads[1], wrong))
    print()
    print(md_table(["set", "questions", read_as], other_questions(data, asked)))
    return 0


def main(argv: list[str] | None = None) -> int:
    read_as = "read as which-came-first"
    heads = (
        ["set", read_as, "decided", f"agree with gold (F1 >= {AGREES_F1})"],
        ["set", "question", "gold", "answer", "dates read"],
    )
    return report(argv, __doc__, hotpotqa_rows, heads, read_as, asked)


if __name__ == "__main__":
    raise SystemExit(main())
