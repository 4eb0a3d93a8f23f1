"""Converters from the shared QA data (../shared/data, see its README) to LongBench jsonl, so that
every dataset reaches `longqa eval` through the same reader (`evals.longbench`).

- HotpotQA / MuSiQue: LongBench-style long contexts (about 9,000 / 11,000 words of shuffled
  "Passage N:" paragraphs, seeded) built by `evals.long_contexts`; `supporting` holds the gold
  supporting sentences (HotpotQA) or paragraphs (MuSiQue), `gold_paragraphs` the whole gold
  paragraphs, `type` the dataset's own question type.
- TAT-QA: one record per question; the document is the context's table rendered as a markdown pipe
  table followed by its paragraphs (in their `order`). Answers: a span answer's spans, a
  multi-span answer's spans joined by ", " (all are needed), a number as written (and with its
  scale word, e.g. "12.6 million", as a second gold). `answer_type`, `answer_from`, `derivation`,
  `scale` and `answer_spans` are kept; `supporting` holds the paragraphs named by `rel_paragraphs`
  (the table is not included: TAT-QA does not mark which cells an answer uses).
- papers_qa.jsonl (Qasper via LEval): one record per question with the whole paper as the
  context; the reference output is the answer. The same question asked twice of one paper (several
  Qasper annotators, or a paper LEval's file holds twice) becomes one record whose answers are all the references.

`label` is OkraLong's question class where the annotations give it (data README): HotpotQA bridge →
multi-bridge, comparison → multi-source; MuSiQue → multi-bridge; TAT-QA arithmetic/count →
arithmetic, span/multi-span → extractive. Papers questions carry no label.

Sampling (`n`, `seed`) is `evals.long_contexts.select`: the first n of a seeded permutation, so a
smaller n is a prefix of a larger one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from . import long_contexts as lc
from .longbench import record
from .metrics import normalize_answer

HOTPOTQA_LABELS = {"bridge": "multi-bridge", "comparison": "multi-source"}
TATQA_LABELS = {"arithmetic": "arithmetic", "count": "arithmetic", "span": "extractive", "multi-span": "extractive"}
DATASETS = ("hotpotqa", "musique", "tatqa", "papers")


def _long_item_record(item: lc.LongItem, label: str) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "supporting": item.supporting,
        "gold_paragraphs": item.gold_paragraphs,
        "type": item.type,
        "label": label,
    }
    if item.answer_aliases:
        extra["answer_aliases"] = item.answer_aliases
    if item.oracle_queries:  # the decomposition oracle's gold queries (evals/oracle.py)
        extra["oracle"] = {"workflow": item.oracle_workflow, "queries": item.oracle_queries}
    return record(item.id, item.question, item.context, item.answers, item.dataset, **extra)


def convert_hotpotqa(
    n: int | None = None,
    seed: int = 0,
    split: Literal["a", "b"] = "a",
    target_words: int = lc.HOTPOTQA_WORDS,
    data_dir: str | Path | None = None,
) -> list[dict]:
    """HotpotQA questions over LongBench-style long contexts (seeded), as LongBench records labelled bridge ->
    multi-bridge, comparison -> multi-source."""
    items = lc.build_hotpotqa(n, seed, split=split, target_words=target_words, data_dir=data_dir)
    return [_long_item_record(i, HOTPOTQA_LABELS.get(i.type, "")) for i in items]


def convert_musique(
    n: int | None = None, seed: int = 0, target_words: int = lc.MUSIQUE_WORDS, data_dir: str | Path | None = None
) -> list[dict]:
    """MuSiQue questions over LongBench-style long contexts (seeded), as LongBench records labelled multi-bridge."""
    items = lc.build_musique(n, seed, target_words=target_words, data_dir=data_dir)
    return [_long_item_record(i, "multi-bridge") for i in items]


# -- TAT-QA ----------------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def markdown_table(rows: list[list[Any]]) -> str:
    """A pipe table: the first row as the header (TAT-QA's first row is usually its header, blank
    cells included), short rows padded."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + "|".join(["---"] * width) + "|")
    return "\n".join(lines)


def _number(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def tatqa_answers(question: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(gold answers, spans) of one TAT-QA question."""
    answer, kind, scale = question["answer"], question["answer_type"], (question.get("scale") or "").strip()
    if isinstance(answer, list):
        spans = [" ".join(str(a).split()) for a in answer if str(a).strip()]
        if kind == "multi-span" and len(spans) > 1:
            return [", ".join(spans)], spans
        golds = spans
    else:
        spans = []
        golds = [
            _number(answer)
            if isinstance(answer, int | float) and not isinstance(answer, bool)
            else " ".join(str(answer).split())
        ]
    if scale and kind != "multi-span":
        golds = [*golds, *(f"{g} {scale}" for g in golds if not g.lower().endswith(scale.lower()))]
    return list(dict.fromkeys(g for g in golds if g)), spans


def tatqa_document(context: dict[str, Any]) -> str:
    """A TAT-QA context as one document: its table as a markdown pipe table, then its paragraphs in their order."""
    paragraphs = sorted(context.get("paragraphs") or [], key=lambda p: p.get("order", 0))
    blocks = [markdown_table(context.get("table", {}).get("table") or [])]
    blocks += [" ".join(p["text"].split()) for p in paragraphs if p.get("text", "").strip()]
    return "\n\n".join(b for b in blocks if b) + "\n"


def convert_tatqa(
    n: int | None = None, seed: int = 0, data_dir: str | Path | None = None, path: str | Path | None = None
) -> list[dict]:
    """One LongBench record per TAT-QA question over its context's document, with the answer's type, derivation,
    scale and supporting paragraphs; a seeded sample of n."""
    contexts = json.loads(Path(path or lc.shared_data_dir(data_dir) / "tatqa_dev.json").read_text("utf-8"))
    records = []
    for context in contexts:
        document = tatqa_document(context)
        by_order = {str(p.get("order")): " ".join(p["text"].split()) for p in context.get("paragraphs") or []}
        for q in context.get("questions") or []:
            answers, spans = tatqa_answers(q)
            supporting = [by_order[str(o)] for o in q.get("rel_paragraphs") or [] if str(o) in by_order]
            records.append(
                record(
                    q["uid"],
                    q["question"],
                    document,
                    answers,
                    "tatqa",
                    answer_type=q["answer_type"],
                    answer_from=q.get("answer_from", ""),
                    derivation=q.get("derivation", ""),
                    scale=q.get("scale", ""),
                    answer_spans=spans,
                    supporting=supporting,
                    table_uid=context["table"].get("uid"),
                    label=TATQA_LABELS.get(q["answer_type"], ""),
                )
            )
    return lc.select(records, n, seed)


# -- papers (Qasper via LEval) ---------------------------------------------------------------------


def convert_papers(
    n: int | None = None, seed: int = 0, data_dir: str | Path | None = None, path: str | Path | None = None
) -> list[dict]:
    """One LongBench record per distinct question of each distinct paper (Qasper via LEval), the whole paper as
    context and every reference as a gold answer; a seeded sample of n. LEval's file holds some papers more than
    once: a repeat's questions join the first copy's (ids name the first copy)."""
    path = Path(path or lc.shared_data_dir(data_dir) / "papers_qa.jsonl")
    with path.open(encoding="utf-8") as f:
        papers = [json.loads(line) for line in f if line.strip()]
    first: dict[str, int] = {}  # a paper's text -> the index of its first copy
    answers: dict[int, dict[str, list[str]]] = {}
    for p, paper in enumerate(papers):
        questions = answers.setdefault(first.setdefault(paper["input"], p), {})
        for question, output in zip(paper["instructions"], paper["outputs"], strict=True):
            questions.setdefault(" ".join(question.split()), []).append(" ".join(str(output).split()))
    records = []
    for p, questions in answers.items():
        paper = papers[p]
        for q, (question, outs) in enumerate(questions.items()):
            records.append(
                record(
                    f"papers-{p}-{q}",
                    question,
                    paper["input"],
                    list(dict.fromkeys(outs)),
                    "papers",
                    paper=p,
                    source=paper.get("source", ""),
                    metric=paper.get("evaluation", ""),
                )
            )
    return lc.select(records, n, seed)


def unanswerable(records: list[dict]) -> list[dict]:
    """Each question asked over the next record's document (the last over the first), where none of
    its gold answers occurs in that document: a question the document cannot answer. The gold answer
    becomes "unanswerable"; the record keeps `original_answers` and `unanswerable: true`."""
    out = []
    for i, asked in enumerate(records):
        other = records[(i + 1) % len(records)]
        if other["_id"] == asked["_id"] or any(
            normalize_answer(a) and normalize_answer(a) in normalize_answer(other["context"]) for a in asked["answers"]
        ):
            continue
        out.append(
            {
                **{k: v for k, v in other.items() if k not in ("_id", "input", "answers", "supporting")},
                "_id": f"{asked['_id']}/over/{other['_id']}",
                "input": asked["input"],
                "answers": ["unanswerable"],
                "original_answers": asked["answers"],
                "unanswerable": True,
            }
        )
    return out


def convert(
    dataset: str, n: int | None = None, seed: int = 0, data_dir: str | Path | None = None, **options: Any
) -> list[dict]:
    """Records of one shared dataset (`hotpotqa`, `musique`, `tatqa`, `papers`)."""
    if dataset == "hotpotqa":
        return convert_hotpotqa(n, seed, data_dir=data_dir, **options)
    if dataset == "musique":
        return convert_musique(n, seed, data_dir=data_dir, **options)
    if dataset == "tatqa":
        return convert_tatqa(n, seed, data_dir=data_dir, **options)
    if dataset == "papers":
        return convert_papers(n, seed, data_dir=data_dir, **options)
    raise ValueError(f"unknown dataset {dataset!r}: use one of {', '.join(DATASETS)}")
