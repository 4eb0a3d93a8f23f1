"""ARCHITECTURE.md stays true to the code, and `longqa.contracts` stays light: the names the page
lists exist, the documents the code points to are in the repository, and importing the contracts
loads no engine (tokenizer, model runtime, vector store)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["analyzer", "contracts", "evals", "graph", "llm", "longqa", "nodes", "prompts", "retrieval", "services"]
# names ARCHITECTURE.md quotes from LangGraph or Python, not from longqa
OUTSIDE_NAMES = {
    "BlockingError",
    "False",
    "None",
    "Overwrite",
    "Send",
    "add_messages",
    "ainvoke",
    "astream",
    "get_state",
    "invoke",
    "stream_subgraphs",
    "yield",
}
IDENTIFIER = re.compile(r"@?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\*|\(.*\))?")


def _defined_names() -> set[str]:
    """Every module, function, class, module-level name and class attribute of the package."""
    names: set[str] = {*PACKAGES, "longqa"}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):  # sub-folders too (retrieval/read/, ...)
            names.add(path.stem)
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(node.name)
                elif isinstance(node, ast.arg):  # a parameter (`starts_turn`)
                    names.add(node.arg)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isupper():
                    names.add(node.value)  # an environment variable the code reads (`LONGQA_HOME`)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
                elif isinstance(node, ast.Assign):
                    names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _quoted(text: str) -> list[str]:
    return [q for q in re.findall(r"`([^`\n]+)`", text) if q.strip()]


def _missing(text: str, defined: set[str]) -> list[str]:
    """The paths and names quoted in `text` that the repository does not have."""
    missing = []
    for quoted in _quoted(text):
        if "<" in quoted:  # a pattern such as nodes/<operator>.py
            continue
        if "/" in quoted or quoted.endswith(".py"):
            where = [ROOT / quoted] if "/" in quoted else list(ROOT.glob(f"*/**/{quoted}"))
            if not any(p.exists() for p in where):
                missing.append(quoted)
            continue
        match = IDENTIFIER.fullmatch(quoted)
        if not match:  # a phrase or a value (`status: error`, `{}`), not a name
            continue
        name, suffix = match.group(1), match.group(2) or ""
        last = name.split(".")[-1]
        if name.startswith("longqa.") and (ROOT / "/".join(name.split(".")[1:])).exists():
            continue
        if suffix == "*":
            if not any(d.startswith(last) for d in defined):
                missing.append(quoted)
        elif last not in defined and last not in OUTSIDE_NAMES:
            missing.append(quoted)
    return missing


def test_every_name_architecture_lists_exists():
    missing = _missing((ROOT / "ARCHITECTURE.md").read_text("utf-8"), _defined_names())
    assert not missing, f"ARCHITECTURE.md names what the code does not have: {missing}"


def test_architecture_names_every_folder_of_the_package():
    """A newcomer finds each room on the map: every folder holding modules is named (`retrieval/read/office/`)."""
    text = (ROOT / "ARCHITECTURE.md").read_text("utf-8")
    folders = {
        path.parent.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    assert len(folders) > len(PACKAGES)  # the sub-folders are seen
    unnamed = sorted(f for f in folders if f"{f}/" not in text)
    assert not unnamed, f"ARCHITECTURE.md never names these folders: {unnamed}"


def test_the_check_finds_a_name_that_is_gone():
    text = "`build_graph()` `graph/nowhere.py` `build_the_graph_twice()` `AFTER_*` `NOPE_*` `status: error` `Send`"
    assert _missing(text, _defined_names()) == ["graph/nowhere.py", "build_the_graph_twice()", "NOPE_*"]


def test_the_code_points_only_to_documents_in_the_repository():
    """A design page named in the code (`ARCHITECTURE.md`, `README.md`, ...) is one we ship."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [f for f in tracked.splitlines() if f.endswith((".py", ".toml", ".json", ".md")) and (ROOT / f).exists()]
    shipped = {Path(f).name for f in files if f.endswith(".md")}
    dangling = {
        f"{f}: {name}"
        for f in files
        for name in re.findall(r"\b[A-Z][A-Z_]+\.md\b", (ROOT / f).read_text("utf-8", errors="replace"))
        if name not in shipped
    }
    assert not dangling, sorted(dangling)


HEAVY = ("tokenizers", "transformers", "onnxruntime", "chromadb", "torch", "sentence_transformers", "tiktoken")


def test_importing_the_contracts_loads_no_engine():
    """`longqa.contracts` is types, settings and pure functions: importing all of it loads no
    tokenizer, model runtime, vector store or model client."""
    code = (
        "import json, sys\n"
        "import longqa.contracts.budget, longqa.contracts.ceilings, longqa.contracts.plan\n"
        "import longqa.contracts.settings, longqa.contracts.state, longqa.contracts.verdicts\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(done.stdout))
    assert not {m.split(".")[0] for m in loaded} & {*HEAVY, "langchain_openai", "openai"}
    engines = {
        "longqa.llm.budget",
        "longqa.llm.models",
        "longqa.retrieval.index.store",
        "longqa.retrieval.index.embed.embedder",
    }
    assert not loaded & engines, sorted(loaded & engines)


@pytest.mark.parametrize("package", ["longqa.retrieval", "longqa.analyzer"])
def test_a_package_s_names_are_imported_when_first_used(package):
    """The engines' packages export their names lazily, and every exported name resolves."""
    code = (
        "import importlib, json, sys\n"
        f"p = importlib.import_module({package!r})\n"
        "before = sorted(m for m in sys.modules if m.startswith(p.__name__ + '.'))\n"
        "missing = [n for n in p.__all__ if getattr(p, n, None) is None]\n"
        "print(json.dumps([before, missing]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, missing = json.loads(done.stdout)
    assert before == [] and missing == []
    module = __import__(package, fromlist=["__all__"])
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        module.__getattr__("Nothing")
