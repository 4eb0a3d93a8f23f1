"""How the local analyzer's training labels are derived (bench/analyzer_data.py) and how a trained model
becomes the shipped weights file (bench/analyzer_train.py): the OkraLong A.2 pattern rule, the evidence
rule, TAT-QA operands, the split by group, and a deterministic train -> save -> load round trip."""

from __future__ import annotations

import numpy as np
import pytest

from bench.analyzer_data import (
    derivation_numbers,
    is_test,
    labels,
    musique_step_records,
    musique_steps,
    papers_label,
    tatqa_units,
    units_found,
)
from bench.analyzer_train import design, save_weights, train
from longqa.analyzer.features import BLOCKS, feature_blocks
from longqa.analyzer.trained import HEADS, TrainedAnalyzer, embedder_fingerprint

# -- labels -------------------------------------------------------------------------------------------


def _record(units, found_by_mode: dict[str, list[str]]) -> dict:
    return {
        "units": units,
        "gold_in_doc": True,
        "retrieval": {mode: {"passages": passages, "hits": []} for mode, passages in found_by_mode.items()},
    }


SENTENCES = [
    {"kind": "sentence", "text": "Amelie Kortsen keeps the lighthouse of Port Verrin."},
    {"kind": "sentence", "text": "Kortsen was born in the mountain village of Haldane in 1961."},
]
FIRST, SECOND = (
    "Amelie Kortsen keeps the lighthouse of Port Verrin.",
    "Kortsen was born in the mountain village of Haldane in 1961.",
)


def test_pattern_is_the_retriever_that_finds_more_gold_units_and_evidence_needs_all_of_them():
    exact = labels(_record(SENTENCES, {"bm25": [FIRST + " " + SECOND], "dense": [FIRST], "hybrid": [FIRST]}))
    assert exact["info_pattern"] == "exact" and exact["evidence"] == "no"
    semantic = labels(_record(SENTENCES, {"bm25": ["unrelated"], "dense": [SECOND], "hybrid": [FIRST, SECOND]}))
    assert semantic["info_pattern"] == "semantic" and semantic["evidence"] == "yes"
    same = labels(_record(SENTENCES, {"bm25": [SECOND], "dense": [FIRST], "hybrid": ["unrelated"]}))
    assert same["info_pattern"] == "same" and same["evidence"] == "no"
    assert same["found"] == {"bm25": 1, "dense": 1, "hybrid": 0}


def test_no_label_without_retrieval_gold_units_or_gold_in_the_document():
    assert labels({"units": SENTENCES, "gold_in_doc": True, "retrieval": None}) is None
    assert labels(_record([], {"bm25": [FIRST], "dense": [FIRST], "hybrid": [FIRST]})) is None
    record = _record(SENTENCES, {"bm25": [FIRST], "dense": [FIRST], "hybrid": [FIRST]})
    record["gold_in_doc"] = False
    assert labels(record) is None


def test_a_sentence_split_by_a_chunk_boundary_still_counts_when_most_of_it_is_contiguous():
    words = SECOND.split()
    assert units_found(SENTENCES[1:], [" ".join(words[1:])]) == [True]  # 10 of 11 words: >= 90%
    assert units_found(SENTENCES[1:], [" ".join(words[:6]), " ".join(words[6:])]) == [False]


def test_tatqa_operands_come_from_the_derivation_without_scaling_constants():
    assert derivation_numbers("(44.1-56.7)/56.7 * 100") == ["44.1", "56.7"]
    assert derivation_numbers("(1,234 + 2,000) / 2") == ["1234", "2000"]
    units = tatqa_units({"answer_type": "arithmetic", "derivation": "12,500 - 11,250", "answer": 1250})
    assert units == [{"kind": "number", "text": "12500"}, {"kind": "number", "text": "11250"}]
    assert units_found(units, ["| Revenue | 12,500 | 11,250 |"]) == [True, True]
    assert units_found(units, ["| Revenue | 12,500 | 9,000 |"]) == [True, False]
    span = tatqa_units({"answer_type": "span", "derivation": "", "answer": ["Deloitte LLP"]})
    assert span == [{"kind": "answer", "text": "Deloitte LLP"}]
    assert units_found(span, ["The auditor is Deloitte LLP, London."]) == [True]


def test_papers_rule_labels_only_clear_cases():
    assert papers_label("How do they collect the corpus?", " ".join(["word"] * 15)) == "summarizing"
    assert papers_label("How many annotators were there?", " ".join(["word"] * 15)) is None
    assert papers_label("Which dataset do they use?", "SQuAD") == "extractive"
    assert papers_label("Which dataset do they use?", " ".join(["word"] * 9)) is None


def test_musique_steps_become_standalone_extractive_questions():
    raw = {
        "id": "2hop__1_2",
        "question_decomposition": [
            {"question": "Who directed Emergency Wedding?", "answer": "Edward Buzzell"},
            {"question": "Who is the spouse of #1?", "answer": "Ona Munson"},
            {"question": "#2 >> place of birth", "answer": "Portland"},
            {"question": "When was #4 founded?", "answer": "1851"},  # refers to itself, not an earlier step
        ],
    }
    assert musique_steps(raw) == ["Who directed Emergency Wedding?", "Who is the spouse of Edward Buzzell?"]
    records = musique_step_records(raw, "musique-doc:3")
    assert {r["type"] for r in records} == {"extractive"} and {r["group"] for r in records} == {"musique-doc:3"}
    assert all(r["retrieval"] is None and r["units"] == [] for r in records)


def test_the_split_is_by_group_deterministic_and_about_the_asked_fraction():
    groups = [f"doc:{i}" for i in range(2000)]
    held = [g for g in groups if is_test(g)]
    assert held == [g for g in groups if is_test(g)]
    assert 0.17 < len(held) / len(groups) < 0.23
    assert held != [g for g in groups if is_test(g, seed=1)]


# -- train -> weights file -> load --------------------------------------------------------------------

QUESTIONS = {
    "arithmetic": ["What was the percentage change in revenue from {} to 2019?", "What is the average cost in {}?"],
    "extractive": ["Who chaired the board in {}?", "Where is the {} plant located?"],
    "summarizing": ["Summarize the main risks described for {}.", "Describe how the {} scheme works."],
    "multi-source": ["Which is older, the {} bridge or the tower?", "Were both {} and Hale born in Leeds?"],
    "multi-bridge": ["Who founded the company that built the {} bridge?", "Where was the author of {} born?"],
}


def _records(rng: np.random.Generator) -> list[dict]:
    out = []
    for qtype, patterns in QUESTIONS.items():
        for i in range(6):
            question = patterns[i % 2].format(["Norvik", "1998", "Halden", "Severn", "Arles", "Tamsin"][i])
            bm25 = float(rng.uniform(2, 12))
            hits = [
                {
                    "text": f"{question} The record for {i} is 4,100.",
                    "score": 1.0,
                    "dense_score": 0.6,
                    "bm25_score": bm25,
                }
            ]
            out.append(
                {
                    "question": question,
                    "group": f"{qtype}:{i}",
                    "retrieval": {"hybrid": {"hits": hits}},
                    "labels": {
                        "question_type": qtype,
                        "info_pattern": "exact" if bm25 > 7 else "same",
                        "evidence": "yes" if i % 3 else "no",
                    },
                }
            )
    return out


def _embeddings(records: list[dict], dim: int = 8) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {r["question"]: rng.normal(size=dim).astype(np.float32) for r in records}


class TinyEmbedder:
    name, dimension = "tiny", 8

    def embed(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)


@pytest.fixture(scope="module")
def trained_pair(tmp_path_factory):
    records = _records(np.random.default_rng(0))
    emb = _embeddings(records)
    fixed = {"question_type": 1.0, "info_pattern": 1.0, "evidence": 1.0}
    first, meta = train(records, emb, c_fixed=fixed, log=lambda m: None)
    second, _ = train(records, emb, c_fixed=fixed, log=lambda m: None)
    meta["embedder"] = embedder_fingerprint(TinyEmbedder())
    path = tmp_path_factory.mktemp("weights") / "weights.npz"
    save_weights(first, path)
    return records, emb, first, second, path


def test_training_is_deterministic(trained_pair):
    _, _, first, second, _ = trained_pair
    for head in HEADS:
        assert np.array_equal(first.heads[head].coef, second.heads[head].coef)
        assert np.array_equal(first.heads[head].intercept, second.heads[head].intercept)


def test_the_saved_weights_load_and_predict_like_the_trained_model(trained_pair):
    records, emb, model, _, path = trained_pair
    loaded = TrainedAnalyzer.load(path, embedder=TinyEmbedder())
    assert path.stat().st_size < 100_000
    for rec in records[::5]:
        hits = rec["retrieval"]["hybrid"]["hits"]
        a = loaded.probabilities(rec["question"], hits, emb[rec["question"]])
        b = model.probabilities(rec["question"], hits, emb[rec["question"]])
        for head in HEADS:
            assert a[head].keys() == b[head].keys()
            assert all(abs(a[head][c] - b[head][c]) < 1e-4 for c in a[head])  # float32 on disk


def test_the_model_fits_its_training_questions(trained_pair):
    records, emb, model, _, _ = trained_pair
    predicted = [
        model.predict(r["question"], r["retrieval"]["hybrid"]["hits"], emb[r["question"]]).question_type
        for r in records
    ]
    assert sum(p == r["labels"]["question_type"] for p, r in zip(predicted, records, strict=True)) >= 0.9 * len(records)


def test_the_design_matrix_is_the_blocks_inference_computes(trained_pair):
    records, emb, *_ = trained_pair
    rec = records[0]
    x = design([rec], BLOCKS, emb)[0]
    blocks = feature_blocks(rec["question"], rec["retrieval"]["hybrid"]["hits"], emb[rec["question"]], BLOCKS)
    assert np.array_equal(x, np.concatenate([blocks[b] for b in BLOCKS]))
