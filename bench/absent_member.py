"""A "No" read from what the documents leave out (llm/absent_member.py), no model: over every question of the shared
sets, asked of its own document (answerable) and of the next item's (planted unanswerable, as `--unanswerable` makes
them), how many the rule would answer "No" if the model replied "No" — where the question asks whether a name
belongs to a set, the documents never say that name but say another of the question's, and a sentence of the
document lists the set whole. An upper bound: the whole document is read as one passage, where the graph reads only
the passages retrieval found. For the answerable ones fired on, the gold's own answer; every one is listed.

    .venv/bin/python bench/absent_member.py [--n 100000] [--seed 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table, whole_number_options  # noqa: E402
from longqa.evals.converters import convert, unanswerable  # noqa: E402
from longqa.llm.absent_member import absent_member, membership  # noqa: E402
from longqa.retrieval.bm25 import bm25_tokens  # noqa: E402
from longqa.retrieval.search.mentions import Vocabulary, question_names, unmentioned  # noqa: E402

SETS = ("hotpotqa", "musique", "tatqa", "papers")


def fired(record: dict, vocabularies: dict[int, Vocabulary]) -> str | None:
    """The rule's reason when it would keep a "No" to this record's question over its context, else None."""
    question = record["input"]
    if not membership(question):
        return None
    key = hash(record["context"])
    vocabulary = vocabularies.get(key) or vocabularies.setdefault(key, Vocabulary(bm25_tokens(record["context"])))
    missing = unmentioned(question, vocabulary)
    said = [n for n in question_names(question) if n not in missing]
    found = absent_member(question, "No", missing, said, [{"id": "document", "text": record["context"]}])
    return found.why if found else None


def main() -> int:
    args = whole_number_options(__doc__, n=100_000, seed=5)
    rows, listed = [], []
    for name in SETS:
        answerable = convert(name, args.n, args.seed)
        vocabularies: dict[int, Vocabulary] = {}
        for side, records in (("answerable", answerable), ("planted unanswerable", unanswerable(answerable))):
            asked = [r for r in records if membership(r["input"])]
            kept = [(r, why) for r in asked for why in [fired(r, vocabularies)] if why]
            rows.append([name, side, len(records), len(asked), len(kept)])
            listed += [[name, side, r["input"], "; ".join(r["answers"])[:60], why[:160]] for r, why in kept]
    print(f'A "No" read from an absent member, seed {args.seed}, every item (no model; whole documents)\n')
    print(md_table(["set", "questions", "n", "asked as set membership", "a No would be kept"], rows))
    if listed:
        print("\n" + md_table(["set", "side", "question", "gold", "why"], listed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
