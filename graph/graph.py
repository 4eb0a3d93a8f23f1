"""The longqa graph: every operator of OkraLong, LongRAG and Self-Route is a node; the organizer's
plan is data in the state and the typed routers below read it (see DESIGN.md for the picture).

START → prepare ─┬─ (adaptive) retrieve_primary → analyze → organize
                 └─ (preset)  organize
organize ─┬─ Send(retrieve) for the question ──────────────┐          (direct)
          ├─ split_question ─ Send(retrieve) per sub-question ┤        (split)
          ├─ Send(retrieve) ⇄ reason_step (≤ max_hops) ───────┤        (stepwise)
          └─ long_context                                    │        (lc)
process_context ←──────────────────────────────────────────────┘
  ├─ extract ──────────────────────┐  (with the filter on, extract's successor is the cot branch's)
  ├─ cot ─ Send(filter) per chunk ──┤→ generate (deferred) → self_route ─┬─ respond → END
  └───────────────────────────────┘                                      └─ long_context → respond
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from longqa.contracts.plan import Plan, is_adaptive, plan_of
from longqa.contracts.runtime import guarded, settings_of
from longqa.contracts.settings import Settings
from longqa.contracts.state import FilterTask, InputState, OutputState, RetrieveTask, State
from longqa.nodes.analyze import analyze
from longqa.nodes.cot import cot
from longqa.nodes.extract import extract
from longqa.nodes.filter import filter_chunk
from longqa.nodes.generate import generate
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


def _task(state: State, query: str, plan: Plan, hop: int = 0, share: int = 1) -> Send:
    """One retrieval; `share` queries split the plan's evidence budget (sub-questions, hops)."""
    return Send(
        "retrieve",
        RetrieveTask(
            query=query,
            doc_ids=state["doc_ids"],
            k=plan.k,
            budget=plan.budget // share if plan.budget else None,
            bridges=plan.bridge_seeds,
            granularity=plan.granularity,
            weights=plan.weights,
            mode=plan.mode,
            hop=hop,
        ),
    )


def after_prepare(state: State, runtime) -> Literal["retrieve_primary", "organize", "respond"]:
    if state.get("error"):
        return "respond"
    strategy = state.get("strategy") or settings_of(runtime).strategy
    return "retrieve_primary" if is_adaptive(strategy) else "organize"


def after_organize(state: State) -> list[Send] | Literal["split_question", "long_context", "respond"]:
    if state.get("error"):
        return "respond"
    plan = plan_of(state)
    if plan.workflow == "split":
        return "split_question"
    if plan.workflow == "long_context":
        return "long_context"
    # direct, and the first hop of stepwise (each hop gets its share of the budget)
    share = plan.max_hops if plan.workflow == "stepwise" else 1
    return [_task(state, state.get("search_query") or state["question"], plan, share=share)]


def after_split(state: State) -> list[Send]:
    plan = plan_of(state)
    queries = state.get("sub_questions") or [state["question"]]
    return [_task(state, q, plan, share=len(queries)) for q in queries]


def after_retrieve(state: State) -> Literal["reason_step", "process_context", "respond"]:
    if state.get("error"):
        return "respond"
    return "reason_step" if plan_of(state).workflow == "stepwise" else "process_context"


def after_reason(state: State) -> list[Send] | Literal["process_context"]:
    plan = plan_of(state)
    steps = state.get("steps") or []
    next_query = steps[-1]["next_query"] if steps else None
    if state.get("draft") or not next_query or state.get("hops", 0) >= plan.max_hops:
        return "process_context"
    return [_task(state, next_query, plan, hop=state.get("hops", 0), share=plan.max_hops)]


def after_context(state: State, runtime) -> list[Literal["extract", "cot", "generate", "respond"]]:
    if state.get("error") or not settings_of(runtime).has_llm:
        return ["respond"]  # evidence only
    plan = plan_of(state)
    if state.get("draft"):
        return ["generate"]
    targets: list = (["extract"] if plan.extract else []) + (["cot"] if plan.filter else [])
    return targets or ["generate"]


def after_extract(state: State) -> list[Literal["generate"]]:
    """With the filter on too, generate waits for the cot branch instead: extract ran in the same
    superstep as cot, and `defer` does not hold generate back while the filter's Sends run (it ran
    twice, once before the verdicts)."""
    return [] if plan_of(state).filter else ["generate"]


def after_cot(state: State) -> list[Send] | Literal["generate"]:
    if not state.get("cot") or not state.get("evidence"):
        return "generate"
    return [
        Send("filter", FilterTask(question=state["question"], cot=state["cot"], evidence=e)) for e in state["evidence"]
    ]


def after_self_route(state: State) -> Literal["long_context", "respond"]:
    return "long_context" if state.get("fallback") else "respond"


def build_graph() -> StateGraph:
    builder = StateGraph(State, input_schema=InputState, output_schema=OutputState, context_schema=Settings)
    builder.add_node("prepare", guarded("prepare", prepare))
    builder.add_node("retrieve_primary", guarded("retrieve_primary", retrieve_primary))
    builder.add_node("analyze", analyze)
    builder.add_node("organize", organize)
    builder.add_node("split_question", split_question)
    builder.add_node("retrieve", guarded("retrieve", retrieve), input_schema=RetrieveTask)
    builder.add_node("reason_step", reason_step)
    builder.add_node("process_context", guarded("process_context", process_context))
    builder.add_node("extract", extract)
    builder.add_node("cot", cot)
    builder.add_node("filter", filter_chunk, input_schema=FilterTask)
    builder.add_node("generate", generate, defer=True)
    builder.add_node("self_route", self_route)
    builder.add_node("long_context", guarded("long_context", long_context))
    builder.add_node("respond", respond)

    builder.add_edge(START, "prepare")
    builder.add_conditional_edges("prepare", after_prepare, ["retrieve_primary", "organize", "respond"])
    builder.add_edge("retrieve_primary", "analyze")
    builder.add_edge("analyze", "organize")
    builder.add_conditional_edges("organize", after_organize, ["retrieve", "split_question", "long_context", "respond"])
    builder.add_conditional_edges("split_question", after_split, ["retrieve"])
    builder.add_conditional_edges("retrieve", after_retrieve, ["reason_step", "process_context", "respond"])
    builder.add_conditional_edges("reason_step", after_reason, ["retrieve", "process_context"])
    builder.add_conditional_edges("process_context", after_context, ["extract", "cot", "generate", "respond"])
    builder.add_conditional_edges("extract", after_extract, ["generate"])
    builder.add_conditional_edges("cot", after_cot, ["filter", "generate"])
    builder.add_edge("filter", "generate")
    builder.add_edge("generate", "self_route")
    builder.add_conditional_edges("self_route", after_self_route, ["long_context", "respond"])
    builder.add_edge("long_context", "respond")
    builder.add_edge("respond", END)
    return builder


graph = build_graph().compile(name="longqa")
