"""The decomposition oracle: gold queries from the annotations, the stand-in's replies, and an
oracle run through the real graph and harness, labelled as an upper bound."""

from __future__ import annotations

import json

import pytest

from longqa.contracts.settings import Settings
from longqa.evals.long_contexts import build, comparison_queries, decomposition_queries
from longqa.evals.longbench import EvalItem
from longqa.evals.oracle import NO_ANSWER, OracleChatModel, oracle_of
from longqa.evals.report import build_report
from longqa.evals.runner import run_eval
from longqa.evals.tables import markdown
from longqa.llm.scripted import KIND_MARKERS
from tests.eval_helpers import FACTS, shared_eval_home, tiny_item


@pytest.fixture(scope="session")
def eval_home(tmp_path_factory):
    return shared_eval_home(tmp_path_factory)


def test_decomposition_steps_get_earlier_answers_substituted():
    steps = [
        {"question": "What company published Journal X?", "answer": "American Psychological Association"},
        {"question": "Who was the first president of #1 ?", "answer": "G. Stanley Hall"},
        {"question": "#2 >> place of birth", "answer": "Ashfield"},
    ]
    assert decomposition_queries(steps) == [
        "What company published Journal X?",
        "Who was the first president of American Psychological Association ?",
        "G. Stanley Hall place of birth",
    ]


def test_comparison_sub_questions_name_one_entity_each():
    q = "Which is a comedy film, The Million Dollar Duck or Don Quixote?"
    a, b = comparison_queries(q, ["The Million Dollar Duck", "Don Quixote"])
    assert a.startswith("The Million Dollar Duck: ") and "Don Quixote" not in a
    assert b.startswith("Don Quixote: ") and "Million Dollar Duck" not in b


@pytest.mark.shared_data
def test_shared_items_carry_their_oracle_queries():
    pytest.importorskip("longqa.evals.long_contexts")
    try:
        musique, hotpot = build("musique", n=3), build("hotpotqa", n=10)
    except FileNotFoundError:
        pytest.skip("../shared/data is absent")
    assert all(i.oracle_workflow == "stepwise" and len(i.oracle_queries) >= 2 for i in musique)
    comparisons = [i for i in hotpot if i.type == "comparison"]
    assert comparisons and all(i.oracle_workflow == "split" and len(i.oracle_queries) == 2 for i in comparisons)
    assert all(i.oracle_workflow is None and not i.oracle_queries for i in hotpot if i.type == "bridge")


def _prompt(kind: str, extra: str = "") -> str:
    return dict(KIND_MARKERS)[kind] + extra


def test_the_stand_in_writes_the_gold_queries_and_answers_nothing():
    model = OracleChatModel(workflow="stepwise", queries=["first step?", "second step?"])
    assert json.loads(model.reply("analyzer", _prompt("analyzer")))["question-type"] == "multi-bridge"
    assert "### Next-Query: first step?" in model.reply("reasoner", _prompt("reasoner", " ### Context: x"))
    assert "### Next-Query: second step?" in model.reply("reasoner", _prompt("reasoner", " (hop 1) gold step 1"))
    done = model.reply("reasoner", _prompt("reasoner", " (hop 1) a (hop 2) b"))
    assert "### Next-Query: None" in done and "### Answer: None" in done
    assert json.loads(model.reply("filter", _prompt("filter"))) == {"status": True}
    assert model.reply("generator", _prompt("generator")) == NO_ANSWER
    split = OracleChatModel(workflow="split", queries=["A: q?", "B: q?"])
    assert split.reply("splitter", _prompt("splitter")) == "A: q?\nB: q?"


def _item(i: int, oracle: dict | None) -> EvalItem:
    return tiny_item(i, **({"oracle": oracle} if oracle else {}))


def test_an_oracle_run_follows_the_gold_queries_through_the_graph(tmp_path, eval_home):
    steps = [FACTS[1][0], FACTS[2][0]]  # two gold queries about facts of other items
    items = [
        _item(0, {"workflow": "stepwise", "queries": steps}),
        _item(1, {"workflow": "split", "queries": ["ferry captain birthplace", "Haldane village"]}),
        _item(2, None),
    ]
    settings = Settings(model=None, home=eval_home)
    result = run_eval(items, ["adaptive"], settings, tmp_path, progress=False, oracle=True)
    assert result.failures == [] and result.oracle_skipped == 1 and result.ran == 2
    step = result.records[("tiny/q0", "adaptive")]
    assert step["oracle"] is True and step["workflow"] == "stepwise"
    assert step["route"].count("reason_step") == len(steps) + 1  # one hop per gold step, one to stop
    assert step["route"].count("retrieve") == len(steps) + 1  # the question, then each gold step
    assert step["passages"] and step["answer"] == NO_ANSWER
    split = result.records[("tiny/q1", "adaptive")]
    assert split["workflow"] == "split" and split["route"].count("retrieve") == 2
    report = build_report(items, ["adaptive"], settings, result, oracle=True)
    assert report["oracle"] and not report["quality_measurement"] and report["oracle_skipped"] == 1
    text = markdown(report)
    assert "decomposition oracle" in text and "NOT a quality number" in text and "F1" not in text.split("##")[1]
    assert all(r.get("f1") is None for r in report["rows"])


def test_oracle_items_need_a_gold_decomposition():
    assert oracle_of(_item(0, None)) is None
    assert oracle_of(_item(0, {"workflow": "stepwise", "queries": []})) is None
    assert oracle_of(_item(0, {"workflow": "guess", "queries": ["q"]})) is None
    assert oracle_of(_item(0, {"workflow": "split", "queries": ["a", "b"]})) == {
        "workflow": "split",
        "queries": ["a", "b"],
    }


def test_the_oracle_refuses_a_model(tmp_path, capsys):
    from longqa.cli import main
    from tests.eval_helpers import write_tiny

    path = write_tiny(tmp_path / "tiny.jsonl", n=1)
    assert main(["eval", str(path), "--oracle", "--model", "scripted", "--out", str(tmp_path / "out")]) == 2
    assert "--oracle replaces the model" in capsys.readouterr().err
