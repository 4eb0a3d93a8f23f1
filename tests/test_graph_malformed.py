"""Malformed model output, failing models and bad input: every run ends with a status and a
message in its output, never an exception out of graph.invoke."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from longqa.contracts.settings import Settings
from longqa.graph.graph import build_graph
from longqa.llm.scripted import KIND_MARKERS
from longqa.nodes.analyze import parse_analysis
from longqa.nodes.reason_step import parse_step
from longqa.nodes.split_question import parse_sub_questions
from tests.replies import cited_answer

KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
ANSWER = cited_answer("Amelie Kortsen")  # cites the passage that says it, as the grounding check wants
KINDS = [kind for kind, _ in KIND_MARKERS]


def analyzer_reply(qtype: str, evidence: str = "yes", pattern: str = "same") -> str:
    return json.dumps({"question-type": qtype, "info-type": pattern, "containing": evidence})


def shown_ids(generator_prompt: str) -> list[str]:
    return re.findall(r"^\[(E\d+)\] \(", generator_prompt, re.MULTILINE)


# -- the analyzer -------------------------------------------------------------------------------

GARBLED_ANALYSES = {
    "empty": "",
    "prose": "This looks like an extractive question to me, and the context seems to contain it.",
    "half-json": '{"question-type": "arith',
    "wrong-keys": '{"kind": "arithmetic", "pattern": "exact", "has_evidence": "yes"}',
    "wrong-values": '{"question-type": "banana", "info-type": "fuzzy", "containing": "maybe"}',
    "a-list": '["arithmetic", "exact", "yes"]',
    "null": "null",
}


@pytest.mark.parametrize("reply", list(GARBLED_ANALYSES.values()), ids=list(GARBLED_ANALYSES))
def test_parse_analysis_falls_back_to_the_safe_default(reply):
    a = parse_analysis(reply)
    assert (a.question_type, a.info_pattern, a.evidence) == ("extractive", "same", "no")
    assert a.used_default is True
    assert a.note
    assert a.backend == "llm"


def test_parse_analysis_keeps_the_readable_fields():
    a = parse_analysis('Sure! {"question-type": "Multi-Bridge", "info-type": "vague", "containing": true}')
    assert (a.question_type, a.info_pattern, a.evidence) == ("multi-bridge", "same", "yes")
    assert a.used_default is True and a.note == "safe default for info-type"
    a = parse_analysis("```json\n{'question-type': 'abstractive', 'info-type': 'semantic', 'containing': 'no'}\n```")
    assert (a.question_type, a.info_pattern, a.evidence) == ("summarizing", "semantic", "no")
    assert a.used_default is False and a.note == ""


@pytest.mark.parametrize(
    "reply",
    [
        "",
        GARBLED_ANALYSES["prose"],
        GARBLED_ANALYSES["half-json"],
        GARBLED_ANALYSES["wrong-keys"],
        GARBLED_ANALYSES["wrong-values"],
    ],
    ids=["empty", "prose", "half-json", "wrong-keys", "wrong-values"],
)
def test_garbled_analysis_in_the_graph_is_recorded(run_graph, scripted, reply):
    name, _ = scripted({"analyzer": reply, "generator": ANSWER})
    out = run_graph(KEEPER_Q, model=name, question_budget=0)
    analysis = out["analysis"]
    assert (analysis["question_type"], analysis["info_pattern"], analysis["evidence"]) == ("extractive", "same", "no")
    assert analysis["used_default"] is True and analysis["note"]
    assert any(line.startswith("analyze[llm]") and "safe default" in line for line in out["trace"])
    # extractive, read once by the model (no filter), evidence absent: the contextual budget at the base granularity
    assert out["plan"]["filter"] is False and out["plan"]["granularity"] == 150
    assert out["plan"]["budget"] == Settings().contextual_budget
    assert out["status"] == "answered"


# -- the filter ---------------------------------------------------------------------------------


def test_garbled_filter_verdicts_keep_the_chunk(graph_home, report, scripted):
    prompts: list[str] = []
    name, _ = scripted(
        {
            "analyzer": analyzer_reply("extractive"),
            "filter": "I am not sure, maybe?",
            "generator": lambda p: prompts.append(p) or ANSWER(p),
        }
    )
    graph = build_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "garbled-filter"}}
    out = graph.invoke(
        {"question": KEEPER_Q, "texts": [report]},
        config,
        context={
            "model": name,
            "home": str(graph_home),
            "strategy": "adaptive-precise",
            "analyzer": "llm",
            "filter_mode": "per-chunk",
            "extractive_reading": "filtered",
            "question_budget": 0,
        },
    )
    verdicts = graph.get_state(config).values["verdicts"]
    ids = [e["id"] for e in out["evidence"]]
    assert len(ids) >= 2
    assert sorted(v["evidence_id"] for v in verdicts) == sorted(ids)
    assert all(v["keep"] is True and v["parsed"] is False for v in verdicts)
    unparsed = [line for line in out["trace"] if "unparseable verdict" in line and "kept (safe default)" in line]
    assert len(unparsed) == len(ids)
    assert shown_ids(prompts[0]) == ids
    assert out["status"] == "answered"


# -- the splitter -------------------------------------------------------------------------------


def test_parse_sub_questions():
    assert parse_sub_questions("1. What is A?\n2. What is B?", 5) == ["What is A?", "What is B?"]
    assert parse_sub_questions("10. What is A?\n11) What is B?", 5) == ["What is A?", "What is B?"]
    assert parse_sub_questions("- What is A?\n* What is B?\n\n• What is C?", 2) == ["What is A?", "What is B?"]
    assert parse_sub_questions("What is A?\nwhat is a?\n", 5) == ["What is A?"]
    assert parse_sub_questions("", 5) == []
    assert parse_sub_questions("\n \n-\n1.\n??\n", 5) == []
    assert parse_sub_questions("2010 was a good year.", 5) == ["2010 was a good year."]


@pytest.mark.parametrize("reply", ["", "   \n\n", "-\n*\n1.\n??"], ids=["empty", "blank", "bullets-only"])
def test_garbled_split_falls_back_to_the_question(run_graph, scripted, reply):
    question = "Which bridge is longer, the Verrin Bridge or the Osterby Bridge?"
    name, _ = scripted({"analyzer": analyzer_reply("multi-source"), "splitter": reply})  # answers from its passages
    out = run_graph(question, model=name)
    assert out["route"].count("retrieve") == 1
    assert f"split_question: 1 sub-question(s): {question}" in out["trace"]
    assert [line for line in out["trace"] if line.startswith("retrieve:")][0].endswith(f"for {question!r}")
    assert out["status"] == "answered"


# -- the reasoner -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "no idea",
        "### Evidence: ### Next-Query: ### Answer:",
        "### Answer: None",
        "### Next-Query: none ### Answer: n/a",
        "{}",
    ],
)
def test_garbled_reasoner_ends_the_loop(run_graph, scripted, reply):
    name, model = scripted({"analyzer": analyzer_reply("multi-bridge"), "reasoner": reply, "generator": ANSWER})
    out = run_graph("Where was the lighthouse keeper of Port Verrin born?", model=name)
    assert out["route"].count("reason_step") == 1
    assert "generator" in model.calls
    assert out["status"] == "answered" and out["error"] is None


def test_parse_step():
    assert parse_step("### Evidence: e ### Next-Query: q? ### Answer: None") == ("e", "q?", None)
    assert parse_step("### Evidence: e ### Next-Query: None ### Answer: The answer is: Haldane.") == (
        "e",
        None,
        "Haldane",
    )
    assert parse_step("") == ("", None, None)
    assert parse_step("rambling") == ("rambling", None, None)


@pytest.mark.parametrize(
    ("strategy", "qtype"),
    [
        ("adaptive-precise", "extractive"),
        ("adaptive-precise", "multi-source"),
        ("adaptive-precise", "multi-bridge"),
        ("adaptive", "summarizing"),
        ("adaptive", "arithmetic"),
        ("longrag", None),
        ("self-route", None),
        ("lc", None),
    ],
)
def test_all_garbage_never_raises(run_graph, scripted, strategy, qtype):
    garbage = "\x00 }{ ### ??? null [[["
    name, _ = scripted({kind: garbage for kind in KINDS} | ({"analyzer": analyzer_reply(qtype)} if qtype else {}))
    out = run_graph(KEEPER_Q, model=name, strategy=strategy)
    assert out["route"][0] == "prepare" and out["route"][-1] == "respond"
    assert out["status"] in ("answered", "unanswerable")
    assert out["error"] is None


# -- failing models -----------------------------------------------------------------------------


class BrokenModel(BaseChatModel):
    """A model whose every call fails, as a provider outage would."""

    @property
    def _llm_type(self) -> str:
        return "broken"

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        raise RuntimeError("backend down")


@pytest.mark.parametrize("strategy", ["adaptive-precise", "longrag", "lc", "adaptive"])
def test_a_failing_model_ends_the_run_with_an_error(run_graph, scripted, strategy):
    name, _ = scripted(model=BrokenModel())
    out = run_graph(KEEPER_Q, model=name, strategy=strategy)
    assert out["status"] == "error"
    assert out["answer"] is None
    assert "model call failed" in out["error"] and "RuntimeError: backend down" in out["error"]
    assert out["route"][-1] == "respond"
    # each failed call is on the ledger (charged its prompt, by our count), none as a success
    assert out["usage"] and all(r["outcome"] == "error" and r["estimated"] for r in out["usage"])
    assert all(r["output_tokens"] == 0 < r["input_tokens"] for r in out["usage"])
    assert out["messages"][-1].content.startswith(f"Error: {out['error']}")
    if strategy.startswith("adaptive"):
        assert out["analysis"]["backend"] == "local-trained"
        assert "LLM analyzer failed" in out["analysis"]["note"]


def test_an_analyzer_failure_degrades_to_the_local_analyzer(run_graph, scripted):
    def fail(prompt: str) -> str:
        raise RuntimeError("analyzer endpoint down")

    name, model = scripted({"analyzer": fail, "generator": ANSWER})
    out = run_graph(KEEPER_Q, model=name)
    assert out["analysis"]["backend"] == "local-trained"
    assert "LLM analyzer failed" in out["analysis"]["note"] and "analyzer endpoint down" in out["analysis"]["note"]
    assert any("used the local analyzer" in line for line in out["trace"] if line.startswith("analyze"))
    assert [r["outcome"] for r in out["usage"] if r["node"] == "analyze"] == ["error"]  # the failed call, recorded
    assert out["status"] == "answered" and out["error"] is None


@pytest.mark.parametrize("kind", ["generator", "long_context"])
def test_a_failing_answer_step_is_an_error(run_graph, scripted, kind):
    def fail(prompt: str) -> str:
        raise RuntimeError(f"{kind} exploded")

    name, _ = scripted(
        {
            "analyzer": analyzer_reply("arithmetic"),
            kind: fail,
            "generator": fail if kind == "generator" else "unanswerable",
        }
    )
    out = run_graph(KEEPER_Q, model=name, strategy="lc" if kind == "long_context" else "adaptive-precise")
    assert out["status"] == "error"
    assert f"{kind} exploded" in out["error"]
    assert out["route"][-1] == "respond" and out["route"].count("long_context") <= 1


def test_a_failing_fallback_is_reported(run_graph, scripted):
    def fail(prompt: str) -> str:
        raise RuntimeError("long context exploded")

    name, _ = scripted({"analyzer": analyzer_reply("arithmetic"), "generator": "unanswerable", "long_context": fail})
    out = run_graph(KEEPER_Q, model=name, strategy="adaptive-precise", question_budget=0)
    assert out["route"][-3:] == ["self_route", "long_context", "respond"]
    assert "long context exploded" in out["error"]
    assert any("long context exploded" in line for line in out["trace"] if line.startswith("long_context"))


@pytest.mark.parametrize("kind", ["splitter", "reasoner", "extractor", "cot", "filter", "joint_filter"])
def test_a_failing_intermediate_step_degrades(run_graph, scripted, kind):
    def fail(prompt: str) -> str:
        raise RuntimeError(f"{kind} exploded")

    qtype = {"splitter": "multi-source", "reasoner": "multi-bridge", "extractor": "summarizing"}.get(kind, "extractive")
    name, _ = scripted({"analyzer": analyzer_reply(qtype), kind: fail, "generator": ANSWER})
    mode = "per-chunk" if kind in ("cot", "filter") else "joint"  # LongRAG's two calls, or the one joint call
    readings = {"extractive_reading": "filtered", "summary_reading": "extracted"}  # the plans that call them
    out = run_graph(KEEPER_Q, model=name, filter_mode=mode, question_budget=0, **readings)
    assert out["status"] == "answered" and out["answer"] == "Amelie Kortsen"
    assert any(f"{kind} exploded" in line for line in out["trace"])


# -- bad input ----------------------------------------------------------------------------------


def bad_inputs(report: str, tmp_path) -> dict:
    return {
        "no question": ({"texts": [report]}, "input: no question"),
        "blank question": ({"question": "   ", "texts": [report]}, "input: no question"),
        "no documents": ({"question": KEEPER_Q}, "input: no documents"),
        "missing file": ({"question": KEEPER_Q, "documents": [str(tmp_path / "missing.md")]}, "file not found"),
        "empty text": ({"question": KEEPER_Q, "texts": ["  \n "]}, "no text content"),
        "unknown collection": ({"question": KEEPER_Q, "collection": "nope"}, "no collection named 'nope'"),
    }


@pytest.mark.parametrize(
    "case", ["no question", "blank question", "no documents", "missing file", "empty text", "unknown collection"]
)
def test_bad_input_is_an_error_in_the_output(run_graph, report, tmp_path, case):
    inputs, message = bad_inputs(report, tmp_path)[case]
    out = run_graph(inputs=inputs)
    assert out["status"] == "error"
    assert out["error"].startswith("input: ") and message in out["error"]
    assert out["route"] == ["prepare", "respond"]
    assert out["answer"] is None and out["usage"] == [] and out["citations"] == []
    assert out["messages"][-1].content == f"Error: {out['error']}"


def test_documents_root_refuses_paths_outside_it(run_graph, report_path, tmp_path):
    root = tmp_path / "allowed"
    root.mkdir()
    out = run_graph(KEEPER_Q, inputs={"documents": [str(report_path)]}, documents_root=str(root))
    assert out["status"] == "error" and "outside the allowed documents root" in out["error"]
    out = run_graph(KEEPER_Q, inputs={"documents": ["../" * 3 + "etc/passwd"]}, documents_root=str(root))
    assert out["status"] == "error" and "outside the allowed documents root" in out["error"]
    # inside the root, relative to it, the same file is read
    out = run_graph(KEEPER_Q, inputs={"documents": [report_path.name]}, documents_root=str(report_path.parent))
    assert out["status"] == "answered" and "Amelie Kortsen" in out["answer"]
