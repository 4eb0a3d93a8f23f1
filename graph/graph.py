"""The longqa graph: every operator of OkraLong, LongRAG and Self-Route is a node; the organizer's
plan is data in the state and the typed routers below read it (the picture below;
ARCHITECTURE.md says how the code around it is arranged).

START → prepare ─┬─ (adaptive) retrieve_primary → analyze → organize
                 └─ (preset)  organize
organize ─┬─ Send(retrieve) for the question ──────────────┐          (direct)
          ├─ split_question ─ Send(retrieve) per sub-question ┤        (split)
          ├─ Send(retrieve) ⇄ reason_step (≤ max_hops) ───────┤        (stepwise)
          └─ long_context                                    │        (lc)
process_context ←──────────────────────────────────────────────┘
  ├─ (plan.compare) compare: which came first, both one kind ─────┐ (a result: the answer, to generate)
  ├─ (plan.calculate) calculate: the model's expression, computed ─┤
  ├─ cot ─┬─ (per-chunk) Send(filter) per passage ─┐
  │       └─ (joint: cot judged them) ─────────────┤
  ├─────────────────────────────────────────────────┴─ extract (the survivors) ─┐
  └──────────────────────────────────────────────────────────────────────────────┴→ generate
generate ─┬─ (plan.ground) ground ─┬─ self_route ─┬─ respond → END
   ↑      └──────────────────────┘ │              └─ long_context ─┬─ (plan.ground) ground → respond
   └─ (plan.reask, once: a reply that answers nothing) ┘               └─ respond
   (and from generate itself, once: a reply cut at its cap, empty or the prompt repeated)
Every model call is sized to what is left of the plan's question budget (contracts/budget.py).
Every node runs in one wrapper (graph/node.py): it puts the node on the route, and a node that
raises ends the run as one that returns `fail(...)` does (contracts/failure.py) — each router asks
`ended(state)` first and sends a failed run to `respond` on its "failed" edge. The turn's entry node starts
the turn clean: every working field is reset, derived from the state's schema (contracts/state.py).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from longqa.contracts.plan import Plan, is_adaptive, plan_of, run_strategy
from longqa.contracts.settings import RunContext, Settings, settings_of
from longqa.contracts.state import FilterTask, InputState, OutputState, RetrieveTask, State, turn_start
from longqa.contracts.verdicts import is_unanswerable
from longqa.graph.node import as_node, ended
from longqa.nodes.analyze import analyze
from longqa.nodes.calculate import calculate
from longqa.nodes.compare import compare
from longqa.nodes.cot import cot
from longqa.nodes.extract import extract
from longqa.nodes.filter import filter_chunk, judgements
from longqa.nodes.generate import generate, to_ask_again
from longqa.nodes.ground import ground
from longqa.nodes.long_context import long_context
from longqa.nodes.organize import organize
from longqa.nodes.prepare import prepare
from longqa.nodes.process_context import process_context
from longqa.nodes.reason_step import reason_step
from longqa.nodes.respond import respond
from longqa.nodes.retrieve import retrieve
from longqa.nodes.retrieve_primary import retrieve_primary
from longqa.nodes.self_route import self_route
from longqa.nodes.split_question import split_question


def _task(state: State, query: str, plan: Plan, share: int = 1) -> Send:
    """One retrieval; `share` queries split the plan's evidence budget (sub-questions, hops)."""
    return Send(
        "retrieve",
        RetrieveTask(
            query=query,
            library=state["library"],
            doc_ids=state["doc_ids"],
            sources=state.get("sources") or {},
            k=plan.k,
            budget=plan.query_budget(share),
            bridges=plan.bridge_seeds,
            granularity=plan.granularity,
            weights=plan.weights,
            mode=plan.mode,
            precision=plan.precision,
            precision_gap=plan.precision_gap,
        ),
    )


# Each router returns a branch label; these maps name the node each label goes to, and are what
# Studio draws on the conditional edges. (A list of Sends goes to `retrieve` whatever its label.)
AFTER_PREPARE = {"adaptive": "retrieve_primary", "preset": "organize", "failed": "respond"}
AFTER_ORGANIZE = {
    "direct | stepwise": "retrieve",
    "split": "split_question",
    "long context": "long_context",
    "failed": "respond",
}
AFTER_SPLIT = {"per sub-question": "retrieve", "failed": "respond"}
AFTER_RETRIEVE = {"stepwise": "reason_step", "direct | split": "process_context", "failed": "respond"}
AFTER_REASON = {"next hop": "retrieve", "answered | last hop": "process_context", "failed": "respond"}
AFTER_CONTEXT = {
    "compare": "compare",
    "calculate": "calculate",
    "CoT filter": "cot",
    "extract I_g": "extract",
    "answer": "generate",
    "evidence only": "respond",
    "failed": "respond",
}
AFTER_CALCULATE = {"CoT filter": "cot", "extract I_g": "extract", "answer": "generate", "failed": "respond"}
AFTER_COMPARE = {"calculate": "calculate", **AFTER_CALCULATE}
AFTER_COT = {"judge each passage": "filter", "extract I_g": "extract", "answer": "generate", "failed": "respond"}
AFTER_FILTER = {"extract I_g": "extract", "answer": "generate", "failed": "respond"}
AFTER_GENERATE = {
    "check grounding": "ground",
    "Self-Route decides": "self_route",
    "no answer: ask again": "generate",
    "failed": "respond",
}
AFTER_LONG_CONTEXT = {"check grounding": "ground", "done": "respond", "failed": "respond"}
AFTER_GROUND = {
    "no answer: ask again": "generate",
    "Self-Route decides": "self_route",
    "after the long context": "respond",
    "failed": "respond",
}
AFTER_SELF_ROUTE = {"fallback: long context": "long_context", "answered": "respond", "failed": "respond"}
FAILED = "failed"


def then(target: str):
    """The router of a node with one way on: `target`, unless the node failed."""

    def route(state: State) -> str:
        return FAILED if ended(state) else target

    route.__name__ = f"then_{target}"
    return route


def after_prepare(state: State, runtime) -> Literal["adaptive", "preset", "failed"]:
    """Adaptive strategies retrieve a first small set and analyze it before planning; presets plan at
    once; bad input (or a failed prepare) goes straight to respond."""
    if ended(state):
        return FAILED
    strategy = run_strategy(settings_of(runtime), state.get("strategy"))
    return "adaptive" if is_adaptive(strategy) else "preset"


def after_organize(state: State) -> list[Send] | Literal["split", "long context", "failed"]:
    """The plan's workflow: direct and step-wise start retrieving now (one Send; a step-wise hop gets
    its share of the evidence budget), split asks the splitter first, lc reads the document itself."""
    if ended(state):
        return FAILED
    plan = plan_of(state)
    if plan.workflow == "split":
        return "split"
    if plan.workflow == "long_context":
        return "long context"
    # direct, and the first hop of stepwise (each hop gets its share of the budget)
    return [_task(state, state.get("search_query") or state["question"], plan, share=plan.retrievals)]


def after_split(state: State) -> list[Send] | Literal["failed"]:
    """One retrieval per sub-question, each with its share of the evidence budget."""
    if ended(state):
        return FAILED
    plan = plan_of(state)
    queries = state.get("sub_questions") or [state["question"]]
    return [_task(state, q, plan, share=len(queries)) for q in queries]


def after_retrieve(state: State) -> Literal["stepwise", "direct | split", "failed"]:
    """Step-wise runs reason over each hop's hits; the others go to the context processor."""
    if ended(state):
        return FAILED
    return "stepwise" if plan_of(state).workflow == "stepwise" else "direct | split"


def after_reason(state: State) -> list[Send] | Literal["answered | last hop", "failed"]:
    """The reasoner's next query is the next hop, until it drafts an answer or the hops run out."""
    if ended(state):
        return FAILED
    plan = plan_of(state)
    steps = state.get("steps") or []
    next_query = steps[-1]["next_query"] if steps else None
    if state.get("draft") or not next_query or state.get("hops", 0) >= plan.max_hops:
        return "answered | last hop"
    return [_task(state, next_query, plan, share=plan.max_hops)]


def after_context(
    state: State, runtime
) -> Literal["compare", "calculate", "CoT filter", "extract I_g", "answer", "evidence only", "failed"]:
    """A which-came-first or shared-kind plan compares first (nodes/compare.py), an arithmetic plan asks for the
    calculation first (each a draft answer when it decides); the perspectives run one after the other:
    the filter first, so the extractor reads only what survived it. Without a model, the evidence is
    the answer; a failed run goes to respond on its own edge."""
    if ended(state):
        return FAILED
    if not settings_of(runtime).has_llm:
        return "evidence only"
    if plan_of(state).compare and not state.get("draft"):
        return "compare"
    return after_compare(state)


def after_compare(state: State) -> Literal["calculate", "CoT filter", "extract I_g", "answer", "failed"]:
    """Undecided by the comparison, an arithmetic plan asks for the calculation; then the perspectives, or the draft."""
    if ended(state):
        return FAILED
    if plan_of(state).calculate and not state.get("draft"):
        return "calculate"
    return _perspectives(state)


def after_calculate(state: State) -> Literal["CoT filter", "extract I_g", "answer", "failed"]:
    """A computed answer goes to the generator as a draft; without one the perspectives run as planned."""
    if ended(state):
        return FAILED
    return _perspectives(state)


def _perspectives(state: State) -> Literal["CoT filter", "extract I_g", "answer"]:
    plan = plan_of(state)
    if state.get("draft"):
        return "answer"
    if plan.filter:
        return "CoT filter"
    return "extract I_g" if plan.extract else "answer"


def after_filter(state: State) -> Literal["extract I_g", "answer", "failed"]:
    """After the filter: the extractor reads what survived, if the plan asks for it."""
    if ended(state):
        return FAILED
    return "extract I_g" if plan_of(state).extract else "answer"


def after_cot(state: State) -> list[Send] | Literal["extract I_g", "answer", "failed"]:
    """Per-chunk mode: one judgement per passage the question budget pays for. Joint mode (the cot
    call judged them) and a CoT the model could not write go on."""
    if ended(state):
        return FAILED
    if plan_of(state).filter_mode == "per-chunk" and state.get("cot") and state.get("evidence"):
        tasks = judgements(state)
        if tasks:
            return [Send("filter", task) for task in tasks]
    return after_filter(state)


def after_generate(state: State) -> Literal["check grounding", "Self-Route decides", "no answer: ask again", "failed"]:
    """A plan that grounds its answers checks them first (nodes/ground.py); the papers' baselines do
    not, and a decline has nothing to check. A reply that is no answer at all (cut at its cap, empty, the prompt
    repeated) is asked again once where the plan says so, as the ground node's non-answers are."""
    if ended(state):
        return FAILED
    if not state.get("answer") and plan_of(state).reask and to_ask_again(state):
        return "no answer: ask again"
    return "check grounding" if _checks(state) else "Self-Route decides"


def _checks(state: State) -> bool:
    return plan_of(state).ground and bool(state.get("answer")) and not is_unanswerable(state.get("answer"))


def after_long_context(state: State) -> Literal["check grounding", "done", "failed"]:
    """The long context's answer is checked too, where the plan grounds its answers."""
    if ended(state):
        return FAILED
    return "check grounding" if _checks(state) else "done"


def after_ground(
    state: State,
) -> Literal["no answer: ask again", "Self-Route decides", "after the long context", "failed"]:
    """A checked RAG answer goes to Self-Route's decision; the long context's answer ends the run
    (respond declines it if it is unsupported). A reply that answered nothing (the question restated, a
    label) goes back to the generator once, where the plan says so (nodes/generate.py `to_ask_again`)."""
    if ended(state):
        return FAILED
    if "long_context" in (state.get("route") or []):
        return "after the long context"
    if plan_of(state).reask and to_ask_again(state):
        return "no answer: ask again"
    return "Self-Route decides"


def after_self_route(state: State) -> Literal["fallback: long context", "answered", "failed"]:
    """Self-Route: an answer from retrieval ends the run; "unanswerable" reads the long context when
    the plan and the question budget allow it (self_route decided)."""
    if ended(state):
        return FAILED
    return "fallback: long context" if state.get("fallback") else "answered"


def _one_way(target: str) -> tuple[Any, dict[str, str]]:
    """A node with one way on: its router and label map (a failure goes to respond)."""
    return then(target), {target: target, FAILED: "respond"}


def _routes() -> dict[str, tuple[Any, dict[str, str]]]:
    """Each node's router and label map, in the order a run meets them (respond ends the run)."""
    return {
        "prepare": (after_prepare, AFTER_PREPARE),
        "retrieve_primary": _one_way("analyze"),
        "analyze": _one_way("organize"),
        "organize": (after_organize, AFTER_ORGANIZE),
        "split_question": (after_split, AFTER_SPLIT),
        "retrieve": (after_retrieve, AFTER_RETRIEVE),
        "reason_step": (after_reason, AFTER_REASON),
        "process_context": (after_context, AFTER_CONTEXT),
        "compare": (after_compare, AFTER_COMPARE),
        "calculate": (after_calculate, AFTER_CALCULATE),
        "extract": _one_way("generate"),
        "cot": (after_cot, AFTER_COT),
        "filter": (after_filter, AFTER_FILTER),
        "generate": (after_generate, AFTER_GENERATE),
        "ground": (after_ground, AFTER_GROUND),
        "self_route": (after_self_route, AFTER_SELF_ROUTE),
        "long_context": (after_long_context, AFTER_LONG_CONTEXT),
    }


def build_graph(context: type[Settings] | type[RunContext] = Settings) -> StateGraph:
    """The question graph. `context` is the run settings' schema: `Settings` in process (CLI, agent
    tool, applications), `RunContext` on a server (the caller's fields only, graph/server.py)."""
    builder = StateGraph(State, input_schema=InputState, output_schema=OutputState, context_schema=context)
    nodes = {
        "prepare": prepare,
        "retrieve_primary": retrieve_primary,
        "analyze": analyze,
        "organize": organize,
        "split_question": split_question,
        "retrieve": retrieve,
        "reason_step": reason_step,
        "process_context": process_context,
        "extract": extract,
        "cot": cot,
        "filter": filter_chunk,
        "compare": compare,
        "calculate": calculate,
        "generate": generate,
        "ground": ground,
        "self_route": self_route,
        "long_context": long_context,
        "respond": respond,
    }
    tasks = {"retrieve": RetrieveTask, "filter": FilterTask}  # the nodes `Send` starts, with their input
    for name, node in nodes.items():
        wrapped = as_node(name, node, starts_turn=turn_start(State) if name == "prepare" else None)
        builder.add_node(name, wrapped, input_schema=tasks.get(name))

    builder.add_edge(START, "prepare")
    for source, (router, ends) in _routes().items():
        builder.add_conditional_edges(source, router, ends)
    builder.add_edge("respond", END)
    return builder


graph = build_graph().compile(name="longqa")  # in process; what `langgraph dev` serves is graph/server.py
