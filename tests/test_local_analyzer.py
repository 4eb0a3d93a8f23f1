"""The trained local analyzer: the shipped weights load, fixed questions get the types we are sure of,
a missing or corrupt weights file falls back to the rule-based analyzer with a warning, a graph run
with the local analyzer records no LLM usage for the analysis, and inference needs no scikit-learn."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import longqa.analyzer.trained as trained
from longqa.analyzer import Analysis, TrainedAnalyzer, WeightsError, analyze_local
from longqa.analyzer.features import LEXICAL_NAMES, RETRIEVAL_NAMES, lexical_features, retrieval_features
from longqa.analyzer.trained import HEADS, WEIGHTS_PATH
from longqa.contracts.settings import Settings

REPO = Path(__file__).resolve().parents[1]
KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
HITS = [
    {
        "text": "The lighthouse keeper of Port Verrin is Amelie Kortsen. The council reviewed the drainage scheme.",
        "score": 1.0,
        "dense_score": 0.71,
        "bm25_score": 9.4,
    },
    {
        "text": "Amelie Kortsen was born in the mountain village of Haldane.",
        "score": 0.55,
        "dense_score": 0.48,
        "bm25_score": None,
    },
    {
        "text": "| Terminal | Revenue |\n|---|---|\n| North | 1200 |",
        "score": 0.2,
        "dense_score": None,
        "bm25_score": 2.1,
    },
]

# question types the analyzer must get right: phrased unlike any training question
CONFIDENT = [
    ("What was the percentage change in operating expenses between 2018 and 2019?", "arithmetic"),
    ("Which river is longer, the Severn or the Thames?", "multi-source"),
    ("Who is the spouse of the director of the film Emergency Wedding?", "multi-bridge"),
    ("Summarize the main arguments the committee gives for reforming the harbour authority.", "summarizing"),
    ("When was the Verrin Bridge opened?", "extractive"),
]


@pytest.fixture(scope="module")
def model(embedder) -> TrainedAnalyzer:
    return TrainedAnalyzer.load(WEIGHTS_PATH, embedder=embedder)


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty load cache, so a patched WEIGHTS_PATH is read (and the real one again afterwards)."""
    monkeypatch.setattr(trained, "_loaded", {})


# -- loading ---------------------------------------------------------------------------------------


def test_the_shipped_weights_load_and_are_small(model):
    assert WEIGHTS_PATH.stat().st_size < 500_000
    assert set(model.heads) == set(HEADS)
    assert set(model.heads["question_type"].classes) == {
        "arithmetic",
        "extractive",
        "summarizing",
        "multi-source",
        "multi-bridge",
    }
    assert set(model.heads["info_pattern"].classes) <= {"exact", "semantic", "same"}
    assert model.heads["evidence"].classes == ("no", "yes")
    assert model.meta["embedding_dim"] == 384 and len(model.meta["embedder"]["probe_vector"]) == 384
    assert model.meta["lexical_names"] == list(LEXICAL_NAMES)
    assert model.meta["retrieval_names"] == list(RETRIEVAL_NAMES)


def test_feature_vectors_match_their_names():
    assert lexical_features(KEEPER_Q).shape == (len(LEXICAL_NAMES),)
    assert retrieval_features(KEEPER_Q, HITS).shape == (len(RETRIEVAL_NAMES),)
    assert retrieval_features(KEEPER_Q, []).shape == (len(RETRIEVAL_NAMES),)


# -- prediction ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "expected"), CONFIDENT)
def test_fixed_questions_get_their_type(model, question, expected):
    analysis = model.predict(question, HITS)
    assert analysis.question_type == expected, model.probabilities(question, HITS)["question_type"]
    assert analysis.backend == "local-trained"


def test_prediction_is_a_valid_analysis_and_deterministic(model):
    first = model.predict(KEEPER_Q, HITS)
    assert isinstance(first, Analysis)
    assert first.info_pattern in ("exact", "semantic", "same") and first.evidence in ("yes", "no")
    assert first == model.predict(KEEPER_Q, HITS)
    probs = model.probabilities(KEEPER_Q, HITS)
    for head in HEADS:
        assert abs(sum(probs[head].values()) - 1.0) < 1e-6


def test_nothing_retrieved_means_no_evidence(model):
    assert model.predict(KEEPER_Q, []).evidence == "no"


def test_search_results_are_accepted_as_hits(model, harbor_index):
    from longqa.retrieval import Searcher

    store, document = harbor_index
    results = Searcher(store, [document]).search("Which ticket tracks the mooring winch?", k=3, granularity=40)
    analysis = model.predict("Which ticket tracks the mooring winch?", results)
    assert analysis.backend == "local-trained"


def test_analyze_local_uses_the_trained_analyzer(fresh_cache):
    assert analyze_local(KEEPER_Q, HITS).backend == "local-trained"


# -- fallback to the rules -------------------------------------------------------------------------


def _assert_rules_fallback(caplog, reason: str) -> None:
    with caplog.at_level(logging.WARNING, logger="longqa.analyzer.trained"):
        analysis = analyze_local(KEEPER_Q, HITS)
    assert analysis.backend == "local-rules"
    assert "used rules" in analysis.note and reason in analysis.note
    assert any("rule-based analyzer" in r.getMessage() and reason in r.getMessage() for r in caplog.records)


def test_a_missing_weights_file_falls_back_to_rules(tmp_path, monkeypatch, fresh_cache, caplog):
    monkeypatch.setattr(trained, "WEIGHTS_PATH", tmp_path / "absent.npz")
    _assert_rules_fallback(caplog, "not found")


def test_a_corrupt_weights_file_falls_back_to_rules(tmp_path, monkeypatch, fresh_cache, caplog):
    path = tmp_path / "weights.npz"
    path.write_bytes(b"PK\x03\x04 this is not a zip archive")
    monkeypatch.setattr(trained, "WEIGHTS_PATH", path)
    _assert_rules_fallback(caplog, "unreadable")


def test_weights_for_other_features_fall_back_to_rules(tmp_path, monkeypatch, fresh_cache, caplog):
    path = tmp_path / "weights.npz"
    with np.load(WEIGHTS_PATH, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    meta["lexical_names"] = meta["lexical_names"][:-1]
    np.savez(path, meta=np.asarray(json.dumps(meta)), **arrays)
    monkeypatch.setattr(trained, "WEIGHTS_PATH", path)
    _assert_rules_fallback(caplog, "other features")
    with pytest.raises(WeightsError):
        TrainedAnalyzer.load(path)


def test_another_embedder_is_refused(model):
    class Other:
        name, dimension = "other", 384

        def embed(self, texts):
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    with pytest.raises(WeightsError, match="another embedder"):
        trained.check_embedder(model.meta, Other())


def test_a_failure_while_predicting_falls_back_to_rules(monkeypatch, fresh_cache, caplog):
    def broken(self, question):
        raise RuntimeError("embedder exploded")

    monkeypatch.setattr(TrainedAnalyzer, "embed", broken)
    _assert_rules_fallback(caplog, "embedder exploded")


# -- the graph -------------------------------------------------------------------------------------


def test_local_is_the_default_analyzer(monkeypatch):
    monkeypatch.delenv("LONGQA_ANALYZER", raising=False)
    assert Settings().analyzer == "local"
    monkeypatch.setenv("LONGQA_ANALYZER", "llm")
    assert Settings().analyzer == "llm"


def test_a_graph_run_with_the_local_analyzer_spends_no_llm_tokens_on_analysis(run_graph, scripted):
    name, model = scripted({})
    out = run_graph(KEEPER_Q, model=name, analyzer="local")
    assert out["analysis"]["backend"] == "local-trained"
    assert "analyzer" not in model.calls
    assert "analyze" in out["route"]
    assert [r for r in out["usage"] if r["node"] == "analyze"] == []
    assert out["totals"]["calls"] == len(model.calls) == len(out["usage"])
    assert any(line.startswith("analyze[local-trained]") for line in out["trace"])


def test_the_analyzer_reuses_the_question_vector_of_the_primary_retrieval(run_graph, monkeypatch):
    from longqa.retrieval.index.embed.embedder import get_embedder

    backend_class = type(get_embedder())  # the process's backend (ONNX Runtime by default, else torch)
    embedded: list[str] = []
    original = backend_class.embed

    def spy(self, texts, *args, **kwargs):
        embedded.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(backend_class, "embed", spy)
    question = "Which keeper looks after the Port Verrin light, according to this year's harbour report?"
    out = run_graph(question, model=None, analyzer="local")
    assert out["analysis"]["backend"] == "local-trained"
    assert embedded.count(question) == 1  # the primary retrieval's; the analyzer's was a cache hit


# -- no scikit-learn at inference -------------------------------------------------------------------


def test_inference_does_not_import_sklearn():
    code = (
        "import sys, numpy as np\n"
        "from longqa.analyzer.trained import TrainedAnalyzer\n"
        "a = TrainedAnalyzer.load()\n"
        "dim = a.meta['embedding_dim']\n"
        "hits = [{'text': 'The keeper is Amelie Kortsen.', 'score': 1.0, 'dense_score': 0.6, 'bm25_score': 5.0}]\n"
        "print(a.predict('Who is the keeper?', hits, embedding=np.full(dim, dim ** -0.5)).backend)\n"
        "assert 'sklearn' not in sys.modules, 'sklearn was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "local-trained"
    for source in (REPO / "analyzer").glob("*.py"):
        assert "sklearn" not in source.read_text("utf-8"), source
