"""Issue #32, start fast: the ONNX Runtime embedder gives the torch embedder's vectors and rankings,
a question from the command line never imports torch, and a process compiles the graph once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.embed.embedder import Embedder, configured_backend, get_embedder
from longqa.retrieval.index.embed.onnx_embedder import OnnxEmbedder
from longqa.retrieval.index.embed.onnx_export import OnnxUnavailable, export_dir, exported_model
from longqa.retrieval.index.store import IndexStore
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.search import Searcher, forget_query
from longqa.retrieval.tokens import embedder_model_path

from .conftest import HARBOR_TOPICS, RARE_CODE, harbor_text

QUERIES = [
    "How deep is the main channel after dredging?",
    "What happened to the breakwater in the storm?",
    f"Which code is {RARE_CODE}?",
    "How many people did the authority employ?",
    "shore power ferries diesel",
    "revenue",
]


@pytest.fixture(scope="module")
def backends():
    """(torch embedder, ONNX embedder) of the bundled model."""
    path = embedder_model_path()
    return Embedder(path), OnnxEmbedder(path, exported_model(path))


def _texts() -> list[str]:
    words = harbor_text(paragraphs=30).split()
    return (
        QUERIES
        + [body for _, body in HARBOR_TOPICS]
        + [" ".join(words[i : i + n]) for i, n in ((0, 3), (10, 60), (40, 150), (0, 400))]  # 400 words: truncated
        + ["", "   ", "ÜBER die Brücke: naïve café, 東京 — 3.5% of €40m"]
    )


def test_onnx_vectors_match_torch_vectors(backends):
    torch_embedder, onnx_embedder = backends
    texts = _texts()
    reference = torch_embedder.embed(texts)
    batched = onnx_embedder.embed(texts)
    alone = np.vstack([onnx_embedder.embed([t]) for t in texts])  # the query path: one text, one thread
    assert batched.shape == reference.shape == (len(texts), 384)
    assert np.abs(batched - reference).max() < 1e-4
    assert np.abs(alone - reference).max() < 1e-4
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    assert onnx_embedder.embed([]).shape == (0, 384)
    assert (onnx_embedder.name, onnx_embedder.max_tokens) == (torch_embedder.name, torch_embedder.max_tokens)


def test_same_ranking_and_citations_torch_vs_onnx(backends, tmp_path):
    """A fixture library built and searched with each backend: the same top-k chunks, in the same order,
    at the same character offsets."""
    documents = [
        document_from_text(harbor_text(paragraphs=18), source="harbor.md"),
        document_from_text(harbor_text(paragraphs=9, with_table=False), source="small.md"),
    ]
    results = {}
    for name, embedder in zip(("torch", "onnx"), backends, strict=True):
        store = IndexStore(IndexSettings(home=tmp_path / name), embedder=embedder)
        searcher = Searcher(store, documents=documents)
        forget_query()
        results[name] = [
            [
                (r.chunk.doc_id, r.chunk.index, r.chunk.start, r.chunk.end, r.dense_score)
                for r in searcher.search(q, k=5, granularity=40, mode=mode)
            ]
            for q in QUERIES
            for mode in ("dense", "hybrid")
        ]
    for torch_hits, onnx_hits in zip(results["torch"], results["onnx"], strict=True):
        assert [h[:4] for h in torch_hits] == [h[:4] for h in onnx_hits]
        assert np.allclose([h[4] for h in torch_hits], [h[4] for h in onnx_hits], atol=1e-4)
    assert any(len(hits) == 5 for hits in results["onnx"])


def test_the_export_is_verified_and_reused(backends):
    path = embedder_model_path()
    verified = json.loads((export_dir(path) / "verified.json").read_text())
    assert verified["max_abs_difference"] < 1e-4
    assert exported_model(path, export=False) == export_dir(path) / "model.onnx"  # cached: no second export


def test_no_export_without_weights(tmp_path):
    """A model directory the exporter cannot read is refused with a clear error, never half-written."""
    (tmp_path / "config.json").write_text('{"num_attention_heads": 12, "hidden_size": 384}')
    with pytest.raises(OnnxUnavailable, match="export"):
        exported_model(tmp_path)
    assert not (export_dir(tmp_path) / "verified.json").exists()


def test_backend_setting(monkeypatch):
    assert configured_backend() == "onnx"
    assert isinstance(get_embedder(), OnnxEmbedder)
    monkeypatch.setenv("LONGQA_EMBEDDER_BACKEND", "TORCH ")
    assert configured_backend() == "torch"
    monkeypatch.setenv("LONGQA_EMBEDDER_BACKEND", "tensorflow")
    with pytest.raises(ValueError, match="LONGQA_EMBEDDER_BACKEND='tensorflow'"):
        configured_backend()


ASK = """
import contextlib, io, json, sys
from longqa import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = cli.main(["ask", sys.argv[1], sys.argv[2], "--json", "-q"])
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers", "pypdf", "docx", "langchain_openai")
               if m in sys.modules)
print(json.dumps({"code": code, "result": json.loads(out.getvalue()), "heavy": heavy}))
"""


def _ask(doc: Path, question: str, home: Path, backend: str) -> dict:
    env = {**__import__("os").environ, "LONGQA_HOME": str(home), "LONGQA_EMBEDDER_BACKEND": backend}
    env.pop("LONGQA_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(doc), question], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cli_ask_imports_no_torch_and_cites_as_torch_does(tmp_path):
    """`longqa ask` on an indexed library (evidence only) loads neither torch nor a file reader nor a
    model provider, and cites exactly what the torch embedder's process cites."""
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(paragraphs=24), "utf-8")
    home = tmp_path / "home"
    indexed = subprocess.run(
        [sys.executable, "-m", "longqa.cli", "--home", str(home), "index", str(doc), "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert indexed.returncode == 0, indexed.stderr[-2000:]
    question = "How deep is the main channel after the dredging?"
    onnx = _ask(doc, question, home, "onnx")
    torch = _ask(doc, question, home, "torch")
    assert onnx["code"] == 0 and onnx["result"]["status"] == "evidence-only"
    assert onnx["heavy"] == []
    assert "torch" in torch["heavy"]  # the check can see torch when it is there
    cited = [(c["source"], c["start"], c["end"]) for c in onnx["result"]["citations"]]
    assert cited and cited == [(c["source"], c["start"], c["end"]) for c in torch["result"]["citations"]]


def test_the_graph_is_compiled_once_per_process(tmp_path):
    from longqa.contracts.settings import Settings
    from longqa.runner.ask import compiled_graph, run_question
    from longqa.runner.threads import close_checkpointers, thread_checkpointer

    settings = Settings(home=tmp_path)
    assert compiled_graph() is compiled_graph()
    saver = thread_checkpointer(settings)
    assert compiled_graph(saver) is compiled_graph(saver)
    assert compiled_graph(saver) is not compiled_graph()
    assert compiled_graph(saver).checkpointer is saver
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(), "utf-8")
    before = compiled_graph.cache_info()
    for question in ("How deep is the channel?", "Who replanted the seagrass?"):
        result = run_question([str(doc)], question, settings, progress=None)
        assert result["status"] == "evidence-only" and result["citations"]
    run_question([str(doc)], "And the storm?", settings, thread="t1", progress=None)
    after = compiled_graph.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 3
    close_checkpointers()


def test_a_damaged_export_falls_back_to_torch_and_is_removed(backends, tmp_path, monkeypatch, caplog):
    """A truncated model.onnx in the cache (a full disk, a killed copy) never fails a question: this
    process embeds through sentence-transformers, with the same vectors, and the broken export is removed."""
    import shutil

    from longqa.retrieval.index.embed import embedder as embedder_module

    path = embedder_model_path()
    source = export_dir(path)
    monkeypatch.setenv("LONGQA_ONNX_DIR", str(tmp_path / "onnx"))
    copy = export_dir(path)
    shutil.copytree(source, copy)
    (copy / "model.onnx").write_bytes((copy / "model.onnx").read_bytes()[:4096])
    with caplog.at_level("WARNING"):
        loaded = embedder_module._load(str(path), 13, "onnx")  # its own cache entry
    assert isinstance(loaded, Embedder)
    assert "cannot be loaded" in caplog.text and not copy.exists()
    assert np.abs(loaded.embed(QUERIES) - backends[1].embed(QUERIES)).max() < 1e-4


def test_a_question_over_an_indexed_library_starts_no_reader_process(tmp_path, monkeypatch):
    """A question over unchanged files reads none, so it starts no reader process (each costs an
    interpreter and the readers' imports beside the question); an index run starts one at once, and a
    question over a changed file reads it in one."""
    from longqa.contracts.settings import Settings
    from longqa.services import inputs

    started = []
    real = inputs.reader_for
    monkeypatch.setattr(inputs, "reader_for", lambda limits: started.append(limits) or real(limits))
    settings = Settings(home=tmp_path / "home")
    doc = tmp_path / "report.md"
    doc.write_text(harbor_text(), "utf-8")
    inputs.index_library({"documents": [str(doc)]}, settings, [settings.primary_granularity])
    assert len(started) == 1
    started.clear()
    assert inputs.open_library({"documents": [str(doc)]}, settings).doc_ids
    assert started == []
    doc.write_text(harbor_text() + "\n\nThe lighthouse keepers retired in spring.\n", "utf-8")
    assert inputs.open_library({"documents": [str(doc)]}, settings).doc_ids
    assert started
