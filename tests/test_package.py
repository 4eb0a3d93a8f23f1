"""The house rules: one installed import name, layers whose arrows point down, token counting that
never depends on the network, and indexing that is safe to run from several threads at once."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from longqa.retrieval import bm25
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.tokens import TiktokenCounter, TokenizerUnavailable, default_counter

from .conftest import harbor_text

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["analyzer", "contracts", "evals", "graph", "llm", "longqa", "nodes", "prompts", "retrieval", "services"]


def test_the_wheel_installs_one_top_level_name(tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # a quiet build: no setuptools warning about packages or data it would leave out
    assert "absent from the `packages` configuration" not in built.stderr + built.stdout
    assert "Package would be ignored" not in built.stderr + built.stdout
    (wheel,) = tmp_path.glob("longqa-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = "-".join(wheel.name.split("-")[:2]) + ".dist-info"
    assert {n.split("/")[0] for n in names} == {"longqa", dist_info}
    for package in PACKAGES:
        prefix = "longqa/" if package == "longqa" else f"longqa/{package}/"
        assert f"{prefix}__init__.py" in names, package
    assert "longqa/nodes/generate.py" in names and "longqa/analyzer/data/weights.npz" in names
    assert "longqa/retrieval/read/office/word.py" in names and "longqa/retrieval/index/library/catalog.py" in names
    assert not any(n.startswith(("longqa/tests/", "tests/", "bench/")) for n in names)


def _imports(package: str) -> dict[str, set[str]]:
    """module file -> the longqa modules it imports (absolute and relative), read from the source."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):  # sub-folders too (retrieval/read/, ...)
        found = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:  # relative: inside its own package
                    found.add(f"longqa.{package}.{node.module or ''}".rstrip("."))
                elif node.module and node.module.startswith("longqa"):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("longqa")}
        out[path.relative_to(ROOT).as_posix()] = found
    return out


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else "longqa"


# what each layer may import (besides itself); ARCHITECTURE.md's table
MAY_IMPORT = {
    "prompts": set(),
    "retrieval": set(),
    "analyzer": {"retrieval"},
    "llm": {"retrieval", "prompts", "analyzer"},
    "contracts": {"retrieval", "analyzer", "llm"},
    "services": {"contracts", "retrieval"},
    "nodes": {"contracts", "services", "retrieval", "llm", "prompts", "analyzer"},
    "graph": {"contracts", "nodes"},
    "evals": {"contracts", "services", "retrieval", "llm", "graph", "longqa"},
}


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_arrows_point_down(package):
    for module, imported in _imports(package).items():
        for name in imported:
            layer = _layer(name)
            if layer == package:
                assert package != "nodes" or name in ("longqa.nodes", f"longqa.nodes.{Path(module).stem}"), (
                    f"{module} imports another node: {name}"
                )
                continue
            assert layer in MAY_IMPORT[package], f"{module} imports {name}"
            assert not any(part.startswith("_") for part in name.split(".")), f"{module} imports private {name}"


def test_contracts_hold_types_settings_and_the_pure_plan():
    """No service in contracts/: no caches, locks, threads, file handling or processes (those are
    services/, graph/ and the engines); settings may read the environment."""
    banned_modules = {"threading", "concurrent.futures", "shutil", "tempfile", "subprocess", "sqlite3", "fcntl"}
    for path in sorted((ROOT / "contracts").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & banned_modules, f"{path.name} imports a service module"
            elif isinstance(node, ast.ImportFrom) and node.module:
                assert node.module not in banned_modules, f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Attribute) and node.attr in ("cache", "lru_cache"):
                raise AssertionError(f"{path.name} keeps a cache")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                raise AssertionError(f"{path.name} opens a file")


def test_no_production_module_is_over_450_lines():
    """Small modules with one job each (benchmarks, samples and tests aside)."""
    long = {
        path.relative_to(ROOT).as_posix(): n
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (n := len(path.read_text("utf-8").splitlines())) > 450
    }
    assert not long, long


def test_no_folder_holds_more_than_4000_lines_of_its_own():
    """A folder's own modules (not its sub-folders') stay readable as one room (issue 51)."""
    folders = {p.parent for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    own = {
        f.relative_to(ROOT).as_posix(): sum(len(p.read_text("utf-8").splitlines()) for p in f.glob("*.py"))
        for f in folders
    }
    assert len(own) > len(PACKAGES)  # the sub-folders are seen
    assert not {f: n for f, n in own.items() if n > 4000}


def test_evals_read_no_private_name():
    for path in sorted((ROOT / "evals").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("longqa"):
                assert not any(a.name.startswith("_") for a in node.names), f"{path.name}: {node.module}"


# -- token counting ---------------------------------------------------------------------------------


def test_default_counter_is_the_bundled_word_piece_tokenizer(monkeypatch):
    monkeypatch.delenv("LONGQA_TOKENIZER", raising=False)
    default_counter.cache_clear()
    try:
        assert default_counter().name == "minilm-wordpiece"
        monkeypatch.setenv("LONGQA_TOKENIZER", "sentencepiece")
        default_counter.cache_clear()
        with pytest.raises(TokenizerUnavailable, match="LONGQA_TOKENIZER='sentencepiece'"):
            default_counter()
    finally:
        default_counter.cache_clear()


def test_tiktoken_is_read_from_its_cache_and_never_downloaded(monkeypatch, tmp_path):
    tiktoken_load = pytest.importorskip("tiktoken.load")
    fetched: list[str] = []
    monkeypatch.setattr(tiktoken_load, "read_file", lambda blobpath: fetched.append(blobpath) or b"")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: nothing cached
    with pytest.raises(TokenizerUnavailable, match="never downloads"):
        TiktokenCounter("r50k_base")
    assert fetched == [], "tiktoken's fetch was called"
    assert tiktoken_load.read_file is not None and tiktoken_load.read_file.__name__ == "<lambda>", "fetch restored"


# -- concurrency: the eval race -------------------------------------------------------------------------


def test_stemming_from_many_threads_gives_the_single_thread_result():
    """A snowball stemmer shared by threads mixes their words (IndexError, or a wrong stem)."""
    words = [
        f"{stem}{suffix}"
        for stem in ("organ", "nation", "harbor", "dredg", "connect", "relat", "gener")
        for suffix in ("ization", "izations", "ing", "ings", "ness", "fully", "ational", "ed", "er", "ers")
    ]
    words = [f"{w}{'x' * n}" for n in range(40) for w in words]  # 2,800 distinct words, uncached
    expected = {w: bm25.snowballstemmer.stemmer("english").stemWord(w) for w in words}
    bm25._stem.cache_clear()
    results: dict[int, dict[str, str]] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            results[n] = {w: bm25._stem(w) for w in words[n::4] + words[(n + 1) % 4 :: 4]}
        except BaseException as e:  # noqa: BLE001 - collected and reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for stems in results.values():
        assert stems == {w: expected[w] for w in stems}


def test_several_documents_indexed_at_once_match_one_at_a_time(make_store):
    texts = [
        harbor_text(10 + n).replace("Harbor", f"Harbor{n}")
        + f"\n\nClosing note {n}: "
        + " ".join(f"reorganizations{n}{i} nationalizing{i}" for i in range(300))
        for n in range(4)
    ]
    documents = [document_from_text(t, source=f"doc{n}.md") for n, t in enumerate(texts)]
    concurrent_store = make_store()
    errors: list[BaseException] = []
    built = {}

    def index(document):
        try:
            built[document.doc_id] = concurrent_store.index(document, 48, dense=False)
        except BaseException as e:  # noqa: BLE001 - collected and reported below
            errors.append(e)

    bm25._stem.cache_clear()
    threads = [threading.Thread(target=index, args=(d,)) for d in documents]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    bm25._stem.cache_clear()
    alone_store = make_store(home=concurrent_store.settings.home.parent / "alone")
    for document in documents:
        alone = alone_store.index(document, 48, dense=False)
        assert built[document.doc_id].tokens == alone.tokens
        assert [(c.start, c.end) for c in built[document.doc_id].chunks] == [(c.start, c.end) for c in alone.chunks]
