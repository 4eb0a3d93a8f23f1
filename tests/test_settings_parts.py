"""The run settings in three parts (deployment, run, research): what each holds, that a server's
caller cannot set the deployment's and is bounded by its ceilings, that a run's settings are
resolved once and carried in the runtime context, and that longqa reads its configuration from the
environment only in the settings' own readers."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from longqa.contracts import settings as settings_module
from longqa.contracts.ceilings import CEILINGED, GRANULARITY_FIELDS, caller_context, deployment_ceilings
from longqa.contracts.settings import (
    DEPLOYMENT_FIELDS,
    RESEARCH_FIELDS,
    RUN_FIELDS,
    InvalidSettings,
    RunContext,
    Settings,
    resolve_settings,
    settings_of,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["analyzer", "contracts", "evals", "graph", "llm", "longqa", "nodes", "prompts", "retrieval", "services"]
TEXT = (
    "The Brannock lighthouse stands on a granite reef two miles off the northern cape. It was first lit in 1871.\n\n"
    "In 1904 the oil lamp was replaced by a paraffin vapour burner, which tripled the range of the light.\n"
)


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("LONGQA_") and n not in ("LONGQA_HOME", "LONGQA_TOKENIZER")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LONGQA_SERVER", "1")


# -- the three parts ---------------------------------------------------------------------------------


def test_each_part_holds_its_own_fields_and_settings_is_all_three():
    assert {"home", "chroma_host", "chroma_port", "base_url", "api_key_env", "postgres_uri", "documents_root"} <= set(
        DEPLOYMENT_FIELDS
    )
    assert {"server", "node_threads", "keys_file", "ceilings", "offered_models", "max_words", "max_file_mb"} <= set(
        DEPLOYMENT_FIELDS
    )
    assert set(RUN_FIELDS) == {
        "model",
        "strategy",
        "temperature",
        "timeout_s",
        "deadline_s",
        "max_retries",
        "context_window",
        "question_budget",
        "max_answer_tokens",
    }
    assert {"factoid_k", "primary_granularity", "preferred_weight", "filter_mode", "evidence_budget"} <= set(
        RESEARCH_FIELDS
    )
    assert {"precision", "bridge_seeds", "analyze_max_tokens", "max_hops", "chunking"} <= set(RESEARCH_FIELDS)
    parts = [set(DEPLOYMENT_FIELDS), set(RUN_FIELDS), set(RESEARCH_FIELDS)]
    assert sum(map(len, parts)) == len(set.union(*parts)), "a field in two parts"
    assert set.union(*parts) == set(Settings.model_fields)
    assert set(RunContext.model_fields) == set(RUN_FIELDS) | set(RESEARCH_FIELDS)
    assert list(Settings.model_fields)[: len(RUN_FIELDS)] == list(RUN_FIELDS)  # the run's choices come first


def test_the_flat_names_keep_working(monkeypatch: pytest.MonkeyPatch):
    """`--set k=v`, a context key and an environment variable reach a field of any part by its name."""
    monkeypatch.setenv("LONGQA_QUESTION_BUDGET", "2500")
    monkeypatch.setenv("LONGQA_NODE_THREADS", "8")
    s = Settings(factoid_k="7", precision="gap, redundant", home="/tmp/x")
    assert (s.question_budget, s.node_threads, s.factoid_k, s.precision) == (2500, 8, 7, ["gap", "redundant"])
    assert str(s.index_settings().home) == "/tmp/x"
    with pytest.raises(ValueError, match="did you mean 'factoid_k'"):
        Settings(factiod_k=3)


# -- what a server's caller may set ------------------------------------------------------------------


@pytest.mark.parametrize("name", DEPLOYMENT_FIELDS)
def test_a_caller_cannot_set_a_deployment_field(server_env, name: str):
    value = {"server": False, "chroma_port": 1, "node_threads": 1, "ceilings": {}, "offered_models": []}.get(name, "/x")
    with pytest.raises(InvalidSettings, match=f"setting '{name}' is fixed by the deployment"):
        caller_context({name: value})
    with pytest.raises(InvalidSettings, match=f"'{name}' is fixed by the deployment"):
        resolve_settings({name: value})  # a context that reached the graph past the guard


def test_the_deployment_keeps_its_own_values_whatever_the_caller_chose(server_env, monkeypatch, tmp_path):
    monkeypatch.setenv("LONGQA_DOCUMENTS_ROOT", str(tmp_path))
    run = resolve_settings(RunContext(factoid_k=3, strategy="rag"))
    assert (run.factoid_k, run.strategy, run.server, run.documents_root) == (3, "rag", True, tmp_path)


# every run field is bounded on a server: a ceiling, the offered models, or free because it costs nothing
COSTLESS = {
    "strategy": "a preset of research knobs; what its calls read and write is bounded by the ceilings on the "
    "window, the k's, the output caps, the question budget (adaptive strategies) and the deadline",
    "temperature": "sampling only: no tokens, calls or time",
}


def test_every_run_field_is_bounded_by_the_deployment():
    for name in RUN_FIELDS:
        assert name in CEILINGED or name == "model" or name in COSTLESS, f"{name} has no ceiling"


@pytest.mark.parametrize("name", [n for n in RUN_FIELDS if n in CEILINGED])
def test_a_run_field_over_its_ceiling_is_refused_naming_it(server_env, name: str):
    top = deployment_ceilings().highest[name]
    over = top * 2 if isinstance(top, float) else int(top) + 1
    if name == "max_retries":
        over = int(top) + 1 if top < 5 else None
    if over is None:
        pytest.skip("the deployment's own value is the field's maximum")
    with pytest.raises(InvalidSettings, match=f"{name}: at most"):
        caller_context({name: over})


def test_the_caller_picks_a_model_the_deployment_offers(server_env, monkeypatch):
    monkeypatch.setenv("LONGQA_MODEL", "scripted")
    with pytest.raises(InvalidSettings, match="model: 'openai:gpt-4o' is not offered"):
        caller_context({"model": "openai:gpt-4o"})
    monkeypatch.setenv("LONGQA_MODELS", "openai:gpt-4o")
    assert caller_context({"model": "openai:gpt-4o"}).model == "openai:gpt-4o"


def test_research_knobs_are_bounded_too(server_env):
    with pytest.raises(InvalidSettings, match="factoid_k: at most 5"):
        caller_context({"factoid_k": 6})
    with pytest.raises(InvalidSettings, match="primary_granularity: one of"):
        caller_context({"primary_granularity": 333})
    assert set(GRANULARITY_FIELDS) <= set(RESEARCH_FIELDS)


# -- resolved once per run ---------------------------------------------------------------------------


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every call of `resolve_settings`, the one place a run's context is validated."""
    calls: list[object] = []
    real = settings_module.resolve_settings

    def counted(context):
        calls.append(context)
        return real(context)

    monkeypatch.setattr(settings_module, "resolve_settings", counted)
    return calls


@pytest.mark.parametrize("server", [False, True])
def test_a_run_s_settings_are_validated_once(monkeypatch, resolutions, server: bool):
    """The LangGraph server's path: a RunContext, read by every node (about 16 reads a run), is
    resolved at the first read and kept for the rest of the run."""
    from longqa.graph.server import graph as server_graph

    monkeypatch.setenv("LONGQA_MODEL", "scripted")
    if server:
        monkeypatch.setenv("LONGQA_SERVER", "1")
    out = server_graph.invoke(
        {"question": "When was the oil lamp replaced?", "texts": [TEXT]},
        context={"model": "scripted", "strategy": "adaptive", "question_budget": 1900},
    )
    assert out["status"] == "answered", out.get("error")
    assert len(out["route"]) >= 8  # many nodes read the settings
    assert len(resolutions) == 1, resolutions
    again = server_graph.invoke({"question": "When was it first lit?", "texts": [TEXT]}, context={"model": "scripted"})
    assert again["status"] == "answered" and len(resolutions) == 2  # a new run, resolved anew


def test_settings_passed_in_process_are_never_validated_again(resolutions):
    from longqa.graph.graph import graph

    settings = Settings(model="scripted", strategy="rag")
    out = graph.invoke({"question": "When was the oil lamp replaced?", "texts": [TEXT]}, context=settings)
    assert out["status"] == "answered", out.get("error")
    assert resolutions == []


def test_a_context_over_a_ceiling_is_refused_at_its_first_read(server_env):
    """A RunContext that reached the graph past the server's guard (an assistant's) is checked
    against the ceilings where it is resolved, in one line."""

    class Runtime:
        context = RunContext(question_budget=0)

    with pytest.raises(InvalidSettings, match="question_budget: 0 \\(no limit\\) is not allowed on this server"):
        settings_of(Runtime())  # type: ignore[arg-type]


# -- the environment is read by the settings alone -------------------------------------------------

# where longqa may touch os.environ besides the settings' readers, and why
ENVIRONMENT_ALLOWED = {
    "contracts/environment.py": "the run settings' readers: each field's default factory",
    "retrieval/environment.py": "the engines' process-wide choices (tokenizer, embedder, cache folders), which "
    "load below contracts/ (ARCHITECTURE.md's layers) and so cannot receive Settings",
    "longqa/__init__.py": "setdefault of third-party libraries' own switches (telemetry, tracing), not longqa's",
    "longqa/cli/console.py": "TERM: whether the terminal draws colour, not a setting",
    "llm/models.py": "the API key, a secret named by api_key_env: read when the client is made, never kept in "
    "Settings, which travel in run contexts and checkpoints",
    "evals/long_contexts.py": "LONGQA_SHARED_DATA: where the evaluation's data sets lie, a harness option, "
    "not a run setting",
    "longqa/cli/warm_client.py": "the standard-library entry point: hands the caller's whole environment to the warm "
    "server (its question runs with the caller's settings) and reads the warm server's own switches "
    "(LONGQA_WARM*) before anything that could read Settings is imported",
    "longqa/cli/warm_protocol.py": "the warm server's home and stamp (a changed environment is a new server), "
    "computed by the standard-library client",
    "longqa/warm/worker.py": "a warm server's worker (or standby) takes on its client's environment, then reads "
    "Settings like any process",
}
# the one writer besides longqa/__init__.py: a warm server's forked worker becomes its client's process
ENVIRONMENT_WRITERS = ("longqa/__init__.py:", "longqa/warm/worker.py:")


def _environment_uses(tree: ast.AST) -> list[int]:
    """Lines that read or write os.environ or call getenv/putenv."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if {a.name for a in node.names} & {"environ", "getenv", "putenv"}:
                lines.append(node.lineno)
    return lines


def test_the_environment_is_read_only_where_allowed():
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = path.relative_to(ROOT).as_posix()
            lines = _environment_uses(ast.parse(path.read_text("utf-8")))
            if lines and where not in ENVIRONMENT_ALLOWED:
                found[where] = lines
    assert not found, f"environment read outside the settings: {found}"


def test_the_environment_check_finds_a_read_and_a_write():
    code = "import os\nfrom os import getenv\nx = os.environ.get('A')\nos.environ['B'] = '1'\ny = os.getenv('C')\n"
    assert sorted(_environment_uses(ast.parse(code))) == [2, 3, 4, 5]


def test_only_longqa_init_writes_to_the_environment():
    """A setting is passed in Settings, never by changing the process's environment (longqa serve
    used to set LONGQA_SERVER and LONGQA_HOME that way)."""
    writers = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                target = node.targets[0] if isinstance(node, ast.Assign) else None
                if isinstance(target, ast.Subscript) and ast.unparse(target.value) == "os.environ":
                    writers.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func).startswith("os.environ.")
                    and ast.unparse(node.func).endswith(("setdefault", "update", "pop"))
                ):
                    writers.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    assert all(w.startswith(ENVIRONMENT_WRITERS) for w in writers), writers


def test_longqa_serve_is_a_server_without_changing_the_environment(monkeypatch, tmp_path):
    """`build_app` runs as a server from its own settings: without a documents root a path is
    refused, and os.environ is as it was."""
    from starlette.testclient import TestClient

    from longqa.http.serve import build_app

    for name in ("LONGQA_SERVER", "LONGQA_DOCUMENTS_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LONGQA_KEYS_FILE", str(tmp_path / "no-keys.json"))
    before = dict(os.environ)
    with TestClient(build_app(), base_url="http://127.0.0.1:8123", client=("127.0.0.1", 50000)) as client:
        out = client.post("/ask", json={"question": "When was it lit?", "documents": ["a.md"]}).json()
        assert out["status"] == "error" and "this server reads no files" in out["error"], out
        assert client.post("/ask", json={"question": "x", "context": {"home": "/etc"}}).status_code == 422
    assert dict(os.environ) == before
