"""longqa/'s rooms (issue 51): the command line, the warm server, the HTTP servers and the runner they all
stand on each live in their own folder, say what enters and what leaves, and import only downward, with
no import circle among their modules, whether the import sits at the top of a module or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LONGQA = ROOT / "longqa"
# which rooms each room may import (besides itself and the layers below longqa/): ARCHITECTURE.md's table.
# The warm server runs the CLI's commands in its children, so it stands above the CLI; the CLI starts
# `longqa serve` and manages its keys; the servers never import each other or the CLI.
MAY_IMPORT = {
    "warm": {"cli", "runner"},
    "cli": {"http", "runner"},
    "http": {"runner"},
    "runner": set(),
}
MAX_FOLDER_LINES = 4000


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in MAY_IMPORT else None


def _run_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import the module can run, in functions too; those under `if TYPE_CHECKING:` aside."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _graph() -> dict[str, set[str]]:
    """longqa/'s modules -> the longqa/ modules they import (a package's `from P import m` names module P.m)."""
    modules = {_module(p): p for p in LONGQA.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in _run_time_imports(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{module}: a relative import (write it absolute)"
                targets = [f"{node.module}.{a.name}" for a in node.names]
                targets = [t if t in modules else node.module for t in targets]
            else:
                targets = [a.name for a in node.names]
            edges[module] |= {t for t in targets if t in modules and t != module}
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while (w := stack.pop()) != v:
                part.append(w)
            if part:
                circles.append(sorted([v, *part]))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_among_longqa_modules():
    assert _circles(_graph()) == []


def test_the_circle_check_finds_one():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_rooms_import_only_downward():
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if (here := _room(module)) and (there := _room(target)) and there != here and there not in MAY_IMPORT[here]
    )
    assert not upward, upward


def test_every_longqa_module_lives_in_a_room():
    loose = sorted(p.name for p in LONGQA.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"modules directly in longqa/ (put each in its room): {loose}"
    assert {p.name for p in LONGQA.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(MAY_IMPORT)


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_each_room_says_what_enters_and_what_leaves(room):
    doc = ast.get_docstring(ast.parse((LONGQA / room / "__init__.py").read_text("utf-8"))) or ""
    assert "Enters" in doc and "Leaves" in doc, room


def test_no_folder_holds_more_than_4000_lines_of_its_own():
    folders = {p.parent for p in LONGQA.rglob("*.py")}
    sizes = {
        f.relative_to(ROOT).as_posix(): sum(len(p.read_text("utf-8").splitlines()) for p in f.glob("*.py"))
        for f in folders
    }
    assert not {f: n for f, n in sizes.items() if n > MAX_FOLDER_LINES}, sizes
