"""The grounding check's words on gold answers, no model (llm/grounding.py's lexical check): each HotpotQA and MuSiQue
question's gold answer over its own supporting paragraphs, where a right answer should never be judged unsupported,
and over the next item's supporting paragraphs (a planted mismatch), where it should never be judged supported.
"with countries" is the check as it is; "without" leaves out a country's other names (llm/countries.py), so the two
columns show what reading "American" as "United States" changes. Every gold answer judged unsupported over its own
paragraphs is listed.

    .venv/bin/python bench/gold_grounding.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals.long_contexts import shared_data_dir  # noqa: E402
from longqa.llm import grounding  # noqa: E402

Item = tuple[str, str, str, list[str]]  # id, question, gold answer, supporting paragraphs


def musique(data: Path) -> Iterator[Item]:
    for item in json.loads((data / "musique_a.json").read_text()):
        support = [p["title"] + "\n" + p["paragraph_text"] for p in item["paragraphs"] if p["is_supporting"]]
        yield item["id"], item["question"], item["answer"], support


def hotpotqa(path: Path) -> Iterator[Item]:
    for line in path.read_text().splitlines():
        item = json.loads(line)
        titles = set(item["supporting_facts"]["title"])
        context = zip(item["context"]["title"], item["context"]["sentences"], strict=True)
        yield item["id"], item["question"], item["answer"], [t + "\n" + "".join(s) for t, s in context if t in titles]


def verdicts(items: list[Item], shift: int) -> tuple[Counter, list[str]]:
    """The check's verdicts on each gold answer over the supporting paragraphs of the item `shift` places on."""
    counts: Counter = Counter()
    unsupported = []
    for i, (item_id, question, answer, _) in enumerate(items):
        support = items[(i + shift) % len(items)][3]
        found = grounding.lexical_support(answer, support, question)
        counts[found.verdict] += 1
        if found.verdict == "unsupported" and not shift:
            unsupported.append(f"{item_id}: {answer!r} (missing {', '.join(found.missing)})")
    return counts, unsupported


def main() -> None:
    data = shared_data_dir()
    sets = {
        "hotpotqa": [*hotpotqa(data / "hotpotqa_a.jsonl"), *hotpotqa(data / "hotpotqa_b.jsonl")],
        "musique": list(musique(data)),
    }
    rows, listed = [], []
    for name, items in sets.items():
        for shift, pairing in ((0, "its own paragraphs"), (1, "the next item's (planted)")):
            cells = []
            for countries in (True, False):
                with mock.patch.object(grounding, "country_words", grounding.country_words if countries else set):
                    counts, unsupported = verdicts(items, shift)
                cells.append(f"{counts['supported']} / {counts['unsure']} / {counts['unsupported']}")
                listed += [f"- {name}, {'with' if countries else 'without'} countries: {u}" for u in unsupported]
            rows.append([name, pairing, len(items), *cells])
    headers = ["set", "gold answer over", "n", "with countries: supported / unsure / unsupported", "without"]
    print(md_table(headers, rows))
    print("\nGold answers judged unsupported by their own supporting paragraphs:")
    print("\n".join(listed) or "- none")


if __name__ == "__main__":
    main()
