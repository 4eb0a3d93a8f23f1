"""The grounding check's words on gold answers, no model (llm/grounding.py's lexical check): each HotpotQA and MuSiQue
question's gold answer over its own supporting paragraphs, where a right answer should never be judged unsupported,
and over the next item's supporting paragraphs (a planted mismatch), where it should never be judged supported.
"with countries" is the check as it is; "without" leaves out a country's other names (llm/countries.py), so the two
columns show what reading "American" as "United States" changes. Every gold answer judged unsupported over its own
paragraphs is listed.

    .venv/bin/python bench/gold_grounding.py
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Literal
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table  # noqa: E402
from longqa.evals import long_contexts as lc  # noqa: E402
from longqa.llm import grounding  # noqa: E402

Item = tuple[str, str, str, list[str]]  # id, question, gold answer, supporting paragraphs


def musique() -> Iterator[Item]:
    for raw in lc.load_musique():
        supporting = {p["title"] for p in raw["paragraphs"] if p["is_supporting"]}
        paragraphs = [f"{title}\n{text}" for title, text in lc.musique_paragraphs(raw) if title in supporting]
        yield raw["id"], raw["question"], raw["answer"], paragraphs


def hotpotqa(split: Literal["a", "b"]) -> Iterator[Item]:
    for raw in lc.load_hotpotqa(split):
        supporting = set(raw["supporting_facts"]["title"])
        paragraphs = [f"{title}\n{text}" for title, text in lc.hotpotqa_paragraphs(raw) if title in supporting]
        yield raw["id"], raw["question"], raw["answer"], paragraphs


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
    sets = {"hotpotqa": [*hotpotqa("a"), *hotpotqa("b")], "musique": list(musique())}
    rows, listed = [], []
    for name, items in sets.items():
        for shift, pairing in ((0, "its own paragraphs"), (1, "the next item's (planted)")):
            cells = []
            for countries in (True, False):
                names = grounding.country_words if countries else lambda terms: set()
                with mock.patch.object(grounding, "country_words", names):
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
