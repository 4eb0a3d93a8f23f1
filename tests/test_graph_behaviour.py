"""Behaviour of the workflow graph with scripted replies: parallel fan-out, the step-wise loop's
bounds, the CoT filter's keep-all rule, the long-context fallback and its window cap."""

from __future__ import annotations

import json
import re
import threading

import pytest

from longqa.contracts.settings import Settings
from longqa.retrieval import Searcher
from longqa.retrieval.tokens import default_counter
from longqa.services.stores import store_for
from tests.replies import cited_answer

KEEPER_Q = "Who is the lighthouse keeper of Port Verrin?"
ANSWER = cited_answer("Amelie Kortsen")  # cites the passage that says it, as the grounding check wants
REASON_NEXT = (
    "### Evidence: The keeper is Amelie Kortsen. ### Next-Query: Where was Amelie Kortsen born? ### Answer: None"
)
REASON_DONE = (
    "### Evidence: Amelie Kortsen was born in Haldane. ### Next-Query: None ### Answer: The answer is: Haldane"
)


def analyzer_reply(qtype: str, evidence: str = "yes", pattern: str = "same") -> str:
    return json.dumps({"question-type": qtype, "info-type": pattern, "containing": evidence})


def shown_ids(generator_prompt: str) -> list[str]:
    """The passage ids the generator prompt shows (blocks start with '[E<n>] (source)')."""
    return re.findall(r"^\[(E\d+)\] \(", generator_prompt, re.MULTILINE)


def article_of(filter_prompt: str) -> str:
    return filter_prompt.split("Given an article:", 1)[1].split("\nQuestion:", 1)[0]


class FirstTwoMeet:
    """The first two callers wait for each other (a Barrier(2)); later callers pass. If the two
    never overlap, the first wait times out and `broken` records it (the test then fails)."""

    def __init__(self, timeout: float = 10.0):
        self.barrier = threading.Barrier(2, timeout=timeout)
        self.lock = threading.Lock()
        self.arrivals = 0
        self.met: list[str] = []
        self.broken: list[str] = []

    def wait(self, label: str) -> None:
        with self.lock:
            self.arrivals += 1
            first_two = self.arrivals <= 2
        if not first_two:
            return
        try:
            self.barrier.wait()
            self.met.append(label)
        except threading.BrokenBarrierError:
            self.broken.append(label)


# -- parallelism ----------------------------------------------------------------------------


def test_sub_questions_are_retrieved_concurrently(run_graph, scripted, monkeypatch):
    import longqa.nodes.retrieve as retrieve_node

    meeting = FirstTwoMeet()
    real = retrieve_node.searcher_for

    class MeetingSearcher:
        def __init__(self, searcher):
            self.searcher = searcher

        def search(self, query, **kwargs):
            meeting.wait(query)
            return self.searcher.search(query, **kwargs)

        def __getattr__(self, name):  # the rest (documents, store) is the real searcher's
            return getattr(self.searcher, name)

    monkeypatch.setattr(
        retrieve_node, "searcher_for", lambda settings, library, ids: MeetingSearcher(real(settings, library, ids))
    )
    subs = ["How long is the Verrin Bridge?", "How long is the Osterby Bridge?"]
    name, _ = scripted({"analyzer": analyzer_reply("multi-source"), "splitter": "\n".join(subs), "generator": ANSWER})
    out = run_graph("Which bridge is longer, the Verrin Bridge or the Osterby Bridge?", model=name)
    assert out["route"].count("retrieve") == 2
    assert meeting.broken == [], "the sub-question retrieves ran one after the other"
    assert sorted(meeting.met) == sorted(subs)


def test_filter_checks_run_concurrently(run_graph, scripted):
    meeting = FirstTwoMeet()

    def judge(prompt: str) -> str:
        meeting.wait(article_of(prompt)[:40])
        return '{"status": true}'

    name, model = scripted({"analyzer": analyzer_reply("extractive"), "filter": judge, "generator": ANSWER})
    out = run_graph(
        KEEPER_Q, model=name, filter_mode="per-chunk", question_budget=0, extractive_reading="filtered"
    )  # LongRAG's filter
    assert out["route"].count("filter") == len(out["evidence"]) >= 2
    assert meeting.broken == [], "the per-chunk filter calls ran one after the other"
    assert len(meeting.met) == 2
    assert model.max_in_flight >= 2


# -- the step-wise reasoner -------------------------------------------------------------------


@pytest.mark.parametrize(("max_hops", "expected"), [(2, 2), (None, 4)])
def test_reasoner_stops_at_max_hops(run_graph, scripted, max_hops, expected):
    name, model = scripted(
        {"analyzer": analyzer_reply("multi-bridge"), "reasoner": REASON_NEXT, "generator": cited_answer("Haldane")}
    )
    settings = {"max_hops": max_hops} if max_hops else {}
    out = run_graph("Where was the lighthouse keeper of Port Verrin born?", model=name, question_budget=0, **settings)
    assert out["plan"]["max_hops"] == expected
    assert out["route"].count("reason_step") == expected
    assert out["route"].count("retrieve") == expected
    assert model.calls.count("reasoner") == expected
    assert [r["node"] for r in out["usage"]].count("reason_step") == expected
    i = out["route"].index("process_context")
    assert out["route"][i - 1] == "reason_step" and "reason_step" not in out["route"][i:]
    # no answer from the reasoner: the generator answers
    assert "generator" in model.calls
    assert out["answer"] == "Haldane" and out["status"] == "answered"


def test_reasoner_answer_ends_the_loop_and_skips_the_generator(run_graph, scripted):
    name, model = scripted({"analyzer": analyzer_reply("multi-bridge"), "reasoner": REASON_DONE})
    # the scripted reasoner answers at the first hop whatever it read: no grounding check here
    # (tests/test_grounding.py holds a draft to its passages)
    q = "Where was the lighthouse keeper of Port Verrin born?"
    out = run_graph(q, model=name, max_hops=4, grounding="off", stepwise_answer="reasoner")
    assert out["route"].count("reason_step") == 1
    assert out["answer"] == "Haldane" and out["status"] == "answered"
    assert model.calls == ["analyzer", "reasoner"]
    assert "generate" not in [r["node"] for r in out["usage"]]
    assert "generate: the step-wise reasoner's answer" in out["trace"]
    assert out["citations"] == out["evidence"] and out["citations"]


# -- the CoT filter -----------------------------------------------------------------------------


def test_filter_keeps_everything_when_no_chunk_passes(run_graph, scripted):
    prompts: list[str] = []
    name, _ = scripted(
        {
            "analyzer": analyzer_reply("extractive"),
            "filter": '{"status": false}',
            "generator": lambda p: prompts.append(p) or ANSWER(p),
        }
    )
    out = run_graph(
        KEEPER_Q, model=name, filter_mode="per-chunk", question_budget=0, extractive_reading="filtered"
    )  # LongRAG's filter
    n = len(out["evidence"])
    assert n >= 2 and out["route"].count("filter") == n
    assert f"filter: no chunk passed; keeping all {n}" in out["trace"]
    assert shown_ids(prompts[0]) == [e["id"] for e in out["evidence"]]


def test_filter_keeps_only_the_chunks_that_pass(run_graph, scripted):
    prompts: list[str] = []

    def judge(prompt: str) -> str:
        return json.dumps({"status": "lighthouse" in article_of(prompt)})

    replies = {"analyzer": analyzer_reply("extractive"), "filter": judge}
    name, _ = scripted({**replies, "generator": lambda p: prompts.append(p) or ANSWER(p)})
    out = run_graph(
        KEEPER_Q, model=name, filter_mode="per-chunk", question_budget=0, extractive_reading="filtered"
    )  # LongRAG's filter
    passing = [e["id"] for e in out["evidence"] if "lighthouse" in e["text"]]
    assert 1 <= len(passing) < len(out["evidence"]), "the fixture needs passing and failing passages"
    assert shown_ids(prompts[0]) == passing
    assert f"filter: kept {len(passing)} of {len(out['evidence'])} chunk(s)" in out["trace"]
    assert {c["id"] for c in out["citations"]} <= set(passing)


# -- the long-context fallback ----------------------------------------------------------------

FALLBACK_CASES = [
    # (strategy, generator reply, falls back)
    ("adaptive-precise", "unanswerable", True),
    ("adaptive-precise", "Unanswerable.\nSources: E1", True),
    ("self-route", "unanswerable", True),
    ("adaptive", "unanswerable", False),
    ("rag", "unanswerable", False),
    ("adaptive-precise", ANSWER, False),
    ("self-route", ANSWER, False),
]


@pytest.mark.parametrize(("strategy", "reply", "falls_back"), FALLBACK_CASES)
def test_long_context_fallback(run_graph, scripted, strategy, reply, falls_back):
    name, model = scripted(
        {"analyzer": analyzer_reply("arithmetic"), "generator": reply, "long_context": "Amelie Kortsen"}
    )
    out = run_graph(KEEPER_Q, model=name, strategy=strategy, question_budget=0)  # see test_budget.py
    route = out["route"]
    assert route[-1] == "respond"
    assert route.count("generate") == 1
    if falls_back:  # the adaptive strategies check the long context's answer too
        checked = ["ground"] if strategy.startswith("adaptive") else []
        assert route[-3 - len(checked) :] == ["self_route", "long_context", *checked, "respond"]
        assert model.calls.count("long_context") == 1
        assert out["answer"] == "Amelie Kortsen" and out["status"] == "answered"
        assert out["citations"] and all(c["id"].startswith("L") for c in out["citations"])
        assert "self_route: unanswerable from retrieval: falling back to the long context" in out["trace"]
    else:
        assert "long_context" not in route and "long_context" not in model.calls
        assert route[-2:] == ["self_route", "respond"]
        if reply is ANSWER:
            assert out["status"] == "answered"
        else:
            assert out["answer"] == "unanswerable" and out["status"] == "unanswerable"
            assert out["citations"] == []


@pytest.mark.parametrize("strategy", ["adaptive-precise", "self-route"])
def test_unanswerable_question_ends_unanswerable_without_looping(run_graph, strategy):
    # nothing in the report is about operas: the scripted generator and the long-context reader both
    # decline (two words the report never says, "opera" and "commission": under the subject check's three)
    # (no question budget: with one, precise mode's fallback may be refused; tests/test_budget.py)
    out = run_graph("Which opera did the harbour board commission?", strategy=strategy, question_budget=0)
    assert out["error"] is None
    assert out["status"] == "unanswerable" and out["answer"] == "unanswerable"
    assert out["route"].count("long_context") == 1
    assert out["route"].count("generate") == 1
    assert out["route"][-2:] == ["long_context", "respond"]
    assert out["citations"] == []
    assert [r["node"] for r in out["usage"]][-1] == "long_context"


# -- the long-context window cap --------------------------------------------------------------


@pytest.mark.parametrize(("window", "granularity"), [(2000, 150), (2400, 25)])
def test_long_context_is_capped_to_the_window(run_graph, scripted, graph_home, report, window, granularity):
    # (2400, 25): some seventy small chunks, whose "Passage <i>:" headers count too
    prompts: list[str] = []
    name, _ = scripted({"long_context": lambda p: prompts.append(p) or "Amelie Kortsen"})
    counter = default_counter()
    assert counter.count(report) > window, "the fixture must not fit the window"
    out = run_graph(KEEPER_Q, model=name, strategy="lc", context_window=window, primary_granularity=granularity)
    assert out["route"] == ["prepare", "organize", "long_context", "respond"]
    assert len(prompts) == 1
    prompt = prompts[0]
    settings = Settings(model=name, home=graph_home, context_window=window, primary_granularity=granularity)
    assert counter.count(prompt) <= window - settings.max_answer_tokens, "no room left for the answer"
    spans = out["citations"]
    assert len(spans) >= 2 and all(s["id"].startswith("L") for s in spans)
    # the top dense chunks (best first until the budget is spent) ...
    store = store_for(settings)  # the same document's own library ranks its chunks the same way
    ranked = Searcher(store, [store.document(spans[0]["doc_id"])]).search(
        KEEPER_Q,
        k=settings.lc_top_chunks,
        granularity=settings.primary_granularity,
        depth=settings.lc_top_chunks,
        mode="dense",
    )
    assert {(s["start"], s["end"]) for s in spans} == {(r.chunk.start, r.chunk.end) for r in ranked[: len(spans)]}
    assert len(spans) < len(ranked)
    # ... in document order, in the trace, the citations and the prompt
    starts = [s["start"] for s in spans]
    assert starts == sorted(starts)
    positions = [prompt.index(s["text"]) for s in spans]
    assert positions == sorted(positions)
    assert any("document exceeds the window" in line for line in out["trace"])
    assert "The lighthouse keeper of Port Verrin is Amelie Kortsen." in prompt


def test_long_context_sends_the_whole_document_when_it_fits(run_graph, scripted, report):
    prompts: list[str] = []
    name, _ = scripted({"long_context": lambda p: prompts.append(p) or "Amelie Kortsen"})
    out = run_graph(KEEPER_Q, model=name, strategy="lc", context_window=None)  # the model's profile: 32768
    assert report in prompts[0]
    assert [(s["id"], s["start"], s["end"]) for s in out["citations"]] == [("L1", 0, len(report))]
    assert any("whole document" in line for line in out["trace"])
    assert out["answer"] == "Amelie Kortsen"


@pytest.mark.parametrize("reply", ["Amelie Kortsen [E1]", "Amelie Kortsen (Passage 1)", "Amelie Kortsen. Sources: E1"])
def test_the_long_context_answer_names_no_passage(run_graph, scripted, reply):
    """Seen with a stub endpoint: the reader's "Pellham Yard [E1]" kept "[E1" in the answer, and its "e1" counted as
    a word the passages hold."""
    name, _ = scripted({"long_context": reply})
    out = run_graph(KEEPER_Q, model=name, strategy="lc", context_window=None)
    assert out["answer"].rstrip(".") == "Amelie Kortsen", out["answer"]


@pytest.mark.parametrize(
    ("reading", "generator_runs", "notes_shown"),
    [("reasoner", False, None), ("passages", True, False), ("both", True, True)],
)
def test_who_answers_a_step_wise_question(run_graph, scripted, reading, generator_runs, notes_shown):
    """stepwise_answer: the reasoner's answer is final, or the generator answers from the hops'
    passages (with or without the reasoner's notes); chosen by measurement (evals/README.md)."""
    prompts: list[str] = []
    answer = cited_answer("Amelie Kortsen")
    reasoner = "### Evidence: The keeper is Amelie Kortsen. ### Next-Query: None ### Answer: Amelie Kortsen"
    replies = {"analyzer": analyzer_reply("multi-bridge"), "reasoner": reasoner}
    name, model = scripted({**replies, "generator": lambda p: prompts.append(p) or answer(p)})
    out = run_graph(KEEPER_Q, model=name, question_budget=0, stepwise_answer=reading)
    assert ("generator" in model.calls) == generator_runs
    assert out["answer"] == "Amelie Kortsen" and out["status"] == "answered"
    if generator_runs:
        (prompt,) = prompts
        assert ("Reasoning steps so far" in prompt) == notes_shown
        assert "The lighthouse keeper of Port Verrin is Amelie Kortsen." in prompt  # the hop's passage


def test_longrags_per_chunk_filter_keeps_the_runs_deadline(scripted):
    """Each filter task goes through `Send` as its own state: the run's deadline must go with it, and
    a judgement whose deadline has passed is not sent (the chunk is kept, the safe default)."""
    import time

    from langgraph.graph import END, START, StateGraph

    from longqa.contracts.plan import Plan
    from longqa.contracts.state import FilterTask
    from longqa.nodes.filter import filter_chunk, judgements

    evidence = [
        {"id": f"E{i}", "doc_id": "d", "source": "d.md", "start": 0, "end": 9, "text": f"Passage {i} about the keeper.",
         "score": 1.0 - i / 10, "query": KEEPER_Q}
        for i in (1, 2)
    ]  # fmt: skip
    deadline = time.time() - 1
    plan = Plan(strategy="longrag", workflow="direct").model_dump()
    state = {"question": KEEPER_Q, "cot": "c", "evidence": evidence, "plan": plan, "deadline_at": deadline}
    tasks = judgements(state)
    assert [t["deadline_at"] for t in tasks] == [deadline, deadline]

    class Judged(FilterTask, total=False):  # the task, and what the filter node writes back
        verdicts: list
        trace: list

    name, model = scripted({"filter": '{"keep": false}'})
    builder = StateGraph(Judged, context_schema=Settings)
    builder.add_node("filter", filter_chunk)
    builder.add_edge(START, "filter")
    builder.add_edge("filter", END)
    one = builder.compile()
    out = one.stream(tasks[0], context=Settings(model=name).model_dump(), stream_mode="updates")
    update = next(iter(out))["filter"]
    assert model.calls == [], "a judgement past the run's deadline is never sent"
    assert update["verdicts"][0]["keep"] is True and "deadline" in update["trace"][0]
