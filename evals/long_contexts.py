"""LongBench-style long contexts from the shared HotpotQA and MuSiQue items.

Construction (as LongBench builds its hotpotqa / musique sets, but seeded and with the gold
evidence kept): an item's own paragraphs (HotpotQA: its 10 distractor-setting paragraphs, 2 of
them gold; MuSiQue: its 20 paragraphs) are joined by paragraphs drawn at random from the *other*
items of the same file until the context holds about `target_words` words (9,000 for HotpotQA,
11,000 for MuSiQue, counting title + text + the "Passage N:" label). A distractor is skipped when
it repeats a paragraph already present (HotpotQA: same title, i.e. the same Wikipedia lead;
MuSiQue: same text). The paragraphs are shuffled and written as

    Passage 1:
    <title>
    <text>

    Passage 2:
    ...

Every random choice comes from `random.Random(f"{seed}:{item id}")`, so an item's context does not
depend on which other items are built or in what order. Whitespace inside a paragraph is collapsed
to single spaces, so paragraphs never contain blank lines. Gold evidence: HotpotQA's `supporting`
lists the sentences named by `supporting_facts` (an out-of-range sent_id, a known HotpotQA data
flaw, is skipped); MuSiQue's lists the texts of the `is_supporting` paragraphs. `gold_paragraphs`
holds the whole gold paragraphs (for MuSiQue the same texts as `supporting`).

The data directory is the `data_dir` argument, else $LONGQA_SHARED_DATA, else <repo>/../shared/data.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

HOTPOTQA_WORDS = 9_000
MUSIQUE_WORDS = 11_000

Paragraph = tuple[str, str]  # (title, text)


@dataclass(frozen=True)
class LongItem:
    """One HotpotQA or MuSiQue question over its long context, with its gold answers, supporting texts and gold
    paragraphs."""

    id: str
    dataset: str
    question: str
    answers: list[str]  # MuSiQue: the answer, then its aliases
    type: str  # HotpotQA: bridge | comparison; MuSiQue: 2hop | 3hop | 4hop
    context: str
    supporting: list[str]
    gold_paragraphs: list[str]
    answer_aliases: list[str] = field(default_factory=list)
    n_words: int = 0
    # the decomposition oracle's gold queries (evals/oracle.py): MuSiQue's decomposition steps with the
    # answers of earlier hops substituted ("stepwise"); a HotpotQA comparison's two entities ("split")
    oracle_workflow: str | None = None
    oracle_queries: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The item's fields as a dict."""
        return asdict(self)


def shared_data_dir(data_dir: str | Path | None = None) -> Path:
    """`data_dir`, else $LONGQA_SHARED_DATA, else <repo>/../shared/data."""
    if data_dir:
        return Path(data_dir).expanduser()
    if os.environ.get("LONGQA_SHARED_DATA"):
        return Path(os.environ["LONGQA_SHARED_DATA"]).expanduser()
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def load_hotpotqa(split: Literal["a", "b"] = "a", data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The raw records of the shared hotpotqa_<split>.jsonl."""
    path = shared_data_dir(data_dir) / f"hotpotqa_{split}.jsonl"
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_musique(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The raw records of the shared musique_a.json."""
    return json.loads((shared_data_dir(data_dir) / "musique_a.json").read_text("utf-8"))


def format_context(paragraphs: Sequence[Paragraph]) -> str:
    """Paragraphs as a LongBench context: `Passage N:`, the title and the text of each, blank lines between."""
    return "\n\n".join(f"Passage {i}:\n{title}\n{text}" for i, (title, text) in enumerate(paragraphs, 1))


def _clean(text: str) -> str:
    return " ".join(text.split())


def paragraph_words(paragraph: Paragraph) -> int:
    """Words a paragraph adds to a context (its title, its text and the `Passage N:` label)."""
    return 2 + len(paragraph[0].split()) + len(paragraph[1].split())  # 2 = "Passage N:"


def assemble(
    own: Sequence[Paragraph],
    pool: Sequence[Paragraph],
    target_words: int,
    rng: random.Random,
    key: Callable[[Paragraph], str],
) -> list[Paragraph]:
    """`own` plus distractors drawn from `pool` in random order (skipping repeats by `key`) until
    the words reach `target_words`; returned shuffled."""
    chosen = list(own)
    seen = {key(p) for p in own}
    words = sum(map(paragraph_words, own))
    for i in rng.sample(range(len(pool)), len(pool)):
        if words >= target_words:
            break
        if key(pool[i]) in seen:
            continue
        seen.add(key(pool[i]))
        chosen.append(pool[i])
        words += paragraph_words(pool[i])
    rng.shuffle(chosen)
    return chosen


def select(items: Sequence[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """The first `n` items of a seeded permutation (so a smaller n is a prefix of a larger one)."""
    order = random.Random(seed).sample(range(len(items)), len(items))
    return [items[i] for i in order[: len(items) if n is None else n]]


# -- HotpotQA --------------------------------------------------------------------------------------


def hotpotqa_paragraphs(raw: dict[str, Any]) -> list[Paragraph]:
    """A HotpotQA record's (title, text) paragraphs, sentences joined and white space folded."""
    ctx = raw["context"]
    return [
        (t, _clean(" ".join(s.strip() for s in sents))) for t, sents in zip(ctx["title"], ctx["sentences"], strict=True)
    ]


def hotpotqa_item(
    raw: dict[str, Any], pool: Sequence[Paragraph], seed: int = 0, target_words: int = HOTPOTQA_WORDS
) -> LongItem:
    """One HotpotQA item as a long context; `pool` holds the other items' paragraphs."""
    own = hotpotqa_paragraphs(raw)
    sentences = dict(zip(raw["context"]["title"], raw["context"]["sentences"], strict=True))
    facts = raw["supporting_facts"]
    supporting = [
        _clean(sentences[t][i])
        for t, i in zip(facts["title"], facts["sent_id"], strict=True)
        if t in sentences and 0 <= i < len(sentences[t])
    ]
    gold_titles = dict.fromkeys(facts["title"])
    comparison = raw["type"] == "comparison" and len(gold_titles) == 2
    paragraphs = assemble(own, pool, target_words, random.Random(f"{seed}:{raw['id']}"), key=lambda p: p[0])
    context = format_context(paragraphs)
    return LongItem(
        id=raw["id"],
        dataset="hotpotqa",
        question=raw["question"],
        answers=[raw["answer"]],
        type=raw["type"],
        context=context,
        supporting=supporting,
        gold_paragraphs=[text for title, text in own if title in gold_titles],
        n_words=len(context.split()),
        oracle_workflow="split" if comparison else None,
        oracle_queries=comparison_queries(raw["question"], list(gold_titles)) if comparison else [],
    )


def comparison_queries(question: str, entities: list[str]) -> list[str]:
    """One sub-question per compared entity: the entity, then the question without the others' names."""
    out = []
    for entity in entities:
        rest = question
        for other in entities:
            if other != entity:
                rest = re.sub(re.escape(other), " ", rest, flags=re.IGNORECASE)
        out.append(f"{entity}: {' '.join(rest.split())}")
    return out


def decomposition_queries(steps: Sequence[dict[str, Any]]) -> list[str]:
    """MuSiQue's decomposition with "#k" replaced by the answer of step k (and ">>" relations read as
    "entity relation"), i.e. the next queries a perfect step-wise reasoner would ask."""
    out: list[str] = []
    for step in steps:
        text = re.sub(
            r"#(\d+)",
            lambda m: steps[int(m.group(1)) - 1]["answer"] if int(m.group(1)) <= len(steps) else m.group(0),
            step["question"],
        )
        out.append(" ".join(text.replace(">>", " ").split()))
    return out


def _long_items(
    items: list[dict[str, Any]],
    paragraphs_of: Callable[[dict[str, Any]], list[Paragraph]],
    make_item: Callable[..., LongItem],
    n: int | None,
    seed: int,
    target_words: int,
) -> list[LongItem]:
    """`n` seeded-sampled `items` as long contexts; each one's distractors are the other items' paragraphs."""
    paragraphs = [(raw["id"], p) for raw in items for p in paragraphs_of(raw)]
    return [
        make_item(raw, [p for owner, p in paragraphs if owner != raw["id"]], seed, target_words)
        for raw in select(items, n, seed)
    ]


def build_hotpotqa(
    n: int | None = None,
    seed: int = 0,
    split: Literal["a", "b"] = "a",
    target_words: int = HOTPOTQA_WORDS,
    data_dir: str | Path | None = None,
) -> list[LongItem]:
    """`n` seeded-sampled items of hotpotqa_<split>.jsonl as long contexts (distractors from that file)."""
    return _long_items(load_hotpotqa(split, data_dir), hotpotqa_paragraphs, hotpotqa_item, n, seed, target_words)


# -- MuSiQue ---------------------------------------------------------------------------------------


def musique_paragraphs(raw: dict[str, Any]) -> list[Paragraph]:
    """A MuSiQue record's (title, text) paragraphs, white space folded."""
    return [(p["title"], _clean(p["paragraph_text"])) for p in raw["paragraphs"]]


def _hops(item_id: str) -> str:
    """'3hop1__...' -> '3hop' (the digit after 'hop' names the composition shape, not the hop count)."""
    match = re.match(r"\d+hop", item_id)
    return match.group(0) if match else item_id.split("__")[0]


def musique_item(
    raw: dict[str, Any], pool: Sequence[Paragraph], seed: int = 0, target_words: int = MUSIQUE_WORDS
) -> LongItem:
    """One MuSiQue item as a long context; `pool` holds the other items' paragraphs."""
    own = musique_paragraphs(raw)
    supporting = [_clean(p["paragraph_text"]) for p in raw["paragraphs"] if p["is_supporting"]]
    paragraphs = assemble(own, pool, target_words, random.Random(f"{seed}:{raw['id']}"), key=lambda p: p[1])
    context = format_context(paragraphs)
    aliases = [a for a in raw.get("answer_aliases", []) if a != raw["answer"]]
    return LongItem(
        id=raw["id"],
        dataset="musique",
        question=raw["question"],
        answers=list(dict.fromkeys([raw["answer"], *aliases])),
        type=_hops(raw["id"]),
        context=context,
        supporting=supporting,
        gold_paragraphs=list(supporting),
        answer_aliases=aliases,
        n_words=len(context.split()),
        oracle_workflow="stepwise" if raw.get("question_decomposition") else None,
        oracle_queries=decomposition_queries(raw.get("question_decomposition") or []),
    )


def build_musique(
    n: int | None = None, seed: int = 0, target_words: int = MUSIQUE_WORDS, data_dir: str | Path | None = None
) -> list[LongItem]:
    """`n` seeded-sampled items of musique_a.json as long contexts (distractors from that file)."""
    return _long_items(load_musique(data_dir), musique_paragraphs, musique_item, n, seed, target_words)


def build(
    dataset: Literal["hotpotqa", "musique"], n: int | None = None, seed: int = 0, data_dir: str | Path | None = None
) -> list[LongItem]:
    """The long-context items of one dataset at its LongBench length."""
    if dataset == "hotpotqa":
        return build_hotpotqa(n, seed, data_dir=data_dir)
    if dataset == "musique":
        return build_musique(n, seed, data_dir=data_dir)
    raise ValueError(f"unknown dataset {dataset!r}: use 'hotpotqa' or 'musique'")
