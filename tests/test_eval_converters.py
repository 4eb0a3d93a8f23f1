"""Converters (evals/converters.py) on small files written here, the LongBench reader/writer, and
`longqa convert`. One smoke test reads the real shared data (marked `shared_data`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longqa.cli import main
from longqa.evals import long_contexts
from longqa.evals.converters import convert, convert_papers, convert_tatqa, markdown_table, tatqa_answers
from longqa.evals.longbench import read_jsonl, write_jsonl
from longqa.evals.metrics import normalize_answer


def _hotpot_item(i: int) -> dict:
    titles = [f"Town {i}", f"River {i}", f"Mountain {i}"]
    sentences = [
        [f"Town {i} lies on River {i}.", f" It has {100 + i} inhabitants."],
        [f"River {i} rises on Mountain {i}.", f"It is {10 + i} km long."],
        [f"Mountain {i} is {1000 + i} m high.", "Snow covers it in winter."],
    ]
    return {
        "id": f"h{i}",
        "question": f"How long is the river of Town {i}?",
        "answer": f"{10 + i} km",
        "type": "bridge" if i % 2 else "comparison",
        "level": "hard",
        "supporting_facts": {"title": [f"Town {i}", f"River {i}", f"River {i}"], "sent_id": [0, 1, 7]},
        "context": {"title": titles, "sentences": sentences},
    }


def _musique_item(i: int) -> dict:
    return {
        "id": f"2hop__{i}_{i + 1}",
        "question": f"Where was the founder of Firm {i} born?",
        "answer": f"City {i}",
        "answer_aliases": [f"City {i}", f"Town of City {i}"],
        "answerable": True,
        "paragraphs": [
            {
                "idx": 0,
                "title": f"Firm {i}",
                "paragraph_text": f"Firm {i} was founded by Ann {i}.",
                "is_supporting": True,
            },
            {"idx": 1, "title": f"Ann {i}", "paragraph_text": f"Ann {i} was born in City {i}.", "is_supporting": True},
            {"idx": 2, "title": f"Other {i}", "paragraph_text": f"Other {i} sells  bread.", "is_supporting": False},
        ],
        "question_decomposition": [],
    }


@pytest.fixture
def shared(tmp_path) -> Path:
    """A miniature ../shared/data: 6 HotpotQA items, 4 MuSiQue items, 1 TAT-QA context, 2 papers."""
    d = tmp_path / "shared"
    d.mkdir()
    (d / "hotpotqa_a.jsonl").write_text("".join(json.dumps(_hotpot_item(i)) + "\n" for i in range(6)), "utf-8")
    (d / "musique_a.json").write_text(json.dumps([_musique_item(i) for i in range(4)]), "utf-8")
    tatqa = [
        {
            "table": {
                "uid": "t1",
                "table": [["", "2019", "2018"], ["Revenue", "$ 1,200.5", "900"], ["Cost | net", "300", "250"]],
            },
            "paragraphs": [
                {"uid": "p2", "order": 2, "text": "Revenue grew on  strong demand."},
                {"uid": "p1", "order": 1, "text": "The table shows results in millions."},
            ],
            "questions": [
                {
                    "uid": "q-span",
                    "question": "What was revenue in 2019?",
                    "answer": ["$ 1,200.5"],
                    "answer_type": "span",
                    "answer_from": "table-text",
                    "derivation": "",
                    "scale": "million",
                    "rel_paragraphs": ["1"],
                },
                {
                    "uid": "q-multi",
                    "question": "What grew and why?",
                    "answer": ["Revenue", "strong demand"],
                    "answer_type": "multi-span",
                    "answer_from": "text",
                    "derivation": "",
                    "scale": "",
                    "rel_paragraphs": ["2"],
                },
                {
                    "uid": "q-arith",
                    "question": "What was the change in revenue?",
                    "answer": 300.5,
                    "answer_type": "arithmetic",
                    "answer_from": "table",
                    "derivation": "1,200.5-900",
                    "scale": "million",
                    "rel_paragraphs": [],
                },
                {
                    "uid": "q-int",
                    "question": "How many years are shown?",
                    "answer": 2.0,
                    "answer_type": "count",
                    "answer_from": "table",
                    "derivation": "2019##2018",
                    "scale": "",
                    "rel_paragraphs": [],
                },
            ],
        }
    ]
    (d / "tatqa_dev.json").write_text(json.dumps(tatqa), "utf-8")
    papers = [
        {
            "instructions": ["What data?", "What model?", "What data?"],
            "outputs": ["A corpus of tweets", "BiLSTM", "Tweets from 2019"],
            "input": "Title: Paper one\n\nWe study tweets with a BiLSTM.",
            "source": "scientific_qa",
            "evaluation": "f1",
        },
        {
            "instructions": ["Is it supervised?"],
            "outputs": ["Yes"],
            "input": "Paper two. Supervised learning.",
            "source": "scientific_qa",
            "evaluation": "f1",
        },
    ]
    (d / "papers_qa.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers), "utf-8")
    return d


def _roundtrip(records: list[dict], tmp_path: Path, name: str):
    path = tmp_path / f"{name}.jsonl"
    assert write_jsonl(records, path) == len(records)
    items, bad = read_jsonl(path)
    assert bad == [] and len(items) == len(records)
    return items


def test_hotpotqa_long_contexts(shared, tmp_path):
    records = convert("hotpotqa", n=3, seed=1, data_dir=shared, target_words=60)
    assert [r["_id"] for r in records] == [
        r["_id"] for r in convert("hotpotqa", n=3, seed=1, data_dir=shared, target_words=60)
    ]  # seeded
    items = _roundtrip(records, tmp_path, "hotpot")
    for record, item in zip(records, items, strict=True):
        raw = _hotpot_item(int(record["_id"][1:]))
        assert item.question == raw["question"] and item.answers == [raw["answer"]]
        assert record["length"] == len(record["context"].split()) >= 60
        assert record["context"].startswith("Passage 1:\n")
        # distractors come from the other items; the item's own paragraphs are all there
        assert all(f"Passage {n}:" in record["context"] for n in range(1, 5))
        for title in raw["context"]["title"]:
            assert f"\n{title}\n" in record["context"]
        # supporting sentences (the out-of-range sent_id 7 skipped), all inside the context
        assert item.supporting == [
            f"Town {record['_id'][1:]} lies on River {record['_id'][1:]}.",
            f"It is {10 + int(record['_id'][1:])} km long.",
        ]
        assert all(s in record["context"] for s in item.supporting)
        assert record["label"] == {"bridge": "multi-bridge", "comparison": "multi-source"}[record["type"]]
        assert item.dataset == "hotpotqa"
    # a smaller n is a prefix of a larger one, and the same item gets the same context
    bigger = convert("hotpotqa", n=5, seed=1, data_dir=shared, target_words=60)
    assert [r["_id"] for r in bigger[:3]] == [r["_id"] for r in records]
    assert bigger[0]["context"] == records[0]["context"]


def test_musique_long_contexts(shared, tmp_path):
    records = convert("musique", n=2, seed=0, data_dir=shared, target_words=30)
    items = _roundtrip(records, tmp_path, "musique")
    for record, item in zip(records, items, strict=True):
        i = int(record["_id"].split("__")[1].split("_")[0])
        assert item.answers == [f"City {i}", f"Town of City {i}"]  # answer, then the other aliases
        assert item.supporting == [f"Firm {i} was founded by Ann {i}.", f"Ann {i} was born in City {i}."]
        assert all(s in record["context"] for s in item.supporting)
        assert f"Other {i} sells bread." in record["context"]  # whitespace collapsed
        assert record["type"] == "2hop" and record["label"] == "multi-bridge"


def test_tatqa_one_record_per_question(shared, tmp_path):
    records = {r["_id"]: r for r in convert_tatqa(data_dir=shared)}
    assert set(records) == {"q-span", "q-multi", "q-arith", "q-int"}
    context = records["q-span"]["context"]
    assert context == (
        "|  | 2019 | 2018 |\n|---|---|---|\n| Revenue | $ 1,200.5 | 900 |\n| Cost \\| net | 300 | 250 |"
        "\n\nThe table shows results in millions.\n\nRevenue grew on strong demand.\n"
    )
    assert all(r["context"] == context for r in records.values())
    assert records["q-span"]["answers"] == ["$ 1,200.5", "$ 1,200.5 million"]
    assert records["q-multi"]["answers"] == ["Revenue, strong demand"]
    assert records["q-multi"]["answer_spans"] == ["Revenue", "strong demand"]
    assert records["q-arith"]["answers"] == ["300.5", "300.5 million"]
    assert records["q-int"]["answers"] == ["2"]
    assert records["q-arith"]["derivation"] == "1,200.5-900" and records["q-arith"]["scale"] == "million"
    assert records["q-arith"]["answer_type"] == "arithmetic" and records["q-arith"]["label"] == "arithmetic"
    assert records["q-span"]["supporting"] == ["The table shows results in millions."]
    assert records["q-multi"]["supporting"] == ["Revenue grew on strong demand."]
    assert records["q-arith"]["supporting"] == []
    items = _roundtrip(list(records.values()), tmp_path, "tatqa")
    assert {i.extra["answer_type"] for i in items} == {"span", "multi-span", "arithmetic", "count"}
    assert len(convert_tatqa(n=2, seed=3, data_dir=shared)) == 2


def test_tatqa_helpers():
    assert markdown_table([["a", "b"], ["1"]]) == "| a | b |\n|---|---|\n| 1 |  |"
    assert tatqa_answers({"answer": 5, "answer_type": "arithmetic", "scale": "percent"}) == (["5", "5 percent"], [])


def test_papers_one_record_per_question(shared, tmp_path):
    records = convert_papers(data_dir=shared)
    by_question = {(r["paper"], r["input"]): r for r in records}
    assert len(records) == 3  # "What data?" asked twice of paper 0: one record, two references
    assert by_question[(0, "What data?")]["answers"] == ["A corpus of tweets", "Tweets from 2019"]
    assert by_question[(0, "What model?")]["answers"] == ["BiLSTM"]
    assert by_question[(1, "Is it supervised?")]["context"] == "Paper two. Supervised learning."
    assert all(r["dataset"] == "papers" and "supporting" not in r for r in records)
    _roundtrip(records, tmp_path, "papers")


def test_a_paper_held_twice_is_one_paper(tmp_path):
    """LEval's file holds some papers twice: their questions are asked once, with every copy's references, so no
    question is counted twice in a comparison."""
    paper = {"input": "Paper one. We study tweets with a BiLSTM.", "source": "scientific_qa", "evaluation": "f1"}
    copies = [
        {**paper, "instructions": ["What data?", "What model?"], "outputs": ["Tweets", "BiLSTM"]},
        {"instructions": ["Is it new?"], "outputs": ["Yes"], "input": "Paper two."},
        {**paper, "instructions": ["What  data?", "Which loss?"], "outputs": ["A corpus of tweets", "unanswerable"]},
    ]
    path = tmp_path / "papers_qa.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in copies), "utf-8")
    records = {r["input"]: r for r in convert_papers(path=path)}
    assert sorted(records) == ["Is it new?", "What data?", "What model?", "Which loss?"]
    assert records["What data?"]["answers"] == ["Tweets", "A corpus of tweets"]
    assert records["Which loss?"]["_id"] == "papers-0-2" and records["Which loss?"]["paper"] == 0
    assert records["Is it new?"]["_id"] == "papers-1-0"


def test_convert_command(shared, tmp_path, capsys):
    out = tmp_path / "out" / "tatqa.jsonl"
    assert main(["convert", "tatqa", "--data-dir", str(shared), "--n", "3", "--out", str(out)]) == 0
    assert "3 tatqa records" in capsys.readouterr().out
    items, bad = read_jsonl(out)
    assert len(items) == 3 and bad == []
    assert main(["convert", "papers", "--file", str(shared / "papers_qa.jsonl"), "--out", str(out)]) == 0
    assert main(["convert", "musique", "--data-dir", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.shared_data
def test_smoke_on_the_shared_data(tmp_path):
    """Reads ../shared/data (skipped where it is absent)."""
    try:
        long_contexts.shared_data_dir()
        records = convert("hotpotqa", n=1) + convert("musique", n=1) + convert("tatqa", n=1) + convert("papers", n=1)
    except FileNotFoundError:
        pytest.skip("../shared/data is not here")
    items = _roundtrip(records, tmp_path, "smoke")
    assert [i.dataset for i in items] == ["hotpotqa", "musique", "tatqa", "papers"]
    assert items[0].length > 8_000 and items[1].length > 10_000
    for item in items[:2]:
        assert item.supporting and all(normalize_answer(s) in normalize_answer(item.context) for s in item.supporting)
