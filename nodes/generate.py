"""generate: LongRAG's LLM-augmented generator (table 18) over both perspectives — the global
information I_g (extract) and the chunks the CoT filter kept (I_d) — with Self-Route's option to
answer "unanswerable" when the plan allows a fallback. Answers are concise and cite the passages
used (E1, E2, ...); a reply that restates the question around its answer is cut to the words that
answer (llm/answer_core.py). An answer the step-wise reasoner already gave is taken as it is."""

from __future__ import annotations

import re

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from longqa.contracts.failure import fail
from longqa.contracts.plan import plan_of
from longqa.contracts.settings import Settings, settings_of
from longqa.contracts.state import Evidence, Grounding, Hit, State, shown_by
from longqa.contracts.verdicts import is_unanswerable, kept_evidence
from longqa.llm.answer_core import answer_core, same_answer
from longqa.llm.calls import Reply
from longqa.llm.citations import split_sources
from longqa.llm.grounding import attributed
from longqa.llm.model_node import LLMError, ModelSteps, Prompt, ask, model_node
from longqa.llm.parsing import fixed_text, read_answer
from longqa.llm.passages import as_data, source_name
from longqa.prompts import generation, longrag, self_route

_FIXED = fixed_text(
    longrag.GENERATOR,
    generation.HISTORY_HEADER,
    generation.GLOBAL_INFO_HEADER,
    generation.EVIDENCE_HEADER,
    generation.REASONING_HEADER,
    generation.CITE_INSTRUCTION,
    generation.DATA_NOTE,
    self_route.UNANSWERABLE_CLAUSE,
    generation.REASK_NOTE,
)
_HEADERS = re.compile(generation.ECHO_HEADERS)
REPLY_QUOTED = 200  # characters of an earlier reply quoted back when the generator is asked again


def split_citations(reply: str, evidence: list[Evidence]) -> tuple[str, list[Evidence], bool]:
    """(answer text, cited passages, whether the model named them): the source lists are taken off
    the answer wherever the model wrote them (llm/citations.py). Unknown ids are ignored; when none
    is named, every passage shown is cited."""
    answer, ids = split_sources(reply)
    cited = [e for e in evidence if e["id"] in ids]
    return answer, (cited or evidence), bool(cited)


def build_prompt(
    question: str,
    evidence: list[Evidence],
    global_info: str | None,
    steps: list,
    allow_unanswerable: bool,
    history: list[str] | None = None,
    earlier: tuple[str, str] | None = None,
) -> str:
    """LongRAG's generator prompt over the notes and passages; `earlier`: (reply, why it answered nothing) when
    the generator is asked again."""
    parts = []
    if history:
        parts.append(generation.HISTORY_HEADER.format(history="\n".join(history)))
    if global_info:
        parts.append(generation.GLOBAL_INFO_HEADER.format(global_info=global_info))
    if steps:
        lines = "\n".join(f"- {s['evidence']}" for s in steps if s["evidence"])
        parts.append(generation.REASONING_HEADER.format(steps=lines))
    blocks = "\n\n".join(f"[{e['id']}] ({source_name(e['source'])})\n{as_data(e['text'])}" for e in evidence)
    parts.append(generation.EVIDENCE_HEADER.format(evidence=blocks))
    extra = ""
    if earlier:
        extra += " " + generation.REASK_NOTE.format(reply=as_data(earlier[0][:REPLY_QUOTED]), why=earlier[1])
    extra += (" " + self_route.UNANSWERABLE_CLAUSE if allow_unanswerable else "") + "\n" + generation.CITE_INSTRUCTION
    extra += " " + generation.DATA_NOTE
    return longrag.GENERATOR.format(content="".join(parts), extra=extra, question=question)


def prompt_context(evidence: list[Evidence], global_info: str | None, question: str) -> str:
    """What the generator is shown beyond its instructions: an answer may quote any of it."""
    return "\n".join([question, global_info or "", *(e["text"] for e in evidence)])


@model_node
def generate(state: State, runtime: Runtime[Settings]) -> ModelSteps:
    settings = settings_of(runtime)
    plan = plan_of(state)
    evidence = state.get("evidence") or []
    earlier = to_ask_again(state)
    given = None if earlier else answer_given(state, settings)
    if given:
        return given
    kept, note = kept_evidence(evidence, state.get("verdicts") or []) if plan.filter else (evidence, None)
    trace = [note] if note else []

    steps = [] if settings.stepwise_answer == "passages" else state.get("steps") or []

    def render(passages: list[Evidence]) -> str:
        return build_prompt(
            state["question"],
            passages,
            state.get("global_info"),
            steps,
            plan.allow_unanswerable,
            state.get("history"),
            earlier,
        )

    # what is left of the question budget: the best passages that fit it; an answer may come from the
    # notes alone; one passage larger than what is left (a whole table) is shown cut to its start. Asked again:
    # the chunks retrieval found in the passages, whole (one cut to what is left would give the model less)
    notes = bool(steps or state.get("global_info"))
    items = chunks_of(kept, state.get("hits") or []) if earlier else kept
    prompt = Prompt(
        items, lambda ps: [HumanMessage(render(ps))], answers=True, bare=notes, cut=not earlier, reask=bool(earlier)
    )
    try:
        reply = yield ask(settings, "generate", prompt, max_tokens=settings.max_answer_tokens)
    except LLMError as e:
        return _not_asked(e, earlier, bool(state.get("answer")), kept, trace)
    if earlier:
        trace.append(f"generate: asked again, the earlier reply {earlier[0][:80]!r} ({earlier[1]})")
    trace += fitted(reply)
    kept, shown = reply.kept, shown_by("generate", reply.kept)
    text, problem = read_answer(
        reply.text,
        reply.truncated,
        _FIXED,
        _HEADERS,
        f"max_answer_tokens={settings.max_answer_tokens}",
        quoting=prompt_context(kept, state.get("global_info"), state["question"]),
    )
    if text is None:  # a reply cut at its cap, empty or the prompt repeated: asked again once where the plan says so
        if plan.reask and not earlier:
            return _unusable_reply(reply.text, problem, shown, trace)
        return _failed(f"generate: {problem}", kept, shown, trace)
    answered = _answered(text, kept, shown, trace, state["question"], extracted_from(state), grounded=plan.ground)
    if not earlier:
        return answered
    if same_answer(answered.get("answer") or "", earlier[0]):  # the check's verdict on it stands (nodes/ground.py)
        return {**answered, "reasked": earlier[0], "trace": [*answered["trace"], "generate: the same reply again"]}
    return {**answered, "reasked": earlier[0], "grounding": None}


def chunks_of(passages: list[Evidence], hits: list[Hit]) -> list[Evidence]:
    """The passages as the chunks retrieval found in them (process_context merged neighbours into one passage, which
    can be longer than what a second asking can read), each under its passage's id, so a citation names the
    passage; a passage no chunk lies in (a recovered table) stays whole."""
    pieces: list[Evidence] = []
    seen: set[tuple[str, int, int]] = set()
    for passage in passages:
        inside = [
            h
            for h in hits
            if h["doc_id"] == passage["doc_id"] and passage["start"] <= h["start"] and h["end"] <= passage["end"]
        ]
        if not inside:
            pieces.append(passage)
        for hit in inside:
            if (key := (hit["doc_id"], hit["start"], hit["end"])) not in seen:
                seen.add(key)
                pieces.append(
                    {**passage, "start": hit["start"], "end": hit["end"], "text": hit["text"], "score": hit["score"]}
                )
    return pieces


def to_ask_again(state: State) -> tuple[str, str] | None:
    """(the earlier reply, why it answers nothing) when the ground node found the generator's reply to be no
    answer and the graph asks it again (graph/graph.py `after_ground`); None on the first asking, and once asked
    again. (An option of a choice question the check rejected is not asked again: measured with the 1.5B model,
    evals/README eighth round, the model gave the same option each time, and asking spent what the long-context
    fallback would have read.)"""
    grounding = state.get("grounding")
    if state.get("reasked") is not None or not grounding or grounding["method"] != "non-answer":
        return None
    return grounding["answer"], grounding.get("why") or "it does not answer the question"


def answer_given(state: State, settings: Settings) -> dict | None:
    """The answer the calculator, the date comparison or the step-wise reasoner already gave, where it is final (the
    reasoner's is, unless the generator is to answer from the hops' passages); None otherwise."""
    plan = plan_of(state)
    reasoner_decides = settings.stepwise_answer == "reasoner" or plan.workflow != "stepwise"
    if not (state.get("draft") and (reasoner_decides or state.get("calculation"))):
        return None
    computed = state.get("calculation")
    return {
        "answer": state["draft"],
        "citations": (state.get("citations") if computed else None) or state.get("evidence") or [],
        "trace": [
            f"generate: the computed answer ({computed['expression']})"
            if computed
            else "generate: the step-wise reasoner's answer"
        ],
    }


def fitted(reply: Reply) -> list[str]:
    """The trace of what fitting the prompt to the question budget did: a passage cut, passages left out."""
    trace = []
    if reply.cut is not None:
        trace.append(f"generate: passage {reply.kept[0]['id']} cut to {reply.cut} tokens to fit the question budget")
    if reply.dropped:
        trace.append(f"generate: {reply.dropped} passage(s) left out to fit the question budget")
    return trace


def extracted_from(state: State) -> list[Evidence]:
    """The source paragraphs LongRAG's extractor read to write the global information the generator
    was shown (none when it wrote none): an answer taken from I_g is theirs to support."""
    if not state.get("global_info"):
        return []
    return [{k: v for k, v in s.items() if k != "reader"} for s in state.get("shown") or [] if s["reader"] == "extract"]


def _answered(
    text: str,
    kept: list[Evidence],
    shown: list,
    trace: list[str],
    question: str,
    paragraphs: list[Evidence] | None = None,
    grounded: bool = False,
) -> dict:
    """The reply read as an answer and the passages it cites (corrected where the reply named a passage
    that does not hold its words and another it read does, or where only a source paragraph the extractor
    read holds them), or the run ended with the reason. A reply of passage labels alone ("Sources: E1",
    "[E2]") is the answer where the plan grounds it: the ground node declines it as no answer."""
    answer, cited, named = split_citations(text, kept)
    if not answer and named and grounded:  # the labels as its answer, so that the ground node declines it
        answer = "Sources: " + ", ".join(e["id"] for e in cited)
        trace.append(f"generate: the reply names sources but gives no answer ({text[:80]!r})")
    if not answer:
        return _failed(f"generate: the reply names sources but gives no answer ({text[:80]!r})", kept, shown, trace)
    added: list[str] = []
    if is_unanswerable(answer):
        answer, cited = "unanswerable", []
    else:
        if (core := answer_core(answer, question)) != answer:  # measured: restated questions hid the answer
            trace.append(
                f"generate: the answer is {core!r}; the rest of the reply restates the question ({answer[:160]!r})"
            )
            answer = core
        if named:
            cited, added = attributed(answer, cited, kept, question)
    if paragraphs and cited:  # measured: MuSiQue answers read from I_g were declined as unsupported by the chunks
        cited, from_paragraphs = attributed(answer, cited, list(paragraphs), question)
        added += from_paragraphs
    trace.append(
        f"generate: {len(answer.split())} words from {len(kept)} passage(s)"
        + ("" if named or not cited else "; no sources named, citing all passages shown")
        + (
            f"; the answer's words are in {', '.join(added)}, which the reply did not name: cited first"
            if added
            else ""
        )
    )
    return {"answer": answer, "citations": cited, "shown": shown, "trace": trace}


def _not_asked(e: LLMError, earlier: tuple[str, str] | None, answered: bool, kept: list, trace: list[str]) -> dict:
    """The generator's call failed: asked again, the earlier reply stands (the ground node declines it again), or,
    where the first reply was unusable, the run ends with its reason and why it was not asked again (it said "the
    model's reply was empty"); asked the first time, the run ends with the failure."""
    if earlier and not answered:
        return _failed(f"generate: {earlier[1]}; not asked again ({e})", kept, shown_by("generate", e.kept), trace)
    if earlier:
        return {"reasked": earlier[0], "trace": [*trace, f"generate: not asked again ({e})"]}
    return _failed(str(e), e.kept or kept, shown_by("generate", e.kept), trace)


def _unusable_reply(text: str | None, problem: str, shown: list, trace: list[str]) -> dict:
    """No answer yet: the unusable reply as a non-answer verdict, which routes the run back to the generator once
    (graph/graph.py `after_generate`, `to_ask_again`)."""
    quoted = (text or "")[:REPLY_QUOTED]
    unusable = Grounding(answer=quoted, verdict="unsupported", share=0.0, method="non-answer", missing=[], why=problem)
    return {
        "answer": None,
        "grounding": unusable,
        "shown": shown,
        "trace": [*trace, f"generate: {problem}; asking again"],
    }


def _failed(error: str, kept: list[Evidence], shown: list, trace: list[str]) -> dict:
    """No answer: the run ends with the reason, and the calls it made stay on the ledger."""
    return fail("generate", error, answer=None, citations=kept, shown=shown, trace=[*trace, error])
