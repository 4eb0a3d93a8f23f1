"""The operator's question budget binds every strategy on a server (issue 45): a caller naming a preset (`lc`,
`rag`, `self-route`, the LongRAG ones) runs capped to it, where in process the presets run unbudgeted to reproduce
their papers. The scripted model in the graph; `tests/test_serve.py` drives the same through `longqa serve`."""

from __future__ import annotations

import pytest

from longqa.llm.budget import spent
from tests.replies import cited_answer

QUESTION = "Which shipyard built the dredger Marrowdeep?"
PRESETS = ["lc", "rag", "self-route", "longrag", "longrag-ext", "longrag-fil"]


def _replies(scripted):
    """The generator declines its first call, so Self-Route's long-context fallback runs too."""
    answer, calls = cited_answer("Halvorsen Yard"), []

    def generator(prompt: str) -> str:
        calls.append(prompt)
        return "unanswerable" if len(calls) == 1 else answer(prompt)

    return scripted({"generator": generator, "filter": '{"status": true}'})


@pytest.mark.parametrize("strategy", PRESETS)
def test_on_a_server_every_preset_spends_at_most_the_question_budget(run_graph, scripted, strategy):
    name, model = _replies(scripted)
    out = run_graph(QUESTION, model=name, strategy=strategy, server=True, question_budget=900)
    used = spent(out["usage"])
    assert out["plan"]["question_budget"] == 900
    assert any("binds this preset" in reason for reason in out["plan"]["reasons"])
    assert 0 < used <= 900, (used, [(r["node"], r["input_tokens"]) for r in out["usage"]])
    assert out["status"] in ("answered", "unanswerable", "error"), out.get("error")


def test_in_process_the_long_context_preset_reads_past_the_budget_as_its_paper_does(run_graph, scripted):
    """The other side: without the server flag the same run spends more than 900 tokens (so the test above
    would fail if the budget did not bind)."""
    name, _ = _replies(scripted)
    out = run_graph(QUESTION, model=name, strategy="lc", question_budget=900)
    assert out["plan"]["question_budget"] is None
    assert spent(out["usage"]) > 900


@pytest.mark.parametrize("strategy", ["lc", "longrag", "self-route"])
def test_through_longqa_serve_a_preset_named_by_the_caller_stays_within_the_deployments_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path, strategy
):
    """The reproduction of issue 45 through the replica's app: `context: {"strategy": "lc"}` spent 29,237 input
    tokens under a 1,900-token budget; now every preset is capped to it."""
    from starlette.testclient import TestClient

    from longqa.http.serve import build_app
    from longqa.runner.threads import close_checkpointers
    from tests.test_agent_embedding import FACTS, OBSERVATORY_Q, document_text

    root = tmp_path / "root"
    root.mkdir()
    (root / "yearbook.md").write_text(document_text(list(FACTS.values()), sections=40), "utf-8")
    monkeypatch.delenv("LONGQA_SERVER", raising=False)  # build_app serves as a server without it
    monkeypatch.setenv("LONGQA_DOCUMENTS_ROOT", str(root))
    monkeypatch.setenv("LONGQA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LONGQA_MODEL", "scripted")
    monkeypatch.setenv("LONGQA_QUESTION_BUDGET", "900")
    monkeypatch.setenv("LONGQA_KEYS_FILE", str(tmp_path / "no-keys.json"))
    with TestClient(build_app(), base_url="http://127.0.0.1:8123", client=("127.0.0.1", 50000)) as client:
        body = {"question": OBSERVATORY_Q, "documents": ["yearbook.md"], "context": {"strategy": strategy}}
        out = client.post("/ask", json=body).json()
    close_checkpointers()
    assert out["plan"]["strategy"] == strategy, out
    assert out["totals"]["question_budget"] == 900
    assert 0 < out["totals"]["input_tokens"] <= 900, out["totals"]
