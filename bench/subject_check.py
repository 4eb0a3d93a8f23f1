"""The subject check without a model (retrieval/search/mentions.py): how many answerable questions it would decline,
and how many planted unanswerable ones (each question over another item's document) it catches, with and without
the form words (the computation and the document's form: "percentage change ... between", "the table provide
information").

The vocabulary is each item's own context as BM25 tokens (the library's words, as the graph reads them). Data: the
shared sets converted as `longqa convert` does, a seeded sample per set; planted items as `--unanswerable` makes them.

    .venv/bin/python bench/subject_check.py [--n 150] [--seed 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import md_table, offline_env, whole_number_options  # noqa: E402

offline_env()

from longqa.evals.converters import convert, unanswerable  # noqa: E402
from longqa.retrieval.bm25 import bm25_tokens  # noqa: E402
from longqa.retrieval.search.mentions import FORM_WORDS, Vocabulary, unmentioned  # noqa: E402

SETS = ("hotpotqa", "musique", "tatqa", "papers")


def flagged(records: list[dict], form_words: frozenset[str]) -> int:
    """How many of the records' questions name something their own context never says."""
    vocabularies: dict[int, Vocabulary] = {}
    count = 0
    for r in records:
        key = hash(r["context"])
        vocabulary = vocabularies.get(key) or vocabularies.setdefault(key, Vocabulary(bm25_tokens(r["context"])))
        count += bool(unmentioned(r["input"], vocabulary, form_words))
    return count


def main() -> int:
    args = whole_number_options(__doc__, n=150, seed=5)
    rows = []
    for name in SETS:
        answerable = convert(name, args.n, args.seed)
        planted = unanswerable(answerable)
        for label, words in (("without form words (before)", frozenset()), ("with form words (after)", FORM_WORDS)):
            a, p = flagged(answerable, words), flagged(planted, words)
            rows.append(
                [
                    name,
                    label,
                    f"{a} / {len(answerable)} ({100 * a / len(answerable):.1f}%)",
                    f"{p} / {len(planted)} ({100 * p / max(1, len(planted)):.1f}%)",
                ]
            )
    print(f"subject check, seed {args.seed}, n = {args.n} per set (no model)\n")
    print(md_table(["set", "check", "answerable declined", "planted unanswerable caught"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
