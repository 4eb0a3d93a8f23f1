"""What a real model does that the scripted one never did, played by the OpenAI-compatible stub over
the real wire (`langchain_openai` -> HTTP -> tests/openai_stub.py), each as seen with a small model
behind llama.cpp: no output cap, failed calls off the ledger, a timeout retried blindly, a token count
that is not the server's, an echoed demonstration taken as the answer, cut or echoed replies taken
as answers, free-form replies where a dictionary was asked for. The replies are the stub's; these
tests check what longqa does with them, never answer quality."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.graph.graph import graph
from longqa.llm.calls import LLMError, call_llm
from longqa.prompts import okralong

from .openai_stub import OpenAIStub, prompt_text, scripted_reply_fn
from .test_openai_wire import LIGHTHOUSE, ORCHARD, QUESTION

pytestmark = pytest.mark.integration

MODEL = "openai:stub-model"
LLM_NODES = ("analyze", "split_question", "reason_step", "extract", "cot", "filter", "generate", "long_context")
# a distinct cap per node, so each request's cap tells which node sent it
CAPS = {
    "analyze": ("analyze_max_tokens", 101),
    "split_question": ("split_max_tokens", 102),
    "reason_step": ("reason_max_tokens", 103),
    "cot": ("cot_max_tokens", 104),
    "filter": ("filter_max_tokens", 105),
    "extract": ("extract_max_tokens", 106),
    "generate": ("max_answer_tokens", 107),
    "long_context": ("long_context_max_tokens", 108),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("faults-home")


def run(stub: OpenAIStub, home, question: str = QUESTION, texts=(LIGHTHOUSE, ORCHARD), **context) -> dict:
    # multi-bridge questions walk OkraLong's step-wise calls here (their caps, echoes and notes are under test)
    settings = {"model": MODEL, "base_url": stub.base_url, "home": str(home), "context_window": 8000}
    settings |= {"multi_bridge": "stepwise", **context}
    return graph.invoke({"question": question, "texts": list(texts)}, context=settings)


def kind_of(messages: list[dict]) -> str:
    """Which longqa prompt a request carries (by its fixed text)."""
    text = prompt_text(messages)
    for kind, marker in (
        ("analyze", okralong.ANALYZER_SYSTEM[:60]),
        ("reason_step", okralong.REASONER_SYSTEM[:60]),
        ("split_question", okralong.SPLITTER_SYSTEM[:60]),
        ("filter", "decide whether you need to cite the article"),
        ("long_context", "The following are given passages."),
        ("generate", "Based on the above information"),
    ):
        if marker in text:
            return kind
    return "other"


def replying(**by_kind: str):
    """A reply_fn: the given text for those prompt kinds, the scripted model's reply for the rest."""
    scripted = scripted_reply_fn()
    return lambda messages: by_kind.get(kind_of(messages)) or scripted(messages)


# -- 1. a cap on every call, per node ---------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy,analyzer", [("adaptive-precise", "llm"), ("longrag", "local"), ("lc", "local"), ("self-route", "local")]
)
def test_every_call_carries_its_nodes_cap(home, strategy, analyzer):
    caps = {name: value for name, value in CAPS.values()}
    with OpenAIStub() as stub:
        out = run(stub, home, strategy=strategy, analyzer=analyzer, **caps)
        bodies = stub.requests
    assert out["status"] in ("answered", "unanswerable"), out.get("error")
    sent = Counter(b.get("max_completion_tokens") for b in bodies)
    expected = Counter(CAPS[r["node"]][1] for r in out["usage"])
    assert None not in sent and sent == expected and len(bodies) == len(out["usage"])


def test_split_and_stepwise_calls_carry_their_caps(home):
    """The split and step-wise workflows (the analyzer is told the question is multi-source, then multi-bridge)."""
    caps = {name: value for name, value in CAPS.values()}
    for qtype, node in (("multi-source", "split_question"), ("multi-bridge", "reason_step")):
        analysis = f'{{"question-type": "{qtype}", "info-type": "same", "containing": "yes"}}'
        with OpenAIStub(reply_fn=replying(analyze=analysis)) as stub:
            out = run(stub, home, strategy="adaptive", analyzer="llm", **caps)
            bodies = stub.requests
        assert node in [r["node"] for r in out["usage"]], out["route"]
        assert Counter(b["max_completion_tokens"] for b in bodies) == Counter(CAPS[r["node"]][1] for r in out["usage"])


def test_a_model_that_never_stops_is_cut_at_the_cap_and_not_taken_as_an_answer(home):
    endless = " ".join(["and so on"] * 2000)  # what the base model wrote for `rag` without a cap
    with OpenAIStub(reply_fn=replying(generate=endless)) as stub:
        out = run(stub, home, strategy="rag", max_answer_tokens=40)
        (body,) = stub.requests
    assert body["max_completion_tokens"] == 40
    assert out["status"] == "error" and out["answer"] is None
    assert "cut at its cap (max_answer_tokens=40, finish_reason=length)" in out["error"]
    (record,) = out["usage"]
    assert record["outcome"] == "truncated" and record["output_tokens"] == 40 and record["estimated"] is False


def _cut_then(answer: str):
    """A reply_fn: the generator never stops the first time; told its reply was no answer, it gives `answer`."""
    scripted = scripted_reply_fn()

    def reply(messages: list[dict]) -> str:
        if kind_of(messages) != "generate":
            return scripted(messages)
        return answer if "is not an answer" in prompt_text(messages) else " ".join(["and so on"] * 2000)

    return reply


def test_the_default_asks_again_once_after_a_reply_cut_at_its_cap(home):
    """Seen with the 0.5B model on 3 papers and MuSiQue items: a runaway reply ended the default's run in an error."""
    with OpenAIStub(reply_fn=_cut_then("In 1904.\nSources: E1")) as stub:
        out = run(stub, home, strategy="adaptive-precise", max_answer_tokens=40)
        generate_prompts = [prompt_text(b["messages"]) for b in stub.requests if kind_of(b["messages"]) == "generate"]
    assert out["status"] == "answered" and out["answer"] == "In 1904.", out.get("error")
    assert out["route"].count("generate") == 2 and len(generate_prompts) == 2
    assert "is not an answer: the reply was cut at its cap (max_answer_tokens=40" in generate_prompts[1]
    assert out["reasked"].startswith("and so on and so on")
    truncated = [r for r in out["usage"] if r["node"] == "generate" and r["outcome"] == "truncated"]
    assert len(truncated) == 1 and truncated[0]["output_tokens"] == 40  # the first call stays on the ledger


def test_a_second_reply_cut_at_its_cap_ends_the_run_as_before(home):
    with OpenAIStub(reply_fn=replying(generate=" ".join(["and so on"] * 2000))) as stub:
        out = run(stub, home, strategy="adaptive-precise", max_answer_tokens=40)
    assert out["status"] == "error" and out["answer"] is None
    assert "cut at its cap (max_answer_tokens=40, finish_reason=length)" in out["error"]
    assert out["route"].count("generate") == 2  # asked again once, not in a loop
    with OpenAIStub(reply_fn=replying(generate=" ".join(["and so on"] * 2000))) as stub:
        out = run(stub, home, strategy="adaptive-precise", max_answer_tokens=40, reask=False)
    assert out["status"] == "error" and out["route"].count("generate") == 1


def test_a_reply_cut_at_its_cap_that_cannot_be_asked_again_says_both(home):
    """Seen: where the question budget could not pay for the second asking, the run ended with "no answer was
    produced (the model's reply was empty)", which was not what happened."""
    with OpenAIStub(reply_fn=replying(generate=" ".join(["and so on"] * 2000))) as stub:
        out = run(stub, home, strategy="adaptive-precise", max_answer_tokens=40, question_budget=600)
    assert out["status"] == "error" and "reply was empty" not in out["error"]
    assert "cut at its cap (max_answer_tokens=40, finish_reason=length)" in out["error"]
    assert "not asked again (generate: the question budget leaves" in out["error"]


# -- 2 and 3. failed and timed-out calls stay on the ledger; a timeout is not retried ----------------


def test_a_timed_out_call_is_recorded_and_not_retried(home):
    with OpenAIStub(delay_s=5.0) as stub:
        run(stub, home, strategy="rag", model=None)  # index outside the timed part
        t0 = time.perf_counter()
        out = run(stub, home, strategy="rag", timeout_s=0.5, max_retries=2, max_answer_tokens=77)
        elapsed = time.perf_counter() - t0
        n_requests = len(stub.requests)
    assert n_requests == 1, "a timeout was retried"
    assert elapsed < 4
    assert out["status"] == "error" and "Timeout" in out["error"] and "a timeout is not retried" in out["error"]
    (record,) = out["usage"]
    # charged its prompt (our count) and its cap (the most the server may have generated), marked estimated
    assert record["outcome"] == "timeout" and record["estimated"] is True
    assert record["output_tokens"] == 77 and record["input_tokens"] > 0 and record["seconds"] >= 0.4
    assert out["totals"]["calls"] == 1 and out["totals"]["estimated"] is True


def test_the_timeout_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("LONGQA_TIMEOUT_S", "7.5")
    assert Settings().timeout_s == 7.5
    assert Settings(timeout_s=3).timeout_s == 3  # a run's context wins


def test_ask_takes_a_timeout(tmp_path):
    doc = tmp_path / "lighthouse.md"
    doc.write_text(LIGHTHOUSE)
    with OpenAIStub(delay_s=5.0) as stub:
        cmd = [sys.executable, "-m", "longqa.cli", "--home", str(tmp_path / "home"), "ask", str(doc), QUESTION]
        cmd += ["--model", MODEL, "--base-url", stub.base_url, "--strategy", "rag", "--timeout", "0.5", "-q"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        n_requests = len(stub.requests)
    assert done.returncode == 1, done.stderr
    assert "Timeout" in done.stderr and "Traceback" not in done.stderr + done.stdout  # the error on stderr
    assert n_requests == 1


def test_ask_refuses_an_unknown_setting_by_name(tmp_path):
    doc = tmp_path / "lighthouse.md"
    doc.write_text(LIGHTHOUSE)
    cmd = [sys.executable, "-m", "longqa.cli", "ask", str(doc), QUESTION, "--set", "timeout=5"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown setting 'timeout'; did you mean 'timeout_s'?" in done.stderr and "Traceback" not in done.stderr


# -- 4. the long-context budget against the server's own count ----------------------------------------


def generous(text: str) -> int:
    """A tokenizer that counts 60% more than whitespace words (our word pieces count fewer)."""
    return int(len(text.split()) * 1.6) + 1


def long_texts() -> list[str]:
    return [LIGHTHOUSE * 6, ORCHARD * 6]


def test_the_long_context_selection_fits_the_servers_count_when_it_can_count(home):
    with OpenAIStub(count_fn=generous, context_size=1200, llama_routes=True) as stub:
        out = run(stub, home, texts=long_texts(), strategy="lc", context_window=None, long_context_max_tokens=100)
        bodies, timings = stub.requests, stub.timings
    # the window came from the server (/props), and the prompt was fitted to its /tokenize count
    assert [t["status"] for t in timings] == [200], out.get("error")
    assert generous(prompt_text(bodies[0]["messages"])) + 100 <= 1200
    assert out["status"] in ("answered", "unanswerable")
    assert any("the server counts" in line for line in out["trace"])


def test_a_context_length_error_is_retried_once_with_a_smaller_selection(home):
    with OpenAIStub(count_fn=generous, context_size=1200) as stub:  # no /tokenize: it only says no
        out = run(stub, home, texts=long_texts(), strategy="lc", context_window=1200, long_context_max_tokens=100)
        bodies, timings = stub.requests, stub.timings
    assert [t["status"] for t in timings] == [400, 200], out.get("error")
    assert (
        generous(prompt_text(bodies[1]["messages"])) + 100 <= 1200 < generous(prompt_text(bodies[0]["messages"])) + 100
    )
    refused, answered = out["usage"]
    # the refused attempt is charged what the server counted (its number, so not estimated)
    assert refused["outcome"] == "context_length" and refused["estimated"] is False
    assert refused["input_tokens"] == generous(prompt_text(bodies[0]["messages"])) + 100
    assert answered["outcome"] == "ok" and out["status"] in ("answered", "unanswerable")


def test_a_second_context_length_error_ends_the_run_with_it(home):
    with OpenAIStub(context_size=50) as stub:  # nothing fits
        out = run(stub, home, texts=long_texts(), strategy="lc", context_window=1200, long_context_max_tokens=20)
        n_requests = len(stub.requests)
    assert n_requests == 2
    assert out["status"] == "error" and "exceeds the available context size" in out["error"]
    assert [r["outcome"] for r in out["usage"]] == ["context_length", "context_length"]


# -- 5. an echoed demonstration is not the reasoner's answer ------------------------------------------

ECHOED_STEP = (
    "### Answer: None serupa dengan yang ### Context: 100 Rifles is directed by Tom Gries and starring "
    "Jim Brown and Raquel Welch. ### Question: 100 Rifles is a western film, starring an actress of what nationality?"
)


@pytest.mark.parametrize(
    "reply",
    [
        ECHOED_STEP,
        "### Evidence: The main actress in 100 Rifles is Raquel Welch. ### Next-Query: What is the nationality "
        "of Raquel Welch? ### Answer: The answer is: American",
    ],
)
def test_an_echoed_demonstration_is_not_the_answer(home, reply):
    analysis = '{"question-type": "multi-bridge", "info-type": "same", "containing": "yes"}'
    with OpenAIStub(reply_fn=replying(analyze=analysis, reason_step=reply)) as stub:
        out = run(stub, home, strategy="adaptive", analyzer="llm")
        kinds = [kind_of(b["messages"]) for b in stub.requests]
    assert kinds.count("reason_step") == 1  # the echo ended the loop: no demo query was searched
    assert "reason_step: hop 1: reply repeats the prompt's demonstration; stopping the loop" in out["trace"]
    assert "generate" in kinds, "the echo was taken as the answer and generate was skipped"
    generate_prompt = prompt_text(stub.requests[kinds.index("generate")]["messages"])
    assert "Raquel" not in generate_prompt  # the demonstration's "evidence" is not passed on as a step
    assert "Rifles" not in (out["answer"] or "") and "American" not in (out["answer"] or "")


def test_a_step_quoting_the_document_is_not_an_echo(home):
    """The same words are fine when the document says them."""
    rifles = "100 Rifles is directed by Tom Gries and starring Jim Brown and Raquel Welch. Raquel Welch is American."
    reply = (
        "### Evidence: 100 Rifles is directed by Tom Gries and starring Jim Brown. ### Answer: The answer is: Tom Gries"
    )
    analysis = '{"question-type": "multi-bridge", "info-type": "same", "containing": "yes"}'
    with OpenAIStub(reply_fn=replying(analyze=analysis, reason_step=reply)) as stub:
        out = run(
            stub,
            home,
            question="Who directed 100 Rifles?",
            texts=[rifles],
            strategy="adaptive",
            analyzer="llm",
            stepwise_answer="reasoner",
        )
    assert out["status"] == "answered" and out["answer"] == "Tom Gries"


# -- 6. cut and echoed replies are recorded, not answers ----------------------------------------------


ECHOES = {  # what a base model wrote: the prompt's own instructions or sections, not an answer
    "generate": [
        "Based on the above information, Only give me the answer and do not output any other words.",
        "Retrieved passages:\n[E1] (doc.md)\nThe Brannock lighthouse stands on a granite reef",
    ],
    "long_context": [
        "Answer the question based on the given passages. Only give me the answer and do not output any other words.",
        "Passage 1:\nThe Brannock lighthouse stands on a granite reef two miles off the northern cape.",
    ],
}


@pytest.mark.parametrize(
    "strategy,kind,reply",
    [
        *(("rag", "generate", r) for r in [*ECHOES["generate"], ""]),
        *(("lc", "long_context", r) for r in [*ECHOES["long_context"], ""]),
    ],
)
def test_an_echoed_or_empty_reply_is_not_an_answer(home, strategy, kind, reply):
    with OpenAIStub(reply_fn=replying(**{kind: reply or " "})) as stub:
        out = run(stub, home, strategy=strategy)
    assert out["status"] == "error" and out["answer"] is None
    assert re.search(r"repeats the prompt|reply was empty", out["error"]), out["error"]
    assert out["messages"][-1].content.startswith("Error: ") and "None" not in out["messages"][-1].content[:12]
    assert len(out["usage"]) == 1  # the call is on the ledger


def test_an_answer_followed_by_a_new_question_keeps_the_answer(home):
    reply = "In 1904.\nSources: E1\n\nQuestion: When was the light automated?\nAnswer: 1987"
    with OpenAIStub(reply_fn=replying(generate=reply)) as stub:
        out = run(stub, home, strategy="rag")
    assert out["status"] == "answered" and out["answer"] == "In 1904."


# -- 7. constrained output for the analyzer's dictionary and the filter's verdict --------------------


def test_the_analyzer_and_the_filter_ask_for_json_schema_output(home):
    with OpenAIStub() as stub:
        out = run(stub, home, strategy="longrag", analyzer="llm")
        bodies = stub.requests
    formats = {kind_of(b["messages"]): b.get("response_format") for b in bodies}
    verdict = formats["filter"]["json_schema"]["schema"]
    assert verdict["properties"]["status"] == {"type": "boolean"}
    assert all(kind_of(b["messages"]) == "filter" or "response_format" not in b for b in bodies)
    assert out["status"] in ("answered", "unanswerable")
    with OpenAIStub() as stub:
        run(stub, home, strategy="adaptive", analyzer="llm")
        analysis = next(b for b in stub.requests if kind_of(b["messages"]) == "analyze")["response_format"]
    assert analysis["type"] == "json_schema"
    assert set(analysis["json_schema"]["schema"]["properties"]) == {"question-type", "info-type", "containing"}


def test_a_server_without_json_schema_is_asked_again_without_it():
    with OpenAIStub(reply_fn=lambda m: '{"status": false}', schema_support=False) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=0)
        schema = {"type": "object", "properties": {"status": {"type": "boolean"}}}
        first = call_llm(settings, "filter", [HumanMessage("keep?")], max_tokens=8, schema=schema)
        second = call_llm(settings, "filter", [HumanMessage("keep?")], max_tokens=8, schema=schema)
        statuses = [t["status"] for t in stub.timings]
    assert first.text == second.text == '{"status": false}'
    assert statuses == [400, 200, 200]  # refused once, then remembered for this endpoint


def test_free_form_filter_and_analyzer_replies_take_recorded_safe_defaults(home):
    with OpenAIStub(
        reply_fn=replying(filter="Well, it depends on the article.", analyze="I think it is a question.")
    ) as stub:
        out = run(stub, home, strategy="adaptive", analyzer="llm")
        out_filter = run(stub, home, strategy="longrag", analyzer="local")
    assert out["analysis"]["backend"] == "llm" and "safe default" in out["analysis"]["note"]
    judged = [t for t in out_filter["trace"] if t.startswith("filter ")]
    assert judged and all("unparseable verdict" in t and t.endswith("kept (safe default)") for t in judged)


def test_failed_calls_keep_their_usage_in_every_degrading_node(home):
    """Nodes that degrade on a failed call (analyzer, CoT, filter, extractor) still record it."""
    with OpenAIStub(fail_first=10**9, fail_status=503, retry_after_ms=1) as stub:
        out = run(stub, home, strategy="longrag", max_retries=0)
        n_requests = len(stub.requests)
        adaptive = run(stub, home, strategy="adaptive", analyzer="llm", max_retries=0)
    assert out["status"] == adaptive["status"] == "error"
    assert len(out["usage"]) == n_requests == out["totals"]["calls"] == 3
    assert sorted(r["node"] for r in out["usage"]) == ["cot", "extract", "generate"]  # extract and cot run in parallel
    assert adaptive["usage"][0]["node"] == "analyze" and "LLM analyzer failed" in adaptive["analysis"]["note"]
    assert all(r["outcome"] == "error" for r in out["usage"] + adaptive["usage"])


@pytest.mark.parametrize("bad", [{"prompt_tokens": -50}, {"completion_tokens": 4e12}, {"prompt_tokens": 1.5}])
def test_nonsense_usage_from_the_server_is_replaced_by_our_count(bad):
    with OpenAIStub(reply_fn=lambda m: "fine words here", usage_override=bad) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=0)
        reply = call_llm(settings, "generate", [HumanMessage("hello there")], max_tokens=8)
    (record,) = reply.usage
    assert record["estimated"] is True and record["input_tokens"] >= 0 and 0 < record["output_tokens"] < 100


def test_llm_error_carries_the_attempts():
    with OpenAIStub(fail_first=10**9, retry_after_ms=1) as stub:
        settings = Settings(model=MODEL, base_url=stub.base_url, max_retries=2)
        with pytest.raises(LLMError) as caught:
            call_llm(settings, "generate", [HumanMessage("hello")], max_tokens=8)
    assert len(caught.value.usage) == 3 and caught.value.kind == "error"
    assert "3 attempts, max_retries=2" in str(caught.value)
