"""The organizer as a pure function: analysis x strategy x settings -> Plan (OkraLong §3.3,
appendix C.3), the fixed presets, and the no-LLM rule. No index, no model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from longqa.analyzer import Analysis
from longqa.contracts.budget import sized_plan
from longqa.contracts.plan import PERSPECTIVES, Plan, plan, preset
from longqa.contracts.settings import STRATEGIES, Settings
from longqa.llm.budget import overheads
from longqa.nodes.organize import organize

SETTINGS = Settings(model="scripted", strategy="adaptive-precise")
OKRALONG = SETTINGS.model_copy(
    update={"selection": "k", "multi_bridge": "stepwise"}
)  # the paper's k, granularity rule, hops
QUESTION_TYPES = ["extractive", "arithmetic", "summarizing", "multi-source", "multi-bridge"]


def analysis(qtype: str, evidence: str = "yes", pattern: str = "same") -> Analysis:
    return Analysis(question_type=qtype, evidence=evidence, info_pattern=pattern, backend="test")


# (type, evidence, pattern, strategy) -> (workflow, k, granularity, (dense, bm25), extend, extract, filter, fallback)
CASES = [
    # factoid, evidence present: k=5 at the base 150 tokens; weights follow the info pattern
    (("extractive", "yes", "semantic", "adaptive"), ("direct", 5, 150, (3.0, 2.0), 0, False, True, False)),
    (("extractive", "yes", "exact", "adaptive"), ("direct", 5, 150, (2.0, 3.0), 0, False, True, False)),
    (("extractive", "yes", "same", "adaptive-precise"), ("direct", 5, 150, (1.0, 1.0), 0, False, True, True)),
    # evidence absent: factoid granularity grows to 256
    (("extractive", "no", "semantic", "adaptive-precise"), ("direct", 5, 256, (3.0, 2.0), 0, False, True, True)),
    # arithmetic: always exact-weighted, context extended, neither extract nor filter
    (("arithmetic", "yes", "semantic", "adaptive"), ("direct", 5, 150, (2.0, 3.0), 64, False, False, False)),
    (("arithmetic", "no", "same", "adaptive-precise"), ("direct", 5, 256, (2.0, 3.0), 64, False, False, True)),
    (("arithmetic", "yes", "exact", "adaptive"), ("direct", 5, 150, (2.0, 3.0), 64, False, False, False)),
    # summarizing: contextual k=8; absent evidence grows to 400; extractor on, filter off
    (("summarizing", "yes", "semantic", "adaptive"), ("direct", 8, 150, (3.0, 2.0), 0, True, False, False)),
    (("summarizing", "no", "exact", "adaptive-precise"), ("direct", 8, 400, (2.0, 3.0), 0, True, False, True)),
    (("summarizing", "no", "same", "adaptive"), ("direct", 8, 400, (1.0, 1.0), 0, True, False, False)),
    # multi-source: split into sub-questions, 3 chunks each; filter on
    (("multi-source", "yes", "same", "adaptive"), ("split", 3, 150, (1.0, 1.0), 0, False, True, False)),
    (("multi-source", "no", "semantic", "adaptive-precise"), ("split", 3, 256, (3.0, 2.0), 0, False, True, True)),
    # multi-bridge: step-wise, 3 chunks per hop; extractor on, filter off
    (("multi-bridge", "yes", "exact", "adaptive"), ("stepwise", 3, 150, (2.0, 3.0), 0, True, False, False)),
    (("multi-bridge", "no", "same", "adaptive-precise"), ("stepwise", 3, 256, (1.0, 1.0), 0, True, False, True)),
]


@pytest.mark.parametrize(("case", "expected"), CASES, ids=["-".join(c) for c, _ in CASES])
def test_adaptive_plan_table(case, expected):
    qtype, evidence, pattern, strategy = case
    workflow, k, granularity, weights, extend, extract, filter_, fallback = expected
    p = plan(analysis(qtype, evidence, pattern), OKRALONG, strategy)
    assert isinstance(p, Plan)
    assert p.strategy == strategy
    assert (p.workflow, p.k, p.granularity, p.weights, p.extend_tokens) == (workflow, k, granularity, weights, extend)
    assert (p.extract, p.filter, p.fallback) == (extract, filter_, fallback)
    assert p.mode == "hybrid" and p.recover_tables and p.allow_unanswerable
    assert p.max_hops == 4
    assert p.reasons, "the plan explains itself"


@pytest.mark.parametrize(
    ("qtype", "extract", "filter_"),
    [
        ("extractive", False, True),
        ("arithmetic", False, False),
        ("summarizing", True, False),
        ("multi-source", False, True),
        ("multi-bridge", True, False),
    ],
)
def test_perspectives_per_question_type(qtype, extract, filter_):
    assert PERSPECTIVES[qtype][:2] == (extract, filter_)
    for evidence in ("yes", "no"):
        for pattern in ("exact", "semantic", "same"):
            p = plan(analysis(qtype, evidence, pattern), OKRALONG, "adaptive")
            assert (p.extract, p.filter) == (extract, filter_)


def test_fallback_only_for_precise_and_self_route():
    for strategy in STRATEGIES:
        for qtype in QUESTION_TYPES:
            p = plan(analysis(qtype, "no", "semantic"), OKRALONG, strategy)
            assert p.fallback == (strategy in ("adaptive-precise", "self-route")), (strategy, qtype)


PRESETS = {
    # strategy: (workflow, k, granularity, mode, extract, filter, fallback, allow_unanswerable)
    "rag": ("direct", 5, 512, "dense", False, False, False, False),
    "self-route": ("direct", 5, 400, "dense", False, False, True, True),
    "longrag": ("direct", 7, 256, "hybrid", True, True, False, False),
    "longrag-ext": ("direct", 7, 256, "hybrid", True, False, False, False),
    "longrag-fil": ("direct", 7, 256, "hybrid", False, True, False, False),
}


@pytest.mark.parametrize("strategy", sorted(PRESETS))
def test_presets_ignore_the_analysis(strategy):
    workflow, k, granularity, mode, extract, filter_, fallback, allow = PRESETS[strategy]
    plans = [
        plan(analysis(q, e, pat), OKRALONG, strategy)
        for q in QUESTION_TYPES
        for e in ("yes", "no")
        for pat in ("exact", "semantic", "same")
    ]
    assert all(p == plans[0] for p in plans)
    p = plans[0]
    assert (p.workflow, p.k, p.granularity, p.mode) == (workflow, k, granularity, mode)
    assert (p.extract, p.filter, p.fallback, p.allow_unanswerable) == (extract, filter_, fallback, allow)
    assert p.extend_tokens == 0
    assert preset(strategy, SETTINGS) == p


def test_lc_preset_reads_the_long_context():
    p = plan(analysis("multi-bridge"), SETTINGS, "lc")
    assert p.workflow == "long_context"
    assert not p.fallback and not p.extract and not p.filter


def test_adaptive_strategies_have_no_preset():
    assert preset("adaptive", SETTINGS) is None
    assert preset("adaptive-precise", SETTINGS) is None


def test_strategy_defaults_to_the_settings():
    p = plan(analysis("extractive"), Settings(model="scripted", strategy="rag"))
    assert p.strategy == "rag" and p.granularity == 512
    p = plan(analysis("extractive"), Settings(model="scripted", strategy="adaptive"))
    assert p.strategy == "adaptive" and not p.fallback


def test_paper_numbers_are_settings():
    base = plan(analysis("extractive", "no", "semantic"), OKRALONG, "adaptive")
    assert (base.k, base.granularity, base.weights) == (5, 256, (3.0, 2.0))
    tuned = Settings(
        model="scripted",
        factoid_k=7,
        contextual_k=11,
        absent_factoid_granularity=300,
        absent_contextual_granularity=500,
        base_granularity=120,
        preferred_weight=4.0,
        other_weight=1.0,
        sub_question_k=2,
        hop_k=6,
        max_hops=2,
        extension_tokens=32,
        selection="k",
        multi_bridge="stepwise",
    )
    p = plan(analysis("extractive", "no", "semantic"), tuned, "adaptive")
    assert (p.k, p.granularity, p.weights) == (7, 300, (4.0, 1.0))
    p = plan(analysis("extractive", "yes", "exact"), tuned, "adaptive")
    assert (p.k, p.granularity, p.weights) == (7, 120, (1.0, 4.0))
    p = plan(analysis("summarizing", "no", "same"), tuned, "adaptive")
    assert (p.k, p.granularity, p.weights) == (11, 500, (1.0, 1.0))
    p = plan(analysis("arithmetic", "yes", "semantic"), tuned, "adaptive")
    assert (p.k, p.extend_tokens, p.weights) == (7, 32, (1.0, 4.0))
    assert plan(analysis("multi-source"), tuned, "adaptive").k == 2
    p = plan(analysis("multi-bridge"), tuned, "adaptive")
    assert (p.k, p.max_hops) == (6, 2)
    assert preset("rag", tuned).max_hops == 2


def _organize(state: dict, settings: Settings) -> dict:
    return organize(state, SimpleNamespace(context=settings))


def test_organize_node_writes_the_plan_as_data():
    a = analysis("multi-bridge", "no", "exact")
    for settings, workflow in (
        (SETTINGS, "direct"),
        (SETTINGS.model_copy(update={"multi_bridge": "stepwise"}), "stepwise"),
    ):
        out = _organize({"analysis": a.model_dump(), "question": "q"}, settings)
        assert "route" not in out  # a node returns only its own update: the graph's wrapper adds the route
        # the pure plan, sized to the question budget with the question's own prompt overheads
        assert out["plan"] == sized_plan(plan(a, settings), overheads("q"), settings).model_dump()
        assert out["plan"]["overheads"]["generate"] > 0 and out["plan"]["question_budget"] == settings.question_budget
        assert out["trace"][0].startswith(f"organize[adaptive-precise]: {workflow},")


NO_LLM = Settings(model=None)
# without a model: (strategy, type) -> (workflow, k); split / step-wise become one direct retrieval of at
# least factoid_k chunks, the long-context reader still selects its context (returned as evidence)
NO_LLM_CASES = [
    (("adaptive", "multi-source"), ("direct", 5)),
    (("adaptive-precise", "multi-bridge"), ("direct", 5)),
    (("adaptive", "summarizing"), ("direct", 8)),
    (("adaptive-precise", "extractive"), ("direct", 5)),
    (("lc", "extractive"), ("long_context", 5)),
    (("rag", "multi-bridge"), ("direct", 5)),
    (("longrag", "multi-source"), ("direct", 7)),
]


@pytest.mark.parametrize(("case", "expected"), NO_LLM_CASES, ids=["-".join(c) for c, _ in NO_LLM_CASES])
def test_plan_without_llm(case, expected):
    strategy, qtype = case
    p = plan(analysis(qtype), NO_LLM, strategy)
    # (an extractive question a model reads once also changes its filter and budget: test_extractive_read_once; so
    # does a multi-bridge one a model reads beside the extractor: test_multi_bridge_by_bridge_expansion_is_..., and a
    # summarizing one a model reads once: test_summary_reading)
    readings = {"extractive_reading": "filtered", "bridge_reading": "once", "summary_reading": "extracted"}
    with_model = plan(analysis(qtype), SETTINGS.model_copy(update=readings), strategy)
    assert (p.workflow, p.k) == expected
    replaced = with_model.workflow in ("split", "stepwise")
    assert replaced == ("no LLM configured" in p.reasons[-1])
    update = {
        "workflow": with_model.workflow,
        "k": with_model.k,
        "reasons": with_model.reasons,
        "bridge_seeds": with_model.bridge_seeds,
    }
    assert p.model_copy(update=update) == with_model, "only workflow, k and the bridge searches change"
    assert p.bridge_seeds == (NO_LLM.bridge_seeds if p.workflow == "direct" and p.budget else 0)


# (type, workflow with a model) -> (budget, bridge searches); the budget is shared by sub-questions and hops
BUDGET_CASES = [
    ("extractive", (SETTINGS.contextual_budget, 2)),  # read once by the model (extractive_reading="once")
    ("arithmetic", (SETTINGS.evidence_budget, 2)),
    ("summarizing", (SETTINGS.contextual_budget, 2)),
    ("multi-source", (SETTINGS.evidence_budget, 0)),
    ("multi-bridge", (SETTINGS.evidence_budget, 2)),  # one retrieval with bridge expansion, beside the extractor
]


def test_with_a_budget_absent_evidence_keeps_the_base_granularity():
    for qtype in ("extractive", "summarizing", "multi-bridge"):
        assert plan(analysis(qtype, "no"), SETTINGS, "adaptive").granularity == SETTINGS.base_granularity
        assert plan(analysis(qtype, "no"), OKRALONG, "adaptive").granularity > SETTINGS.base_granularity


@pytest.mark.parametrize(("qtype", "expected"), BUDGET_CASES)
def test_evidence_budget_by_question_type(qtype, expected):
    p = plan(analysis(qtype), SETTINGS, "adaptive")
    assert (p.budget, p.bridge_seeds) == expected
    assert str(p.budget) in p.reasons[0]
    by_k = plan(analysis(qtype), SETTINGS.model_copy(update={"selection": "k"}), "adaptive")
    assert (
        (by_k.budget, by_k.bridge_seeds) == (None, 0)
        and f"k={SETTINGS.factoid_k}" in by_k.reasons[0]
        or qtype == "summarizing"
    )
    for strategy in ("rag", "lc", "self-route", "longrag"):  # the papers' presets keep their fixed k
        assert plan(analysis(qtype), SETTINGS, strategy).budget is None


def test_organize_with_llm_keeps_the_workflow():
    out = _organize({"analysis": analysis("multi-source").model_dump(), "question": "q"}, SETTINGS)
    assert out["plan"]["workflow"] == "split"
    out = _organize({"question": "q", "strategy": "lc"}, SETTINGS)
    assert out["plan"]["workflow"] == "long_context" and out["plan"]["strategy"] == "lc"


@pytest.mark.parametrize("evidence", ["yes", "no"])
def test_multi_bridge_by_bridge_expansion_is_one_direct_retrieval(evidence):
    bridged = SETTINGS.model_copy(update={"multi_bridge": "bridges"})
    # with a model (bridge_reading="extracted", measured): the factoid budget beside LongRAG's extractor
    extracted = plan(analysis("multi-bridge", evidence), bridged, "adaptive-precise")
    assert (extracted.workflow, extracted.budget, extracted.extract, extracted.bridge_seeds) == (
        "direct",
        bridged.evidence_budget,
        True,
        bridged.bridge_seeds,
    )
    assert any("bridge expansion standing in for the hops" in r for r in extracted.reasons) and extracted.fallback
    # read once (bridge_reading="once"): the extractor's share goes to the evidence; the precise fallback stays
    once = bridged.model_copy(update={"bridge_reading": "once"})
    p = plan(analysis("multi-bridge", evidence), once, "adaptive-precise")
    assert (p.workflow, p.budget, p.bridge_seeds) == ("direct", bridged.contextual_budget, bridged.bridge_seeds)
    assert not p.extract and not p.filter and p.fallback
    assert any("multi-bridge, read once" in r for r in p.reasons) and any("no extractor" in r for r in p.reasons)
    # without a model no extractor can run: the evidence is read once whatever the setting says
    for setting in (bridged, once):
        no_model = plan(analysis("multi-bridge", evidence), setting.model_copy(update={"model": None}), "adaptive")
        assert no_model == plan(analysis("multi-bridge", evidence), once, "adaptive")
    hops = plan(analysis("multi-bridge", evidence), bridged.model_copy(update={"multi_bridge": "stepwise"}), "adaptive")
    assert hops.workflow == "stepwise" and hops.bridge_seeds == 0
    for strategy in ("rag", "self-route", "longrag"):  # presets never read it
        assert plan(analysis("multi-bridge"), bridged, strategy).workflow == "direct"


def test_extractive_read_once():
    """With a model and a budget, an extractive question is read once: the CoT filter's share goes to the evidence
    (the contextual budget); OkraLong's factoid budget and filter on request, without a model, or with selection=k."""
    once = plan(analysis("extractive"), SETTINGS, "adaptive")
    filtered = plan(analysis("extractive"), SETTINGS.model_copy(update={"extractive_reading": "filtered"}), "adaptive")
    assert (once.filter, once.budget) == (False, SETTINGS.contextual_budget)
    assert (filtered.filter, filtered.budget) == (True, SETTINGS.evidence_budget)
    assert any("read once" in r for r in once.reasons) and not any("read once" in r for r in filtered.reasons)
    assert once.model_copy(update={"filter": True, "budget": filtered.budget, "reasons": filtered.reasons}) == filtered
    assert plan(analysis("extractive"), NO_LLM, "adaptive").budget == NO_LLM.evidence_budget
    assert plan(analysis("extractive"), OKRALONG, "adaptive").filter
    for qtype in ("arithmetic", "multi-source"):  # and multi-bridge ones (bridge_reading, tested above)
        assert plan(analysis(qtype), SETTINGS, "adaptive").budget == SETTINGS.evidence_budget


def test_summary_reading():
    """A summarizing question beside LongRAG's extractor (summary_reading="extracted"), or read once: no extractor,
    the same contextual budget, which the question budget then gives to the evidence alone; without a model the
    setting changes nothing."""
    extracted = plan(analysis("summarizing"), SETTINGS.model_copy(update={"summary_reading": "extracted"}), "adaptive")
    once = plan(analysis("summarizing"), SETTINGS.model_copy(update={"summary_reading": "once"}), "adaptive-precise")
    assert (extracted.extract, extracted.filter, extracted.budget) == (True, False, SETTINGS.contextual_budget)
    assert (once.extract, once.filter, once.budget, once.fallback) == (False, False, SETTINGS.contextual_budget, True)
    assert any("summary_reading=once" in r for r in once.reasons)
    assert not any("summary_reading=once" in r for r in extracted.reasons)
    no_model = [SETTINGS.model_copy(update={"summary_reading": r, "model": None}) for r in ("once", "extracted")]
    once_alone, extracted_alone = (plan(analysis("summarizing"), s, "adaptive") for s in no_model)
    assert once_alone == extracted_alone
    for qtype in ("extractive", "multi-bridge", "arithmetic"):  # other question types never read it
        a = plan(analysis(qtype), SETTINGS.model_copy(update={"summary_reading": "once"}), "adaptive")
        b = plan(analysis(qtype), SETTINGS.model_copy(update={"summary_reading": "extracted"}), "adaptive")
        assert a == b


def test_an_unknown_extractive_reading_is_refused_with_the_choices():
    from longqa.contracts.settings import InvalidSettings, resolve_settings

    with pytest.raises(InvalidSettings, match="'once' or 'filtered'"):
        resolve_settings({"extractive_reading": "sometimes"})
