"""The exact node sequence (`route`) of each workflow: the adaptive strategies with the analysis
forced through a scripted analyzer reply, and the fixed presets. Offline (scripted model)."""

from __future__ import annotations

import json
import re

import pytest

from longqa.contracts.settings import Settings
from tests.replies import cited_answer

ADAPTIVE_HEAD = ["prepare", "retrieve_primary", "analyze", "organize"]
TAIL = ["generate", "self_route", "respond"]  # the papers' baselines
GROUNDED_TAIL = ["generate", "ground", "self_route", "respond"]  # the adaptive strategies check their answers
KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
ANSWER = cited_answer("Amelie Kortsen")  # cites the passage that says it, as the grounding check wants


def analyzer_reply(qtype: str, evidence: str = "yes", pattern: str = "same") -> str:
    return json.dumps({"question-type": qtype, "info-type": pattern, "containing": evidence})


def filters(out: dict) -> list[str]:
    """Per-chunk mode (LongRAG's presets): one filter per passage shown to the CoT filter; joint mode
    (the adaptive default): none, the cot call judged them."""
    assert out["evidence"], "the filter needs passages"
    return ["filter"] * len(out["evidence"]) if out["plan"]["filter_mode"] == "per-chunk" else []


REASON_NEXT = (
    "### Evidence: The keeper is Amelie Kortsen. ### Next-Query: Where was Amelie Kortsen born? ### Answer: None"
)
REASON_DONE = (
    "### Evidence: Amelie Kortsen was born in Haldane. ### Next-Query: None ### Answer: The answer is: Haldane"
)
# the keeper question answered at the first hop, from the passage the first hop finds
REASON_DONE_KEEPER = (
    "### Evidence: The keeper is Amelie Kortsen. ### Next-Query: None ### Answer: The answer is: Amelie Kortsen"
)


def answer_on_second_hop(prompt: str) -> str:
    return REASON_DONE if "(hop 1)" in prompt else REASON_NEXT


# (id, strategy, analysis (type, evidence, pattern), extra replies) -> expected route builder, granularity
# (OkraLong's rule, selection="k")
ADAPTIVE_CASES = [
    (
        "extractive-yes",
        "adaptive-precise",
        ("extractive", "yes", "same"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "cot", *filters(out), *GROUNDED_TAIL],
        150,
    ),
    (
        "extractive-no",
        "adaptive-precise",
        ("extractive", "no", "exact"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "cot", *filters(out), *GROUNDED_TAIL],
        256,
    ),
    (
        "extractive-adaptive",
        "adaptive",
        ("extractive", "yes", "semantic"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "cot", *filters(out), *GROUNDED_TAIL],
        150,
    ),
    (
        "arithmetic-yes",
        "adaptive-precise",
        ("arithmetic", "yes", "exact"),  # the calculator asks first; no expression: the generator answers
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "calculate", *GROUNDED_TAIL],
        150,
    ),
    (
        "arithmetic-no",
        "adaptive",
        ("arithmetic", "no", "semantic"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "calculate", *GROUNDED_TAIL],
        256,
    ),
    (
        "summarizing-yes",
        "adaptive-precise",
        ("summarizing", "yes", "semantic"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "extract", *GROUNDED_TAIL],
        150,
    ),
    (
        "summarizing-no",
        "adaptive-precise",
        ("summarizing", "no", "semantic"),
        {},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "process_context", "extract", *GROUNDED_TAIL],
        400,
    ),
    (
        "multi-source-yes",
        "adaptive-precise",
        ("multi-source", "yes", "same"),
        {"splitter": "How long is the Verrin Bridge?\nHow long is the Osterby Bridge?"},
        lambda out: [
            *ADAPTIVE_HEAD,
            "split_question",
            "retrieve",
            "retrieve",
            "process_context",
            "cot",
            *filters(out),
            *GROUNDED_TAIL,
        ],
        150,
    ),
    (
        "multi-source-no-3",
        "adaptive",
        ("multi-source", "no", "exact"),
        {"splitter": "1. How long is the Verrin Bridge?\n2. How long is the Osterby Bridge?\n3. Who is the keeper?"},
        lambda out: [
            *ADAPTIVE_HEAD,
            "split_question",
            "retrieve",
            "retrieve",
            "retrieve",
            "process_context",
            "cot",
            *filters(out),
            *GROUNDED_TAIL,
        ],
        256,
    ),
    # the reasoner answers at once: the draft goes straight to generate (no extractor, no LLM call)
    (
        "multi-bridge-hop1",
        "adaptive-precise",
        ("multi-bridge", "yes", "same"),
        {"reasoner": REASON_DONE_KEEPER},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "reason_step", "process_context", *GROUNDED_TAIL],
        150,
    ),
    (
        "multi-bridge-hop2",
        "adaptive-precise",
        ("multi-bridge", "no", "exact"),
        {"reasoner": answer_on_second_hop},
        lambda out: [
            *ADAPTIVE_HEAD,
            "retrieve",
            "reason_step",
            "retrieve",
            "reason_step",
            "process_context",
            *GROUNDED_TAIL,
        ],
        256,
    ),
    # no answer and no next query: the loop ends, the extractor and the generator take over
    (
        "multi-bridge-stuck",
        "adaptive",
        ("multi-bridge", "yes", "same"),
        {"reasoner": "### Evidence: nothing useful ### Next-Query: None ### Answer: None"},
        lambda out: [*ADAPTIVE_HEAD, "retrieve", "reason_step", "process_context", "extract", *GROUNDED_TAIL],
        150,
    ),
]


@pytest.mark.parametrize(
    ("strategy", "forced", "replies", "expected", "granularity"),
    [c[1:] for c in ADAPTIVE_CASES],
    ids=[c[0] for c in ADAPTIVE_CASES],
)
@pytest.mark.parametrize("selection", ["budget", "k"])
def test_adaptive_route(run_graph, scripted, strategy, forced, replies, expected, granularity, selection):
    qtype, evidence, pattern = forced
    # the scripted generator answers from the passages it is shown, so the grounding check accepts it
    name, model = scripted({"analyzer": analyzer_reply(qtype, evidence, pattern), **replies})
    # OkraLong's routes as the paper draws them: no question budget (tests/test_budget.py has its own)
    out = run_graph(KEEPER_Q, model=name, strategy=strategy, selection=selection, question_budget=0)
    if selection == "budget":  # the granularity grows with absent evidence under OkraLong's fixed k only
        granularity = 150
    assert out["error"] is None
    if selection == "budget" and qtype in ("extractive", "summarizing"):  # read once: no CoT filter, no extractor
        assert out["route"] == [*ADAPTIVE_HEAD, "retrieve", "process_context", *GROUNDED_TAIL]
        assert not out["plan"]["filter"] and not out["plan"]["extract"]
        assert out["plan"]["budget"] == Settings().contextual_budget
    else:
        assert out["route"] == expected(out)
    assert out["analysis"]["question_type"] == qtype
    assert out["analysis"]["evidence"] == evidence
    assert out["analysis"]["backend"] == "llm" and not out["analysis"]["used_default"]
    assert out["plan"]["strategy"] == strategy
    assert out["plan"]["granularity"] == granularity
    assert out["status"] == "answered"
    assert model.calls[0] == "analyzer"


def test_split_retrieves_each_sub_question(run_graph, scripted):
    subs = ["How long is the Verrin Bridge?", "How long is the Osterby Bridge?"]
    name, _ = scripted({"analyzer": analyzer_reply("multi-source"), "splitter": "\n".join(subs), "generator": ANSWER})
    out = run_graph("Which bridge is longer, the Verrin Bridge or the Osterby Bridge?", model=name)
    retrieved = [line for line in out["trace"] if line.startswith("retrieve:")]
    assert len(retrieved) == 2
    assert all(any(repr(q) in line for line in retrieved) for q in subs)
    assert out["plan"]["k"] == 3


def test_stepwise_answer_is_the_reasoners(run_graph, scripted):
    name, model = scripted({"analyzer": analyzer_reply("multi-bridge"), "reasoner": answer_on_second_hop})
    out = run_graph("Where was the lighthouse keeper of Port Verrin born?", model=name, stepwise_answer="reasoner")
    assert out["answer"] == "Haldane"
    assert model.calls == ["analyzer", "reasoner", "reasoner"]
    retrieved = [line for line in out["trace"] if line.startswith("retrieve:")]
    assert "Where was Amelie Kortsen born?" in retrieved[1]


def test_multi_bridge_default_is_one_retrieval_with_bridge_expansion(run_graph, scripted):
    """The default for a multi-bridge question (measured with a real model): one hybrid retrieval whose
    bridge expansion stands in for the hops, read by the generator; no reasoner call."""
    name, model = scripted(
        {"analyzer": analyzer_reply("multi-bridge"), "reasoner": answer_on_second_hop, "generator": ANSWER}
    )
    out = run_graph("Where was the lighthouse keeper of Port Verrin born?", model=name, multi_bridge="bridges")
    assert out["plan"]["workflow"] == "direct" and out["plan"]["bridge_seeds"] > 0
    assert "reasoner" not in model.calls and "reason_step" not in out["route"]
    assert out["route"].count("retrieve") == 1 and out["route"][-4:] == ["generate", "ground", "self_route", "respond"]
    assert any("bridge expansion standing in for the hops" in r for r in out["plan"]["reasons"])
    assert out["status"] == "answered" and out["answer"] == "Amelie Kortsen"


PRESET_ROUTES = {
    "rag": ["prepare", "organize", "retrieve", "process_context", *TAIL],
    "self-route": ["prepare", "organize", "retrieve", "process_context", *TAIL],
    "lc": ["prepare", "organize", "long_context", "respond"],
    # the filter first, then the extractor reads the passages it kept
    "longrag": ["prepare", "organize", "retrieve", "process_context", "cot", "<filters>", "extract", *TAIL],
    "longrag-ext": ["prepare", "organize", "retrieve", "process_context", "extract", *TAIL],
    "longrag-fil": ["prepare", "organize", "retrieve", "process_context", "cot", "<filters>", *TAIL],
}


@pytest.mark.parametrize("strategy", list(PRESET_ROUTES))
def test_preset_route(run_graph, scripted, strategy):
    name, model = scripted({"generator": ANSWER, "long_context": "Amelie Kortsen"})
    out = run_graph(KEEPER_Q, model=name, strategy=strategy)
    expected = [step for node in PRESET_ROUTES[strategy] for step in (filters(out) if node == "<filters>" else [node])]
    assert out["route"] == expected
    assert out["plan"]["strategy"] == strategy
    assert out["analysis"] == {}, "presets skip the analyzer"
    assert "analyzer" not in model.calls
    assert out["status"] == "answered"
    assert "Amelie Kortsen" in out["answer"]
    if strategy != "lc":
        assert {e["source"] for e in out["evidence"]} == {"text-1"}


def test_strategy_in_the_input_overrides_the_settings(run_graph, scripted, report):
    name, _ = scripted({"generator": ANSWER})
    out = run_graph(KEEPER_Q, model=name, inputs={"texts": [report], "strategy": "rag"}, strategy="adaptive-precise")
    assert out["route"] == PRESET_ROUTES["rag"]
    assert out["plan"]["strategy"] == "rag"


def test_factoid_k_setting_reaches_the_plan_and_the_retrieval(run_graph, scripted):
    name, _ = scripted({"analyzer": analyzer_reply("extractive"), "generator": ANSWER})
    out = run_graph(KEEPER_Q, model=name, factoid_k=7, selection="k", question_budget=0)  # OkraLong's fixed k
    assert out["plan"]["k"] == 7 and out["plan"]["budget"] is None
    assert any("k=7" in line for line in out["trace"] if line.startswith("organize"))
    (line,) = [t for t in out["trace"] if t.startswith("retrieve:")]
    assert line.startswith("retrieve: 7 chunk(s) of ") and "(top 7)" in line


def test_the_evidence_budget_reaches_the_retrieval(run_graph, scripted):
    name, _ = scripted({"analyzer": analyzer_reply("extractive"), "generator": ANSWER})
    for budget in (300, 900):
        out = run_graph(KEEPER_Q, model=name, contextual_budget=budget, question_budget=0)  # extractive: read once
        assert out["plan"]["budget"] == budget and out["plan"]["bridge_seeds"] == 2
        (line,) = [t for t in out["trace"] if t.startswith("retrieve:")]
        used = int(re.search(rf"\((\d+) of {budget} tokens", line).group(1))
        assert budget - 150 < used <= budget, (budget, line)  # filled to within one chunk


def test_scripted_extractor_quotes_the_document_not_the_question(run_graph, scripted):
    prompts: list[str] = []
    name, model = scripted(
        {"analyzer": analyzer_reply("summarizing"), "generator": lambda p: prompts.append(p) or ANSWER(p)}
    )
    out = run_graph(KEEPER_Q, model=name, summary_reading="extracted")  # beside the extractor
    assert "extractor" in model.calls
    global_info = prompts[0].split("Global information (extracted from the source paragraphs):\n", 1)[1]
    global_info = global_info.split("\n\nRetrieved passages:", 1)[0]
    assert KEEPER_Q not in global_info
    assert "The lighthouse keeper of Port Verrin is Amelie Kortsen." in global_info
    assert out["status"] == "answered"
