"""OkraLong's organizer as a pure function: `plan(analysis, settings, strategy) -> Plan`.

The plan is data; conditional edges read it. Fixed baselines (Std-RAG, long context, Self-Route,
LongRAG) are presets that ignore the analysis, so every strategy runs through the same nodes.
Without a model, the workflows that need one to split or reason become one direct retrieval.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from longqa.analyzer.schema import Analysis
from longqa.llm import comparison, shared_attribute
from longqa.llm.budget_arithmetic import Overheads, per_query, planned_evidence

from .settings import STRATEGIES, Settings, SettingsError, Strategy
from .state import State

Workflow = Literal["direct", "split", "stepwise", "long_context"]


class Plan(BaseModel):
    """The organizer's plan for one question (OkraLong's "workflow, chunks, granularity, fusion
    weights", plus LongRAG's perspectives and Self-Route's fallback): data in the state that the
    graph's routers read. Pure: `plan(analysis, settings)` and `sized_plan` make it without a model."""

    strategy: str = Field(description="the strategy it was made for (contracts/settings.py STRATEGIES)")
    workflow: Workflow = Field(
        description="direct: one retrieval; split: one per sub-question; stepwise: the reasoner's hops; "
        "long_context: read the document itself"
    )
    k: int = Field(default=5, description="chunks to retrieve per query when no evidence budget is set")
    budget: int | None = Field(default=None, description="evidence tokens to fill instead of a fixed k")
    bridge_seeds: int = Field(default=0, description="LLM-free bridge searches in direct retrieval (0 = off)")
    granularity: int = Field(default=150, description="chunk size in tokens of the index searched")
    weights: tuple[float, float] = Field(default=(1.0, 1.0), description="(dense, bm25) fusion weights")
    mode: Literal["hybrid", "dense", "bm25"] = Field(default="hybrid", description="which retrievers rank")
    extend_tokens: int = Field(default=0, description="tokens each passage is extended by on both sides")
    recover_tables: bool = Field(default=True, description="a chunk inside a table brings the whole table")
    recover_lists: bool = Field(
        default=True, description="a chunk inside a list its document announces brings the whole list"
    )
    extract: bool = Field(default=False, description="LongRAG's extractor: the global information I_g")
    filter: bool = Field(default=False, description="LongRAG's CoT-guided filter over the passages")
    fallback: bool = Field(default=False, description="Self-Route: read the long context when unanswerable")
    allow_unanswerable: bool = Field(default=True, description="the generator may answer 'unanswerable'")
    ground: bool = Field(default=False, description="check the answer against its cited passages (nodes/ground.py)")
    reask: bool = Field(
        default=False,
        description="a grounded reply that answers nothing is asked again once (nodes/generate.py)",
    )
    reask_tokens: int = Field(
        default=0, description="input tokens of the question budget the first reading keeps back for asking again"
    )
    calculate: bool = Field(
        default=False,
        description="arithmetic: the model writes the expression, Python computes it (nodes/calculate.py)",
    )
    compare: bool = Field(
        default=False,
        description="which of two came first: the dates next to each option decide (nodes/compare.py)",
    )
    max_hops: int = Field(default=4, description="most retrievals a step-wise run makes")
    question_budget: int | None = Field(
        default=None, description="input tokens all model calls of the question may spend (None: no limit)"
    )
    filter_mode: Literal["joint", "per-chunk"] = Field(
        default="joint", description="one structured CoT + filter call, or LongRAG's CoT then one call per passage"
    )
    precision: list[str] = Field(
        default_factory=list, description="the precision stage's operators (retrieval/search/precision.py), in order"
    )
    precision_gap: float = Field(default=0.0, description="with 'gap': keep chunks scoring at least this x the best")
    overheads: Overheads | None = Field(
        default=None, description="each prompt's tokens besides its evidence (set when the plan is sized)"
    )
    reasons: list[str] = Field(default_factory=list, description="why each choice was made, for the trace")

    @property
    def retrievals(self) -> int:
        """How many retrievals share the evidence budget from the start: a step-wise route's hops
        (each gets its share), else one (a split route's are its sub-questions, known later)."""
        return self.max_hops if self.workflow == "stepwise" else 1

    def query_budget(self, queries: int = 1) -> int | None:
        """One retrieval's evidence tokens when `queries` retrievals share the budget (None: k chunks)."""
        return per_query(self.budget, queries)

    @property
    def evidence_size(self) -> int:
        """The evidence tokens one retrieval of this plan reads: its budget, else k chunks."""
        return planned_evidence(self.budget, self.k, self.granularity)


ADAPTIVE: tuple[str, ...] = ("adaptive", "adaptive-precise")


def is_adaptive(strategy: str) -> bool:
    """Adaptive strategies run the primary retrieval and the analyzer before planning."""
    return strategy in ADAPTIVE


def run_strategy(settings: Settings, asked: str | None = None) -> Strategy:
    """The strategy a run plans by: the one its input asks for (`State.strategy`), else its settings'.
    Resolved here only: the organizer writes it into the plan (`Plan.strategy`), which every later
    reader reads; the router before the plan (graph/graph.py `after_prepare`) asks this too."""
    if asked and asked not in STRATEGIES:  # an input the server's checks did not see (a library caller's)
        raise SettingsError(f"strategy: one of {', '.join(STRATEGIES)} (got {str(asked)[:40]!r})")
    return asked or settings.strategy  # type: ignore[return-value]


def plan_of(state: State) -> Plan:
    """The plan `organize` wrote (the state holds it as JSON-able data)."""
    return Plan.model_validate(state["plan"])


# Which LongRAG perspectives each question type gets (adaptive strategies), and why.
PERSPECTIVES: dict[str, tuple[bool, bool, str]] = {
    # type: (extract, filter, reason)
    "extractive": (False, True, "a single fact: the CoT filter drops distractor chunks; global context adds little"),
    "arithmetic": (False, False, "numbers sit in table rows and years: filtering or paraphrasing can lose one"),
    "summarizing": (True, False, "a conclusion needs the global view; filtering would cut needed context"),
    "multi-source": (False, True, "each sub-question pulls its own chunks, many irrelevant to the others"),
    "multi-bridge": (
        True,
        False,
        "source paragraphs keep the bridge entity's context (LongRAG's largest gain "
        "is on MuSiQue); the reasoner already picks evidence per hop",
    ),
}


# Measured with a real model (evals/README, sixth round): the CoT filter's call and its cut (~640 of 900 evidence
# tokens) lost the lists and descriptions a paper's questions ask for; one reading of what the budget affords kept them.
ONE_READING = (
    "a model reads the evidence once: the filter's share of the question budget goes to the evidence "
    "(a list or a description needs it; measured)"
)


# Measured without a model (evals/README, "Evidence per hop", issue #48): beside the extractor a multi-bridge route's
# generator was shown the answer for 80.0% of 30 MuSiQue items (~1,070 tokens); read once, 86.7% (~1,490 tokens). With
# a model the extractor's global information answered better (tenth round: F1 +2.9 MuSiQue / +21.9 HotpotQA with the
# 0.5B, +7.4 / +7.0 with the 1.5B), so it is read once only where no model can extract (bridge_reading="once" asks).
BRIDGED_READING = (
    "the evidence is read once, no extractor: its share of the question budget goes to the evidence, which then "
    "holds more of the hops (without a model, or bridge_reading=once)"
)
# Measured with a real model (evals/README, twelfth round, 152 papers questions): beside the extractor a summarizing
# question's generator was shown ~940 evidence tokens, read once ~1,500; F1 +2.0 [+0.3, +4.1] with the 1.5B, +0.4 with
# the 0.5B, at +23-31 input tokens a question.
SUMMARY_READING = (
    "the evidence is read once, no extractor (summary_reading=once, measured): its share of the question budget "
    "goes to the evidence a description is written from"
)
ONCE_READINGS = {"extractive": ONE_READING, "multi-bridge": BRIDGED_READING, "summarizing": SUMMARY_READING}


def weights_toward(pattern: str, settings: Settings) -> tuple[float, float]:
    """(dense, bm25): 3:2 toward the preferred pattern, 1:1 for 'same'."""
    hi, lo = settings.preferred_weight, settings.other_weight
    return {"semantic": (hi, lo), "exact": (lo, hi)}.get(pattern, (1.0, 1.0))


def preset(strategy: Strategy, settings: Settings) -> Plan | None:
    """The fixed plans; None for the adaptive strategies."""
    # the baselines reproduce their papers: no question budget, LongRAG's filter judges each chunk
    base = {"strategy": strategy, "max_hops": settings.max_hops}
    longrag = {
        "workflow": "direct",
        "k": 7,
        "granularity": 256,
        "mode": "hybrid",
        "allow_unanswerable": False,
        "filter_mode": "per-chunk",
    }
    presets: dict[str, Plan] = {
        # Std-RAG in OkraLong's comparison: top-5 chunks of 512 tokens, dense retrieval
        "rag": Plan(
            **base,
            workflow="direct",
            k=5,
            granularity=512,
            mode="dense",
            recover_tables=False,
            recover_lists=False,
            allow_unanswerable=False,
            reasons=["Std-RAG: top-5 x 512 tokens, dense"],
        ),
        "lc": Plan(
            **base,
            workflow="long_context",
            allow_unanswerable=True,
            reasons=["long context: the whole document, capped to the window"],
        ),
        # Self-Route: RAG with the option to decline, then the long context
        "self-route": Plan(
            **base,
            workflow="direct",
            k=5,
            granularity=400,
            mode="dense",
            recover_tables=False,
            recover_lists=False,
            fallback=True,
            reasons=["Self-Route: top-5 ~300-word chunks, unanswerable -> LC"],
        ),
        "longrag": Plan(**base, **longrag, extract=True, filter=True, reasons=["LongRAG E&F"]),
        "longrag-ext": Plan(**base, **longrag, extract=True, reasons=["LongRAG extractor only"]),
        "longrag-fil": Plan(**base, **longrag, filter=True, reasons=["LongRAG filter only"]),
    }
    return presets.get(strategy)


def plan(analysis: Analysis, settings: Settings, strategy: Strategy | None = None, question: str = "") -> Plan:
    """OkraLong's heuristics (§3.3, appendix C.3) for the adaptive strategies, presets otherwise
    (`strategy`: the input's, resolved with the settings' by `run_strategy`); without a model, a split
    or step-wise workflow becomes one direct retrieval. `question`: a which-came-first question is compared by
    its dates (llm/comparison.py), a shared-kind one by the sentences introducing each (llm/shared_attribute.py)."""
    strategy = run_strategy(settings, strategy)
    the_plan = preset(strategy, settings) or adaptive_plan(analysis, settings, strategy)
    if the_plan.workflow != "long_context" and (
        settings.calculator == "on"
        or (settings.calculator == "auto" and is_adaptive(strategy) and analysis.question_type == "arithmetic")
    ):
        reason = "calculator: the model writes the arithmetic, Python computes it"
        the_plan = the_plan.model_copy(update={"calculate": True, "reasons": [*the_plan.reasons, reason]})
    if reason := _compared_by(question, the_plan, settings):
        the_plan = the_plan.model_copy(update={"compare": True, "reasons": [*the_plan.reasons, reason]})
    if settings.grounding == "on" or (settings.grounding == "auto" and is_adaptive(strategy)):
        reason = "grounding: an answer its cited passages do not support is treated as unanswerable"
        the_plan = the_plan.model_copy(update={"ground": True, "reasons": [*the_plan.reasons, reason]})
        if settings.reask:
            reason = "re-ask: a reply that answers nothing (the question restated, a label) is asked again once"
            update = {"reask": True, "reask_tokens": settings.reask_tokens, "reasons": [*the_plan.reasons, reason]}
            the_plan = the_plan.model_copy(update=update)
    if settings.server and settings.question_limit and not the_plan.question_budget:
        # a server's caller never escapes the operator's budget by naming a preset (issue 45): the fixed
        # baselines, which run unbudgeted in process to reproduce their papers, run capped to it here
        reason = f"server: the question budget ({settings.question_limit} tokens) binds this preset; run capped"
        the_plan = the_plan.model_copy(
            update={"question_budget": settings.question_limit, "reasons": [*the_plan.reasons, reason]}
        )
    if not settings.has_llm and the_plan.workflow in ("split", "stepwise"):
        # splitting and reasoning need a model; k per sub-question / per hop would be too few for
        # the one retrieval that replaces them, and bridge expansion stands in for the next hops
        k = max(the_plan.k, settings.factoid_k)
        bridges = settings.bridge_seeds if the_plan.budget else 0
        the_plan = the_plan.model_copy(
            update={
                "workflow": "direct",
                "k": k,
                "bridge_seeds": bridges,
                "reasons": [
                    *the_plan.reasons,
                    f"no LLM configured: '{the_plan.workflow}' replaced by direct retrieval, "
                    + (f"{the_plan.budget} tokens, {bridges} bridge search(es)" if the_plan.budget else f"k={k}"),
                ],
            }
        )
    return the_plan


def _compared_by(question: str, the_plan: Plan, settings: Settings) -> str | None:
    """Why the compare node answers this question (an adaptive plan's which-came-first or shared-kind question), or
    None when it does not."""
    if the_plan.workflow == "long_context" or not is_adaptive(the_plan.strategy):
        return None
    if settings.date_comparison == "auto" and comparison.asked(question):
        return "date comparison: which of two came first is read from the dates the passages give each"
    if settings.shared_description == "auto" and shared_attribute.asked(question):
        return "shared description: whether both are one kind is read from the sentences introducing each"
    return None


def read_once(analysis: Analysis, settings: Settings) -> bool:
    """An extractive question a model answers under an evidence budget (extractive_reading='once'), a multi-bridge
    one answered by bridge expansion without a model or with bridge_reading='once', or a summarizing one with
    summary_reading='once': no CoT filter and no extractor,
    and the evidence is what the budget affords one reading (a contextual question's budget, cut to the question
    budget)."""
    qtype = analysis.question_type
    extractive = qtype == "extractive" and settings.extractive_reading == "once" and settings.has_llm
    # without a model no extractor runs: its share of the budget goes to the evidence whatever bridge_reading says
    once_read = settings.bridge_reading == "once" or not settings.has_llm
    bridged = qtype == "multi-bridge" and settings.multi_bridge == "bridges" and once_read
    summary = qtype == "summarizing" and settings.summary_reading == "once" and settings.has_llm
    return settings.selection == "budget" and (extractive or bridged or summary)


def _evidence_size(
    analysis: Analysis, settings: Settings, once: bool, reasons: list[str]
) -> tuple[int, int | None, int]:
    """(k, token budget or None, granularity) of the evidence for this kind of question (`once`: `read_once`), its
    reasons added."""
    contextual = analysis.question_type == "summarizing"
    by_budget = settings.selection == "budget"
    k = settings.contextual_k if contextual else settings.factoid_k
    wide = contextual or once
    budget = (settings.contextual_budget if wide else settings.evidence_budget) if by_budget else None
    kind = "contextual" if contextual else f"{analysis.question_type}, read once" if wide else "factoid"
    reasons.append(f"{kind} question: " + (f"the best chunks within {budget} tokens" if by_budget else f"k={k}"))
    if analysis.evidence == "no" and not by_budget:
        granularity = settings.absent_contextual_granularity if contextual else settings.absent_factoid_granularity
        reasons.append(f"evidence absent: granularity grows to {granularity} tokens")
    else:
        # with a budget, larger chunks only coarsen the selection: base-size chunks held more of the
        # supporting facts in the same words (bench/evidence_budget.py), so the growth rule is k-only
        granularity = settings.base_granularity
    return k, budget, granularity


def adaptive_plan(analysis: Analysis, settings: Settings, strategy: Strategy) -> Plan:
    """OkraLong's heuristics (§3.3, appendix C.3), with the evidence picked by a token budget
    (`selection="budget"`, measured) or OkraLong's fixed k (`selection="k"`)."""
    qtype = analysis.question_type
    reasons: list[str] = []
    by_budget = settings.selection == "budget"
    once = read_once(analysis, settings)
    k, budget, granularity = _evidence_size(analysis, settings, once, reasons)
    workflow: Workflow = "direct"
    extend_tokens = 0
    pattern = analysis.info_pattern
    each = "the budget shared among them" if by_budget else f"{settings.sub_question_k} chunks each"
    if qtype == "multi-source":
        workflow, k = "split", settings.sub_question_k
        reasons.append(f"multi-source: split into sub-questions, {each}, then aggregate")
    elif qtype == "multi-bridge" and settings.multi_bridge == "bridges":
        reasons.append("multi-bridge: one retrieval, bridge expansion standing in for the hops")
    elif qtype == "multi-bridge":
        workflow, k = "stepwise", settings.hop_k
        per_hop = f"{per_query(budget, settings.max_hops)} tokens" if budget else f"{k} chunks"
        reasons.append(f"multi-bridge: step-wise reasoning, {per_hop} per hop, at most {settings.max_hops} hops")
    elif qtype == "arithmetic":
        pattern, extend_tokens = "exact", settings.extension_tokens
        reasons.append(f"arithmetic: exact-weighted retrieval, context extended by {extend_tokens} tokens")
    bridges = settings.bridge_seeds if by_budget and workflow == "direct" else 0
    if bridges:
        reasons.append(f"bridge expansion: {bridges} more search(es) seeded by the best chunks")
    weights = weights_toward(pattern, settings)
    reasons.append(f"fusion dense:bm25 = {weights[0]:g}:{weights[1]:g} ({pattern})")
    extract, filter_, why = PERSPECTIVES[qtype]
    if once:
        extract, filter_, why = False, False, ONCE_READINGS[qtype]
    reasons.append(f"extract={'on' if extract else 'off'}, filter={'on' if filter_ else 'off'}: {why}")
    fallback = strategy == "adaptive-precise"
    if fallback:
        reasons.append("precise mode: an unanswerable answer falls back to the long context")
    return Plan(
        strategy=strategy,
        workflow=workflow,
        k=k,
        budget=budget,
        bridge_seeds=bridges,
        granularity=granularity,
        weights=weights,
        mode="hybrid",
        extend_tokens=extend_tokens,
        recover_tables=True,
        extract=extract,
        filter=filter_,
        fallback=fallback,
        allow_unanswerable=True,
        max_hops=settings.max_hops,
        question_budget=settings.question_limit,
        filter_mode=settings.filter_mode,
        precision=list(settings.precision) if by_budget else [],
        precision_gap=settings.precision_gap,
        reasons=reasons,
    )
