"""The labelled set of the trained local analyzer: questions, gold labels, primary retrievals (cached).

Sources (../shared/data, see its README) and how each judgement is labelled:

question type  HotpotQA bridge -> multi-bridge, comparison -> multi-source (annotation; hotpotqa_a and _b);
               MuSiQue -> multi-bridge (annotation); MuSiQue's decomposition steps, made standalone by
               putting each referenced step's annotated answer in place of "#k" -> extractive (single-hop
               questions, each answered from one annotated paragraph; "X >> relation" steps left out;
               evaluation only, see EVAL_ONLY);
               TAT-QA arithmetic/count -> arithmetic, span/multi-span -> extractive (annotation);
               papers_qa.jsonl (Qasper) by PAPERS_RULE (rule-labelled);
               analyzer/data/hand_questions.jsonl (hand-written and hand-labelled, all five types; the only
               hand source of summarizing besides the rule-labelled papers questions).
information    retrieve the item's long context with BM25 only and with dense only (3 x 150-token chunks,
pattern        each retriever's top 20 before cut, as the primary retrieval); count the gold support units
               each finds: more with BM25 -> exact, more with dense -> semantic, equal -> same (OkraLong A.2).
evidence       the primary retrieval (hybrid, 1:1, 3 x 150 tokens) holds *every* gold support unit -> yes.

Gold support units and when retrieved text holds one (text normalised as SQuAD's normalize_answer; retrieved
chunks that touch are first merged into passages, as the context processor does):
  HotpotQA  each supporting-fact sentence; found when >= 90% of its tokens occur contiguously in a passage
            (a chunk boundary can split a sentence where HotpotQA's sentence splitter did not).
  MuSiQue   each is_supporting paragraph; found when >= 50% of its tokens occur contiguously in a passage
            (a ~100-word paragraph often straddles two 150-token chunks).
  TAT-QA    span / multi-span: each gold answer string, found when it occurs on word boundaries; a
            comparison span ("In which year ... larger?") also needs the numbers of its derivation.
            arithmetic: each operand of the derivation (e.g. "(44.1-56.7)/56.7" -> 44.1, 56.7), found when the
            number (commas removed) occurs as a number in a passage; the constants 2, 3, 4, 5, 10, 12, 100 and
            1000 after "/" or "*" (averages, percent scaling) are not operands. count: each item listed in the
            derivation ("A##B"), found as an answer string (a long item by the 90% sentence rule).
            No table-row annotation exists in TAT-QA, so "the rows needed" are these values.
  papers / hand: no gold evidence -> question type only.

Long documents (LongBench style, as evals/long_contexts builds them, but shared): HotpotQA documents of
~9,000 words and MuSiQue documents of ~11,000 words are made of the own paragraphs of several consecutive
items (seeded order; HotpotQA ~6-7 items: 10 paragraphs each, MuSiQue ~5-7 items: 20 each), topped up with
paragraphs of other items to the target length and shuffled, formatted "Passage N:\n<title>\n<text>". Each
item's question is asked of the document that holds its paragraphs; the other items' paragraphs are its
distractors, as LongBench's are. Sharing a document between ~7 questions makes building the set ~7x
cheaper than one document per question (embedding the documents is the whole cost: ~25 s per 9,000 words
on this 2-core machine while it was shared with other jobs). TAT-QA contexts are short (median ~200 words,
which a 3 x 150-token retrieval mostly holds), so ~18 consecutive reports (table as a pipe table, then
paragraphs) are joined into a financial document of ~TATQA_WORDS words in the same way (`--tatqa-words 0`:
each report alone). An item whose gold units do not all occur in its document (e.g. a TAT-QA operand that
the report prints differently) gets no pattern/evidence label.

Held-out split: by group — the shared document for retrieval-labelled items (so no held-out question shares
a document with a training one), else the item (HotpotQA/MuSiQue item, TAT-QA report, paper, hand
question) — a seeded hash of the group holds out TEST_FRACTION; training never sees a held-out group.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from longqa.evals.metrics import normalize_answer  # noqa: E402

HAND_QUESTIONS = REPO / "analyzer" / "data" / "hand_questions.jsonl"
GRANULARITY, K, DEPTH = 150, 3, 20
TATQA_WORDS = 4_000
TEST_FRACTION = 0.2
RECORD_VERSION = 2
DATASETS = ("hotpotqa", "musique", "musique-steps", "tatqa", "papers", "hand")
# evaluated, never trained on: with them in training, multi-bridge recall fell from 96% to 90% (a multi-hop
# question sent to direct retrieval can lose its answer; a single-hop one sent to step-wise reasoning costs
# one more call), so they measure the blind spot instead (docs/analyzer.md)
EVAL_ONLY = ("musique-steps",)
SENTENCE_SHARE, PARAGRAPH_SHARE = 0.9, 0.5
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_FORMULA = re.compile(r"^[\d\s,.$%()+\-*/<>=]*\d[\d\s,.$%()+\-*/<>=]*$")
_CONSTANTS = {"2", "3", "4", "5", "10", "12", "100", "1000"}


# -- question-only sources ---------------------------------------------------------------------------


def hand_records() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in HAND_QUESTIONS.read_text("utf-8").splitlines() if line.strip()]
    return [
        {
            "id": r["id"],
            "group": f"hand:{r['id']}",
            "dataset": "hand",
            "question": r["question"],
            "type": r["type"],
            "label_source": "hand",
            "subtype": r["domain"],
            "units": [],
            "retrieval": None,
        }
        for r in rows
    ]


_QUANTITY = re.compile(r"^\s*how (many|much|big|large|long|old|far|often|tall|high|deep|fast)\b", re.I)
PAPERS_RULE = (
    "summarizing when the question starts with how/why (not how many/much/big/large/long/...) and "
    "the reference answer has >= 12 words, or starts with 'what are/were the' and the answer has "
    ">= 20 words; extractive when the reference answer has <= 5 words; otherwise unlabelled (left out)"
)


def papers_label(question: str, answer: str) -> str | None:
    n = len(answer.split())
    q = question.strip().lower()
    if not _QUANTITY.match(q) and re.match(r"(how|why)\b", q) and n >= 12:
        return "summarizing"
    if re.match(r"what (are|were) the\b", q) and n >= 20:
        return "summarizing"
    if n <= 5:
        return "extractive"
    return None


def papers_records(data_dir: Path) -> list[dict[str, Any]]:
    out, seen = [], set()
    for line in (data_dir / "papers_qa.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        paper = hashlib.sha1(row["input"].encode("utf-8")).hexdigest()[:12]
        for i, (q, a) in enumerate(zip(row["instructions"], row["outputs"], strict=True)):
            label = papers_label(q, a)
            if label is None or (paper, q) in seen:
                continue
            seen.add((paper, q))
            out.append(
                {
                    "id": f"papers:{paper}:{i}",
                    "group": f"papers:{paper}",
                    "dataset": "papers",
                    "question": q,
                    "type": label,
                    "label_source": "rule",
                    "subtype": label,
                    "units": [],
                    "retrieval": None,
                }
            )
    return out


_STEP_REF = re.compile(r"#(\d+)")


def musique_steps(raw: dict[str, Any]) -> list[str]:
    """MuSiQue's decomposition steps as standalone questions: each "#k" replaced by step k's annotated
    answer; steps in the knowledge-base form "X >> relation" are not questions and are left out."""
    answers = [str(step.get("answer", "")) for step in raw.get("question_decomposition", [])]
    out = []
    for i, step in enumerate(raw.get("question_decomposition", [])):
        question = step["question"]
        refs = [int(k) for k in _STEP_REF.findall(question)]
        if ">>" in question or any(not 1 <= k <= i or not answers[k - 1] for k in refs):  # earlier steps only
            continue
        out.append(" ".join(_STEP_REF.sub(lambda m: answers[int(m.group(1)) - 1], question).split()))
    return list(dict.fromkeys(out))


def musique_step_records(raw: dict[str, Any], group: str) -> list[dict[str, Any]]:
    """Single-hop questions (each answered from one annotated paragraph) -> extractive: general-domain
    extractive questions, which no other source here has (TAT-QA's are financial, Qasper's about papers).
    Evaluation only (EVAL_ONLY)."""
    return [
        {
            "id": f"musique-step:{raw['id']}:{k}",
            "group": group,
            "dataset": "musique-steps",
            "question": q,
            "type": "extractive",
            "label_source": "annotation-derived",
            "subtype": "single-hop",
            "units": [],
            "retrieval": None,
        }
        for k, q in enumerate(musique_steps(raw))
    ]


# -- TAT-QA documents and gold units ---------------------------------------------------------------


def tatqa_block(ctx: dict[str, Any]) -> str:
    """A TAT-QA context as text: its table as a pipe table, then its paragraphs in order."""
    rows = [[" ".join(str(c).split()).replace("|", "/") for c in row] for row in ctx["table"]["table"]]
    width = max((len(r) for r in rows), default=0)
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    if lines:
        lines.insert(1, "|" + "---|" * width)
    paragraphs = [" ".join(p["text"].split()) for p in sorted(ctx["paragraphs"], key=lambda p: p["order"])]
    return "\n\n".join(["\n".join(lines), *paragraphs]).strip()


def norm_number(text: str) -> str:
    n = text.replace(",", "")
    return n.rstrip("0").rstrip(".") if "." in n else n


def derivation_numbers(derivation: str) -> list[str]:
    out = []
    for m in _NUMBER.finditer(derivation):
        before = derivation[: m.start()].rstrip()
        n = norm_number(m.group(0))
        if before.endswith(("/", "*")) and n in _CONSTANTS:
            continue
        out.append(n)
    return list(dict.fromkeys(out))


def tatqa_units(q: dict[str, Any]) -> list[dict[str, str]]:
    kind, derivation = q["answer_type"], (q.get("derivation") or "").strip()
    answers = q["answer"] if isinstance(q["answer"], list) else [str(q["answer"])]
    units: list[dict[str, str]] = []
    if kind == "arithmetic":
        units = (
            [{"kind": "number", "text": n} for n in derivation_numbers(derivation)]
            if _FORMULA.match(derivation)
            else []
        )
    elif kind == "count" and derivation:
        items = [s.strip() for s in derivation.split("##") if s.strip()]
        units = [{"kind": "sentence" if len(s.split()) > 8 else "answer", "text": s} for s in items]
    else:
        units = [{"kind": "answer", "text": str(a)} for a in dict.fromkeys(map(str, answers)) if a.strip()]
        if _FORMULA.match(derivation):  # a comparison such as "3.1>2.4" (not a prose note)
            units += [{"kind": "number", "text": n} for n in derivation_numbers(derivation)]
    if not units:
        units = [{"kind": "answer", "text": str(a)} for a in answers if str(a).strip()]
    return units


# -- matching gold units in retrieved passages -------------------------------------------------------


def _contiguous(unit: list[str], padded: list[str], share: float) -> bool:
    size = max(1, int(np.ceil(share * len(unit))))
    windows = {" " + " ".join(unit[i : i + size]) + " " for i in range(len(unit) - size + 1)}
    return any(w in p for p in padded for w in windows)


def prepare(passages: list[str]) -> tuple[list[str], list[str], set[str]]:
    """Passages with their normalised (space-padded) texts and the numbers they print."""
    return (
        passages,
        [f" {normalize_answer(p)} " for p in passages],
        {norm_number(n) for p in passages for n in _NUMBER.findall(p)},
    )


def units_found(
    units: list[dict[str, str]], passages: list[str], prepared: tuple[list[str], list[str], set[str]] | None = None
) -> list[bool]:
    passages, padded, numbers = prepared or prepare(passages)
    found = []
    for u in units:
        if u["kind"] == "number":
            found.append(u["text"] in numbers)
        elif u["kind"] == "answer":
            target = f" {normalize_answer(u['text'])} "
            found.append(target.strip() != "" and any(target in p for p in padded))
        else:
            tokens = normalize_answer(u["text"]).split()
            share = PARAGRAPH_SHARE if u["kind"] == "paragraph" else SENTENCE_SHARE
            found.append(bool(tokens) and _contiguous(tokens, padded, share))
    return found


def labels(record: dict[str, Any]) -> dict[str, Any] | None:
    """{"info_pattern", "evidence", "found": {mode: n found}} or None (no retrieval, no gold units, or gold
    units that do not all occur in the document itself)."""
    if not record.get("retrieval") or not record.get("units") or not record.get("gold_in_doc"):
        return None
    r = record["retrieval"]
    found = {mode: units_found(record["units"], r[mode]["passages"]) for mode in ("bm25", "dense", "hybrid")}
    nb, nd = sum(found["bm25"]), sum(found["dense"])
    pattern = "exact" if nb > nd else "semantic" if nd > nb else "same"
    return {
        "info_pattern": pattern,
        "evidence": "yes" if all(found["hybrid"]) else "no",
        "found": {m: sum(v) for m, v in found.items()},
        "n_units": len(record["units"]),
    }


def is_test(group: str, seed: int = 0, fraction: float = TEST_FRACTION) -> bool:
    h = int(hashlib.sha256(f"analyzer-split:{seed}:{group}".encode()).hexdigest()[:8], 16)
    return h / 2**32 < fraction


# -- retrieval --------------------------------------------------------------------------------------


def retrieve_all(store, document, questions: list[str]) -> list[dict[str, Any]]:
    """Per question: the top K of BM25 only, dense only and hybrid 1:1 (GRANULARITY tokens, depth DEPTH)."""
    from longqa.retrieval import Searcher
    from longqa.retrieval.search.context import merge_chunks

    store.index(document, GRANULARITY)
    searcher = Searcher(store, [document])
    out = []
    for q in questions:
        per_mode = {}
        for mode in ("bm25", "dense", "hybrid"):
            results = searcher.search(q, k=K, granularity=GRANULARITY, weights=(1.0, 1.0), depth=DEPTH, mode=mode)
            hits = [
                {
                    "text": r.chunk.text,
                    "start": r.chunk.start,
                    "end": r.chunk.end,
                    "score": round(r.score, 6),
                    "dense_score": r.dense_score,
                    "bm25_score": r.bm25_score,
                }
                for r in results
            ]
            per_mode[mode] = {
                "hits": hits,
                "passages": [p.text for p in merge_chunks(results, {document.doc_id: document})],
            }
        out.append(per_mode)
    return out


def cache_key(config: dict[str, Any]) -> str:
    """Records depend on the seed and the TAT-QA document length, not on how many items are asked for
    (items are seeded prefixes), so a larger run reuses a smaller one's records."""
    key = {
        "seed": config["seed"],
        "tatqa_words": config["tatqa_words"],
        "version": RECORD_VERSION,
        "granularity": GRANULARITY,
        "k": K,
        "depth": DEPTH,
    }
    return hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]


def _round_robin(*lists: list) -> list:
    out = []
    for i in range(max(map(len, lists), default=0)):
        out.extend(lst[i] for lst in lists if i < len(lst))
    return out


def _groups(items: list[Any], words: Callable[[Any], int], target: int) -> list[list[Any]]:
    """Consecutive items whose own text adds up to ~90% of `target` words (the rest: distractors)."""
    groups: list[list[Any]] = []
    current, total = [], 0
    for item in items:
        w = words(item)
        if current and total + w > 0.9 * target:
            groups.append(current)
            current, total = [], 0
        current.append(item)
        total += w
    if current:
        groups.append(current)
    return groups


def build_records(
    home: Path,
    config: dict[str, Any],
    data_dir: Path | None = None,
    log: Callable[[str], None] = print,
    max_minutes: float | None = None,
) -> list[dict[str, Any]]:
    """Every labelled record. All questions of every source carry a question-type label; those of the
    first n_hotpotqa / n_musique items and n_tatqa reports (seeded order; n_tatqa None = all) are asked of
    shared long documents and carry their retrievals ("retrieval"), from the cache under `home` or
    computed (indexing the document) and cached. config: n_hotpotqa, n_musique, n_tatqa, tatqa_words, seed,
    hotpotqa_b ("questions": question type only | "index": its first n_hotpotqa items too | "none").
    `max_minutes` stops indexing new documents after that long (their records keep "retrieval": None and
    get "pending": True; run again to continue)."""
    from longqa.evals.long_contexts import (
        HOTPOTQA_WORDS,
        MUSIQUE_WORDS,
        assemble,
        format_context,
        hotpotqa_item,
        hotpotqa_paragraphs,
        load_hotpotqa,
        load_musique,
        musique_item,
        musique_paragraphs,
        paragraph_words,
        select,
        shared_data_dir,
    )
    from longqa.retrieval import IndexSettings, IndexStore, document_from_text

    data_dir = shared_data_dir(data_dir)
    home.mkdir(parents=True, exist_ok=True)
    cache = home / f"records-{cache_key(config)}.jsonl"
    cached: dict[tuple[str, str], dict[str, Any]] = {}  # (record id, document hash) -> cached record
    if cache.exists():
        for line in cache.read_text("utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                cached[(rec["id"], rec["doc_hash"])] = rec
    seed = config["seed"]
    records: list[dict[str, Any]] = []
    # a job: (group name, its records, the document text)
    jobs: dict[str, list[tuple[str, list[dict[str, Any]], str]]] = {"hotpotqa": [], "musique": [], "tatqa": []}

    def add_jobs(
        dataset: str,
        raws: list[dict[str, Any]],
        n: int,
        recs_of: Callable[[dict[str, Any]], list[dict]],
        own: Callable[[dict[str, Any]], list[tuple[str, str]]],
        target: int,
        key: Callable[[tuple[str, str]], str],
        prefix: str,
        fmt: Callable[[list], str],
    ) -> None:
        """Documents for the first n of `raws`; distractors come from all of `raws` outside the group."""
        everything = [(id(raw), p) for raw in raws for p in own(raw)]
        for g, group in enumerate(_groups(raws[:n], lambda r: sum(map(paragraph_words, own(r))), target)):
            members = {id(raw) for raw in group}
            paragraphs = [p for raw in group for p in own(raw)]
            seen: set[str] = set()
            paragraphs = [p for p in paragraphs if not (key(p) in seen or seen.add(key(p)))]
            pool = [p for owner, p in everything if owner not in members]
            rng = random.Random(f"{seed}:{prefix}:{g}")
            text = fmt(assemble(paragraphs, pool, target, rng, key) if target > 0 else paragraphs)
            group_recs = [rec for raw in group for rec in recs_of(raw)]
            for rec in group_recs:
                rec["group"] = f"{prefix}-doc:{g}"
            jobs[dataset].append((f"{prefix}-doc:{g}", group_recs, text))

    # HotpotQA
    qtype = {"bridge": "multi-bridge", "comparison": "multi-source"}
    by_raw: dict[int, list[dict[str, Any]]] = {}
    splits = [("a", config["n_hotpotqa"])]
    if config.get("hotpotqa_b", "questions") != "none":
        splits.append(("b", config["n_hotpotqa"] if config.get("hotpotqa_b") == "index" else 0))
    for split, n in splits:
        raws = select(load_hotpotqa(split, data_dir), None, seed)
        for raw in raws:
            item = hotpotqa_item(raw, [], seed, target_words=0)  # gold units only
            rec = {
                "id": f"hotpotqa-{split}:{item.id}",
                "group": f"hotpotqa:{item.id}",
                "dataset": "hotpotqa",
                "question": item.question,
                "type": qtype[item.type],
                "label_source": "annotation",
                "subtype": item.type,
                "answers": item.answers,
                "retrieval": None,
                "units": [{"kind": "sentence", "text": x} for x in item.supporting],
            }
            records.append(rec)
            by_raw[id(raw)] = [rec]
        add_jobs(
            "hotpotqa",
            raws,
            n,
            lambda raw: by_raw[id(raw)],
            hotpotqa_paragraphs,
            HOTPOTQA_WORDS,
            lambda p: p[0],
            f"hotpotqa-{split}",
            format_context,
        )
    # MuSiQue
    raws = select(load_musique(data_dir), None, seed)
    for raw in raws:
        item = musique_item(raw, [], seed, target_words=0)
        rec = {
            "id": f"musique:{item.id}",
            "group": f"musique:{item.id}",
            "dataset": "musique",
            "question": item.question,
            "type": "multi-bridge",
            "label_source": "annotation",
            "subtype": item.type,
            "answers": item.answers,
            "units": [{"kind": "paragraph", "text": x} for x in item.supporting],
            "retrieval": None,
        }
        records.append(rec)
        by_raw[id(raw)] = [rec]
    add_jobs(
        "musique",
        raws,
        config["n_musique"],
        lambda raw: by_raw[id(raw)],
        musique_paragraphs,
        MUSIQUE_WORDS,
        lambda p: p[1],
        "musique",
        format_context,
    )
    for raw in raws:  # the annotated single-hop steps, in the parent item's group (same side of the split)
        records.extend(musique_step_records(raw, by_raw[id(raw)][0]["group"]))
    # TAT-QA
    contexts = select(json.loads((data_dir / "tatqa_dev.json").read_text("utf-8")), None, seed)
    for ctx in contexts:
        recs = []
        for q in ctx["questions"]:
            label = "arithmetic" if q["answer_type"] in ("arithmetic", "count") else "extractive"
            answers = q["answer"] if isinstance(q["answer"], list) else [str(q["answer"])]
            recs.append(
                {
                    "id": f"tatqa:{q['uid']}",
                    "group": f"tatqa:{ctx['table']['uid']}",
                    "dataset": "tatqa",
                    "question": " ".join(q["question"].split()),
                    "type": label,
                    "label_source": "annotation",
                    "subtype": q["answer_type"],
                    "answers": [str(a) for a in answers],
                    "units": tatqa_units(q),
                    "retrieval": None,
                }
            )
        records.extend(recs)
        by_raw[id(ctx)] = recs
    n_tatqa = len(contexts) if config.get("n_tatqa") is None else config["n_tatqa"]
    add_jobs(
        "tatqa",
        contexts,
        n_tatqa,
        lambda ctx: by_raw[id(ctx)],
        lambda ctx: [("", tatqa_block(ctx))],
        config["tatqa_words"],
        lambda p: p[1],
        "tatqa",
        lambda ps: "\n\n".join(x for _, x in ps),
    )
    records += papers_records(data_dir) + hand_records()

    # retrieve: the datasets' documents interleaved, so an interrupted build holds some of each
    order = _round_robin(jobs["hotpotqa"], jobs["musique"], jobs["tatqa"])
    doc_hash = {group: hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] for group, _, text in order}
    todo = [j for j in order if not all((r["id"], doc_hash[j[0]]) in cached for r in j[1])]
    log(
        f"analyzer data: {len(records)} questions; {sum(len(j[1]) for j in order)} of them asked of "
        f"{len(order)} shared documents, {len(order) - len(todo)} cached in {cache}"
    )
    start, n_new, store = time.perf_counter(), 0, None
    with cache.open("a", encoding="utf-8") as out:
        for group, recs, text in order:
            h = doc_hash[group]
            whole = prepare([text])
            for r in recs:  # whether the document itself holds every gold unit (labels() needs it)
                r["gold_in_doc"] = bool(r["units"]) and all(units_found(r["units"], [text], whole))
            if all((r["id"], h) in cached for r in recs):
                for r in recs:
                    hit = cached[(r["id"], h)]
                    r.update(retrieval=hit["retrieval"], n_words=hit["n_words"])
                continue
            if max_minutes is not None and time.perf_counter() - start > 60 * max_minutes:
                for r in recs:
                    r["pending"] = True
                continue
            if store is None:
                store = IndexStore(IndexSettings(home=home / "index"))
            doc = document_from_text(text, source=group)
            for rec, retrieval in zip(recs, retrieve_all(store, doc, [r["question"] for r in recs]), strict=True):
                rec["retrieval"], rec["n_words"] = retrieval, doc.n_words
                out.write(json.dumps({**rec, "doc_hash": h}) + "\n")
            out.flush()
            n_new += 1
            log(
                f"  {n_new}/{len(todo)} new documents retrieved ({group}, {len(recs)} questions), "
                f"{time.perf_counter() - start:.0f} s"
            )
    pending = sum(bool(r.get("pending")) for r in records)
    if pending:
        log(
            f"analyzer data: stopped after {max_minutes} min; {pending} questions still lack their retrieval "
            "(run again to continue)"
        )
    return records


# -- question embeddings ------------------------------------------------------------------------------


def question_embeddings(records: list[dict[str, Any]], home: Path, embedder=None) -> dict[str, np.ndarray]:
    """question text -> its all-MiniLM-L6-v2 vector (cached in home/embeddings-<model>.npz)."""
    if embedder is None:
        from longqa.retrieval.index.embed.embedder import get_embedder

        embedder = get_embedder()
    path = home / f"embeddings-{embedder.name}.npz"
    cached: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path, allow_pickle=False) as data:
            cached = dict(zip(data["questions"].tolist(), data["vectors"], strict=True))
    missing = sorted({r["question"] for r in records} - set(cached))
    if missing:
        for q, v in zip(missing, embedder.embed(missing), strict=True):
            cached[q] = v
        questions = sorted(cached)
        np.savez(path, questions=np.asarray(questions), vectors=np.stack([cached[q] for q in questions]))
    return cached
