"""The package's import graph, read from the source (issue 51): no import circle among longqa's modules
at run time, and retrieval's rooms import only downward (read <- index <- search, all over the modules
directly in retrieval/, which import none of them).

Every import counts, at module level or inside a function (a function-local import only delays a
circle), except those under `if TYPE_CHECKING:` (never run). An import of a package counts as an import
of its `__init__`; `from package import name` counts as an import of `package.name` where that is a
module."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["analyzer", "contracts", "evals", "graph", "llm", "longqa", "nodes", "prompts", "retrieval", "services"]
# retrieval's rooms, lowest first: a module may import its own room's and lower rooms' modules only
ROOMS = ("longqa.retrieval", "longqa.retrieval.read", "longqa.retrieval.index", "longqa.retrieval.search")

Graph = dict[str, dict[str, int]]  # module -> {imported module: the line of the import}


def _module_name(root: Path, path: Path) -> str:
    """`retrieval/read/loaders.py` -> `longqa.retrieval.read.loaders` (`longqa/` is the package itself)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    parts = parts[1:] if parts[0] == "longqa" else parts
    return ".".join(["longqa", *(parts[:-1] if parts[-1] == "__init__" else parts)])


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a tree, inside functions too, but not under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            for other in node.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    for alias in node.names:
        yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base


def import_graph(root: Path, packages: list[str]) -> Graph:
    """Each longqa module of `packages` (folders under `root`) -> the longqa modules it imports."""
    paths = {_module_name(root, p): p for package in packages for p in sorted((root / package).rglob("*.py"))}
    graph: Graph = {}
    for module, path in paths.items():
        edges = graph.setdefault(module, {})
        for node in _imports(ast.parse(path.read_text("utf-8"))):
            for target in _targets(node, module, path.name == "__init__.py", set(paths)):
                while target not in paths and "." in target:  # a name imported from a module: the module
                    target = target.rsplit(".", 1)[0]
                if target in paths and target != module:
                    edges.setdefault(target, node.lineno)
    return graph


def find_cycle(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One import circle of the graph as [a, b, ..., a], or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, {})):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def _room(module: str) -> int | None:
    """The rank of a retrieval module's room (0: the modules directly in retrieval/), None elsewhere
    and for retrieval's `__init__` (the package's face: it imports its names lazily)."""
    if module == ROOMS[0] or not module.startswith(ROOMS[0] + "."):
        return None
    return max(i for i, room in enumerate(ROOMS) if module == room or module.startswith(room + "."))


def upward_imports(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """`module:line imports target` for each retrieval import of a room above the importer's."""
    found = []
    for module, edges in sorted(graph.items()):
        for target, line in sorted(edges.items()):
            own, theirs = _room(module), _room(target)
            if own is not None and theirs is not None and theirs > own:
                found.append(f"{module}:{line} imports {target} ({ROOMS[theirs]} is above {ROOMS[own]})")
    return found


def _described(cycle: list[str], graph: Graph) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)) + f" -> {cycle[-1]}"


def test_no_import_circle_in_the_package():
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 150 and sum(map(len, graph.values())) > 400  # the graph sees the package
    cycle = find_cycle(graph)
    assert not cycle, f"an import circle: {_described(cycle, graph)}"


def test_retrieval_s_rooms_import_only_downward():
    graph = import_graph(ROOT, PACKAGES)
    assert {_room(m) for m in graph} >= {0, 1, 2, 3}  # every room holds modules
    assert not upward_imports(graph)


# -- the checks check themselves, on a tiny package -------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, "utf-8")


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    _write(
        tmp_path,
        {
            "retrieval/__init__.py": "",
            "retrieval/a.py": "from .b import f\n",
            "retrieval/b.py": "def f():\n    from longqa.retrieval import a\n",
            "retrieval/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
            "retrieval/d.py": "import typing\nif typing.TYPE_CHECKING:\n    from . import c\n"
            "else:\n    from . import a\n",
        },
    )
    graph = import_graph(tmp_path, ["retrieval"])
    assert graph["longqa.retrieval.c"] == {}  # a type-checking import is not run
    assert graph["longqa.retrieval.d"] == {"longqa.retrieval.a": 5}  # its `else` is
    assert find_cycle(graph) == ["longqa.retrieval.a", "longqa.retrieval.b", "longqa.retrieval.a"]
    del graph["longqa.retrieval.b"]["longqa.retrieval.a"]
    assert find_cycle(graph) == []


def test_an_upward_import_between_rooms_is_found(tmp_path):
    _write(
        tmp_path,
        {
            "retrieval/__init__.py": "",
            "retrieval/words.py": "",
            "retrieval/read/__init__.py": "",
            "retrieval/read/loaders.py": "from ..words import x\n",
            "retrieval/index/__init__.py": "",
            "retrieval/index/store.py": "from ..read.loaders import y\n",
            "retrieval/search/__init__.py": "",
            "retrieval/search/links.py": "from ..index import store\n",
        },
    )
    graph = import_graph(tmp_path, ["retrieval"])
    assert graph["longqa.retrieval.search.links"] == {"longqa.retrieval.index.store": 1}
    assert upward_imports(graph) == []
    _write(tmp_path, {"retrieval/index/library/vocabulary.py": "def v():\n    from ...search.links import n\n"})
    _write(tmp_path, {"retrieval/words.py": "from longqa.retrieval.read import loaders\n"})
    assert upward_imports(import_graph(tmp_path, ["retrieval"])) == [
        "longqa.retrieval.index.library.vocabulary:2 imports longqa.retrieval.search.links"
        " (longqa.retrieval.search is above longqa.retrieval.index)",
        "longqa.retrieval.words:1 imports longqa.retrieval.read.loaders"
        " (longqa.retrieval.read is above longqa.retrieval)",
    ]
