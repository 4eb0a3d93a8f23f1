"""ARCHITECTURE.md's "Adding an operator", held: an operator is one node module that does no budget,
deadline, failure or route plumbing. The model-node driver fits its prompt to the question budget and
gives its calls the run's deadline (llm/model_node.py), the node wrapper ends a run it fails
(graph/node.py, contracts/failure.py), and the graph routes (graph/graph.py): every router asks only
`ended(state)`."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from longqa.contracts.failure import ended, fail
from longqa.contracts.settings import Settings
from longqa.llm.budget import spent

ROOT = Path(__file__).resolve().parents[1]
# respond closes the run: it reports the failure fields and totals the ledger; index_documents is the
# index graph's only node, whose `error` output is that graph's whole report (no router reads it)
EXEMPT = {"__init__.py", "respond.py", "index_documents.py"}
FAILURE_FIELDS = {"error", "failed"}
RUN_FIELDS = {"usage", "deadline_at", "allowance"}  # the ledger, the clock, a call's share of the budget
# the question budget's arithmetic (llm/budget.py) and the calls the driver makes
BUDGET_NAMES = {"allowance", "calibration", "cut_to", "fit", "left", "prompt_tokens", "spent", "usable"}
BUDGET_NAMES |= {"SAFETY", "NOTE_TOKENS", "generator_share", "call_llm", "acall_llm"}


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def plumbing(source: str) -> list[str]:
    """What in a node module's source is the wiring's job: a failure field written, the ledger,
    the clock or an allowance read or written, the budget's arithmetic or the model called directly."""
    fields, found = FAILURE_FIELDS | RUN_FIELDS, []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                name = _text(key)
                if name in fields or (name == "status" and _text(value) == "error"):
                    found.append(f"line {node.lineno}: writes {name!r}")
        elif isinstance(node, ast.Subscript) and _text(node.slice) in fields:
            found.append(f"line {node.lineno}: [{_text(node.slice)!r}]")
        elif isinstance(node, ast.Call):
            called = node.func
            if isinstance(called, ast.Attribute) and called.attr == "get" and node.args:
                if _text(node.args[0]) in fields:
                    found.append(f"line {node.lineno}: reads {_text(node.args[0])!r}")
            found += [f"line {node.lineno}: passes {kw.arg}=" for kw in node.keywords if kw.arg in fields]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("longqa"):
            names = sorted(a.name for a in node.names if a.name in BUDGET_NAMES)
            if names:
                found.append(f"line {node.lineno}: imports {', '.join(names)} from {node.module}")
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        'def n(state):\n    return {"status": "error", "error": "x"}',
        'def n(state):\n    return {"failed": "n"}',
        "from longqa.llm.budget import fit\n",
        "from longqa.contracts.budget import allowance\n",
        'def n(state):\n    return ask(s, "n", m, allowance=cap)',
        'def n(state):\n    return state.get("usage")',
        'def n(state):\n    return {"deadline_at": state["deadline_at"]}',
        "from longqa.llm.calls import call_llm\n",
    ],
)
def test_the_scan_finds_plumbing(snippet):
    assert plumbing(snippet), snippet


def test_no_operator_does_budget_deadline_or_failure_plumbing():
    modules = sorted(p for p in (ROOT / "nodes").glob("*.py") if p.name not in EXEMPT)
    assert len(modules) >= 15
    found = {p.name: plumbing(p.read_text("utf-8")) for p in modules}
    assert not {name: lines for name, lines in found.items() if lines}


# -- the budget's arithmetic: one module, and no node or router doing it by hand ---------------------

ARITHMETIC = "longqa.llm.budget_arithmetic"
# the modules that call into the arithmetic: the counting and fitting (llm/budget.py), the call's
# retry and allowance checks (llm/calls.py), the organizer's sizing and the plan's shares (contracts/)
MAY_DO_ARITHMETIC = {"llm/budget.py", "llm/calls.py", "contracts/budget.py", "contracts/plan.py"}
# a quantity of the question budget, the model's window or an allowance, by its name
BUDGET_WORDS = ("budget", "allowance", "room", "spent", "usage", "window", "share", "overhead", "cap", "afford")


def _arithmetic_names() -> set[str]:
    """The public names `longqa.llm.budget_arithmetic` defines (its functions and constants)."""
    tree = ast.parse((ROOT / "llm" / "budget_arithmetic.py").read_text("utf-8"))
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return {n for n in names if not n.startswith("_") and n not in ("T", "Overheads")}


def _imports_arithmetic(node: ast.AST, package: str) -> bool:
    if isinstance(node, ast.ImportFrom):
        module = (f"longqa.{package}.{node.module or ''}" if node.level else node.module or "").rstrip(".")
        names = {a.name for a in node.names}
        return module == ARITHMETIC or (module == "longqa.llm" and "budget_arithmetic" in names)
    return isinstance(node, ast.Import) and any(a.name == ARITHMETIC for a in node.names)


def _budget_names(node: ast.AST) -> list[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    return sorted(n for n in found if any(w in n.lower() for w in BUDGET_WORDS))


def _is_text(node: ast.AST) -> bool:
    return any(isinstance(n, ast.JoinedStr) or _text(n) is not None for n in ast.walk(node))


def hand_arithmetic(source: str, package: str = "nodes") -> list[str]:
    """What in a node's or router's source is the budget's arithmetic: the arithmetic module or one of
    its names imported, or a sum, difference, comparison, min or max over a budget quantity."""
    found, arithmetic = [], _arithmetic_names()
    for node in ast.walk(ast.parse(source)):
        if _imports_arithmetic(node, package):
            found.append(f"line {node.lineno}: imports {ARITHMETIC}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("longqa"):
            names = sorted(a.name for a in node.names if a.name in arithmetic)
            found += [f"line {node.lineno}: imports {', '.join(names)}"] if names else []
        reckons = isinstance(node, ast.BinOp | ast.AugAssign | ast.Compare) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
        )
        if reckons and not _is_text(node) and _budget_names(node):
            found.append(f"line {node.lineno}: reckons with {', '.join(_budget_names(node))}")
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        "from longqa.llm.budget_arithmetic import call_cap\n",
        "from longqa.llm import budget_arithmetic\n",
        "from longqa.llm.budget import shrunk\n",
        "def n(state, plan, share):\n    return plan.budget // share",
        "def n(window, cap, q):\n    return max(window - cap - q, 0)",
        "def n(used, size, budget):\n    return used + size > budget",
        "def n(rest, room):\n    return min(rest, room)",
    ],
)
def test_the_scan_finds_budget_arithmetic(snippet):
    assert hand_arithmetic(snippet), snippet


def test_the_scan_lets_a_node_declare_and_report_its_budget():
    declared = 'SHARE = 0.35\ndef n(e, plan):\n    return f"{e.cap} tokens" + "!" if plan.budget else "k"'
    assert hand_arithmetic(declared) == []


def test_no_node_router_or_service_does_budget_arithmetic_by_hand():
    """The budget's arithmetic is `longqa.llm.budget_arithmetic`'s; a node asks the driver (`Prompt`)
    or `longqa.llm.budget` (which counts and calls into it), a router asks the plan."""
    found = {
        f"{package}/{p.name}": hand_arithmetic(p.read_text("utf-8"), package)
        for package in ("nodes", "graph", "services")
        for p in sorted((ROOT / package).glob("*.py"))
        if p.name not in EXEMPT
    }
    assert not {name: lines for name, lines in found.items() if lines}


def test_only_the_budget_modules_import_the_arithmetic():
    importers = {
        f"{path.parent.name}/{path.name}"
        for path in sorted(ROOT.glob("*/*.py"))
        if path.parent.name not in ("tests", "bench", "samples", "scripts", "examples", "docs")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if _imports_arithmetic(node, path.parent.name)
    }
    assert importers == MAY_DO_ARITHMETIC


BUDGET_MODULE = "longqa.llm.budget"


def imports_budget(source: str, package: str = "nodes") -> list[str]:
    """Where a module's source imports the budget module (`longqa.llm.budget`, or a name of it)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = (f"longqa.{package}.{node.module or ''}" if node.level else node.module or "").rstrip(".")
            names = {a.name for a in node.names}
            if module == BUDGET_MODULE or (module == "longqa.llm" and "budget" in names):
                found.append(f"line {node.lineno}: from {module} import {', '.join(sorted(names))}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name == BUDGET_MODULE]
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        "from longqa.llm.budget import Budget\n",
        "from longqa.llm import budget\n",
        "import longqa.llm.budget\n",
        "def n():\n    from longqa.llm.budget import LongContext\n",
    ],
)
def test_the_scan_finds_an_import_of_the_budget_module(snippet):
    assert imports_budget(snippet), snippet


def test_no_node_imports_the_budget_module():
    """Spending is the driver's (llm/model_node.py and what it calls): a node says what it would send
    (`Prompt`, `Window`) and what later calls will read, and never imports `longqa.llm.budget`."""
    modules = sorted((ROOT / "nodes").rglob("*.py"))
    assert len(modules) >= 15
    found = {str(p.relative_to(ROOT)): imports_budget(p.read_text("utf-8")) for p in modules}
    assert not {name: lines for name, lines in found.items() if lines}


# -- the routers -------------------------------------------------------------------------------------


def _routers() -> list[tuple[str, object, dict]]:
    """(name, router, its label map) of every conditional edge of the question graph."""
    from longqa.graph.graph import build_graph

    builder = build_graph()
    return [
        (f"{source}: {name}", branch.path.func, branch.ends)
        for source, branches in builder.branches.items()
        for name, branch in branches.items()
    ]


def test_every_router_asks_only_whether_the_run_ended():
    source = (ROOT / "graph" / "graph.py").read_text("utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            assert _text(node.args[0]) not in ("error", "status"), f"line {node.lineno} reads the failure fields"
        assert not (isinstance(node, ast.Subscript) and _text(node.slice) in ("error", "status")), node.lineno
    failed = {"question": "q", **fail("analyze", "analyze: it broke")}
    runtime = SimpleNamespace(context=Settings(model="scripted"))
    routers = _routers()
    assert len(routers) >= 16
    for name, router, ends in routers:
        takes_runtime = len(inspect.signature(router).parameters) == 2
        label = router(failed, runtime) if takes_runtime else router(failed)
        assert label == "failed" and ends["failed"] == "respond", (name, label)


def test_a_failure_after_the_context_is_not_sent_down_the_evidence_only_edge():
    from longqa.graph.graph import AFTER_CONTEXT, after_context

    runtime = SimpleNamespace(context=Settings(model=None))
    assert after_context(fail("process_context", "process_context: it broke"), runtime) == "failed"
    assert AFTER_CONTEXT["failed"] == "respond" and ended(fail("x", "y")) and not ended({"error": None})


# -- a new operator: one module, registered and run --------------------------------------------------

OPERATOR = '''"""quote: the passage sentence that answers the question, quoted (the newcomer's operator)."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, State, shown_by
from longqa.llm.model_node import ModelSteps, Prompt, ask, model_node

QUOTE = "Quote, word for word, the one sentence of these passages that answers the question. " * 30
QUOTE += "\\n\\n{passages}\\n\\nQuestion: {question}"


@model_node
def quote(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)

    def render(passages: list[Evidence]) -> list:
        text = "\\n\\n".join(f"[{p['id']}] {p['text']}" for p in passages)
        return [HumanMessage(QUOTE.format(passages=text, question=state["question"]))]

    reply = yield ask(settings, "quote", Prompt(state.get("evidence") or [], render, answers=True), max_tokens=64)
    return {
        "answer": reply.text.strip(),
        "citations": reply.kept,
        "shown": shown_by("quote", reply.kept),
        "trace": [f"quote: from {len(reply.kept)} of {len(reply.kept) + reply.dropped} passage(s)"],
    }
'''


@pytest.fixture(scope="module")
def operator(tmp_path_factory):
    """Step 1: the operator's module, written as a newcomer would (here under a temporary folder)."""
    path = tmp_path_factory.mktemp("newcomer") / "quote.py"
    path.write_text(OPERATOR, "utf-8")
    spec = importlib.util.spec_from_file_location("newcomer_quote", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def quote_graph(quote):
    """Step 4 as `build_graph` does it: every node in the one wrapper, routed by `then` and the
    graph's routers; the operator sits after the context processor and before `respond`."""
    from langgraph.graph import END, START, StateGraph

    from longqa.contracts.state import InputState, OutputState, RetrieveTask, State, turn_start
    from longqa.graph.graph import FAILED, after_organize, after_retrieve, then
    from longqa.graph.node import as_node
    from longqa.nodes.organize import organize
    from longqa.nodes.prepare import prepare
    from longqa.nodes.process_context import process_context
    from longqa.nodes.respond import respond
    from longqa.nodes.retrieve import retrieve

    builder = StateGraph(State, input_schema=InputState, output_schema=OutputState, context_schema=Settings)
    nodes = {"prepare": prepare, "organize": organize, "retrieve": retrieve, "process_context": process_context}
    for name, node in {**nodes, "quote": quote, "respond": respond}.items():
        wrapped = as_node(name, node, starts_turn=turn_start(State) if name == "prepare" else None)
        builder.add_node(name, wrapped, input_schema=RetrieveTask if name == "retrieve" else None)
    builder.add_edge(START, "prepare")
    builder.add_conditional_edges("prepare", then("organize"), {"organize": "organize", FAILED: "respond"})
    builder.add_conditional_edges("organize", after_organize, {"direct | stepwise": "retrieve", FAILED: "respond"})
    builder.add_conditional_edges("retrieve", after_retrieve, {"direct | split": "process_context", FAILED: "respond"})
    builder.add_conditional_edges("process_context", then("quote"), {"quote": "quote", FAILED: "respond"})
    builder.add_conditional_edges("quote", then("respond"), {"respond": "respond", FAILED: "respond"})
    builder.add_edge("respond", END)
    return builder.compile()


KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
ROUTE = ["prepare", "organize", "retrieve", "process_context", "quote", "respond"]


def test_the_new_operators_module_has_no_plumbing(operator):
    assert plumbing(OPERATOR) == []
    assert inspect.isgeneratorfunction(inspect.getclosurevars(operator.quote.func).nonlocals["node"])


def test_a_new_operator_runs_in_the_graph_within_the_question_budget(run_graph, scripted, operator):
    keeper = "The lighthouse keeper of Port Verrin is Amelie Kortsen."
    name, model = scripted({"generator": keeper})  # an unknown prompt is answered as the generator's
    graph = quote_graph(operator.quote)
    factoid = {"strategy": "adaptive", "extractive_reading": "filtered"}  # the factoid budget: several passages
    free = run_graph(KEEPER_Q, model=name, graph=graph, question_budget=0, **factoid)
    assert free["route"] == ROUTE and free["status"] == "answered" and free["answer"] == keeper
    assert [r["node"] for r in free["usage"]] == ["quote"]  # the driver put its call on the ledger
    shown = len(free["citations"])
    assert shown >= 3 and f"from {shown} of {shown}" in free["trace"][-1]
    # under a question budget the driver fits the operator's prompt to what is left: passages dropped
    bounded = run_graph(KEEPER_Q, model=name, graph=graph, question_budget=800, **factoid)
    assert bounded["route"] == ROUTE and bounded["status"] == "answered", bounded.get("error")
    kept, offered = (int(n) for n in bounded["trace"][-1].split("from ")[1].split(" passage")[0].split(" of "))
    assert 1 <= kept < offered and 0 < spent(bounded["usage"]) <= 800


def test_a_new_operator_that_fails_ends_the_run_without_handling_it(run_graph, scripted, operator):
    def broken(prompt: str) -> str:
        raise ValueError("the quoting model is down")

    name, model = scripted({"generator": broken})
    out = run_graph(KEEPER_Q, model=name, graph=quote_graph(operator.quote), strategy="adaptive")
    assert out["status"] == "error" and out["route"] == ROUTE
    assert out["error"].startswith("quote: ") and "the quoting model is down" in out["error"]
    assert [r["node"] for r in out["usage"]] == ["quote"]  # the failed attempt is charged
    # and the run's deadline reaches its call with no code of its own: past it, the call is not made
    name, model = scripted({"generator": "never asked"})
    out = run_graph(KEEPER_Q, model=name, graph=quote_graph(operator.quote), strategy="adaptive", deadline_s=0.001)
    assert out["status"] == "error" and "deadline" in out["error"] and model.calls == []
