"""A deterministic, offline chat model that answers each longqa prompt kind by its contract.

It is NOT a language model and its answers are NOT quality measurements: it exists so that
tests, the SDK integration test and benchmarks can drive every branch of the graph with no
network. Selected by `model="scripted"`; every output that used it says so.

Contract per prompt kind (recognised by the longest literal run of its template in `prompts/`):
- analyzer: the JSON dict of OkraLong table 8, from simple question cues;
- splitter: one sub-question per entity of "..., A or B?" (else the question itself);
- reasoner: the table-10 format; answers when the context holds a sentence sharing most of the
  question's content words, else asks a next query;
- extractor / cot: the sentences of the context that share the most words with the question;
- filter: {"status": true} when the article shares >= 2 content words with the question;
- joint_filter: the cot's thought, and "cite" lists each passage sharing >= 2 content words with
  the question;
- generator / long context: the best-overlapping sentence, or "unanswerable" when none shares
  >= 2 content words (only where the prompt allows that answer), plus "Sources: E<n>";
- grounding: {"supported": true} when at least half the answer's content words are in the passages;
- calculator: {"expression": "none"} (a test scripts the expression it wants).
`replies` overrides any kind with a fixed string or a function of the prompt text.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field, PrivateAttr

from longqa.prompts import arithmetic, grounding, longrag, okralong, self_route
from longqa.retrieval.bm25 import bm25_tokens

LABEL = "scripted (offline test model, not a real LLM)"


def _marker(template: str) -> str:
    """The longest literal run of a prompt template: every prompt made from it contains it."""
    parts = re.split(r"(?<!\{)\{[a-z_]+\}(?!\})", template)
    return max(parts, key=len).replace("{{", "{").replace("}}", "}").strip()


# prompt kind -> its template, checked in this order (long_context before generator: both say
# "Only give me the answer"); the markers come from the prompts themselves, so they cannot drift
KIND_MARKERS: list[tuple[str, str]] = [
    (kind, _marker(template))
    for kind, template in [
        ("analyzer", okralong.ANALYZER_SYSTEM),
        ("splitter", okralong.SPLITTER_SYSTEM),
        ("reasoner", okralong.REASONER_SYSTEM),
        ("filter", longrag.FILTER),
        ("joint_filter", longrag.JOINT_FILTER),
        ("cot", longrag.COT),
        ("extractor", longrag.EXTRACTOR),
        ("grounding", grounding.SUPPORT),
        ("calculator", arithmetic.EXPRESSION),
        ("long_context", self_route.LONG_CONTEXT),
        ("generator", longrag.GENERATOR),
    ]
]


def prompt_kind(text: str) -> str:
    """Which longqa prompt a text is, by the first template marker it contains (default: generator)."""
    return next((kind for kind, marker in KIND_MARKERS if marker in text), "generator")


def _without_history(context: str) -> str:
    """The generator's context less the conversation so far: an answer comes from what was read now,
    never from an earlier turn's question (which shares the most words with a follow-up)."""
    if not context.startswith("Conversation so far:"):
        return context
    ends = [
        i
        for i in (context.find(h) for h in ("Global information (", "Reasoning steps so far:", "Retrieved passages:"))
        if i > 0
    ]
    return context[min(ends) :] if ends else context


def _words(text: str) -> set[str]:
    return set(bm25_tokens(text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s.strip()) > 2]


def _section(text: str, start: str, end: str | None = None) -> str:
    i = text.rfind(start)
    if i < 0:
        return ""
    tail = text[i + len(start) :]
    j = tail.find(end) if end else -1
    return tail[:j] if j >= 0 else tail


class ScriptedChatModel(BaseChatModel):
    """The offline scripted model (see the module docstring); `replies` overrides a kind's reply, `calls` records
    each call's kind, `latency_s` and `max_in_flight` let tests see concurrency."""

    replies: dict[str, str | Callable[[str], str]] = Field(default_factory=dict)
    latency_s: float = 0.0
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _in_flight: int = PrivateAttr(default=0)
    max_in_flight: int = 0
    calls: list[str] = Field(default_factory=list, description="prompt kind of each call, in order")

    @property
    def _llm_type(self) -> str:
        return "longqa-scripted"

    def model_post_init(self, context: Any) -> None:
        """Give the model a 32,768-token context window profile unless one was set."""
        super().model_post_init(context)
        if self.profile is None:
            self.profile = {"max_input_tokens": 32768}  # stands in for a small local model's window

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        text = "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)
        kind = prompt_kind(text)
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self.calls.append(kind)
        try:
            if self.latency_s:
                time.sleep(self.latency_s)
            override = self.replies.get(kind)
            if override is not None:
                reply = override(text) if callable(override) else override
            else:
                reply = getattr(self, f"_{kind}")(text, messages)
        finally:
            with self._lock:
                self._in_flight -= 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])

    # -- one method per prompt kind ---------------------------------------------------------------
    def _analyzer(self, text: str, messages: list[BaseMessage]) -> str:
        from longqa.analyzer.rules import analyze_rules

        question = _section(text, "### Question:", "### Answer:").strip()
        context = _section(text, "### Context:", "### Question:")
        a = analyze_rules(question, [context])
        return json.dumps({"question-type": a.question_type, "info-type": a.info_pattern, "containing": a.evidence})

    def _splitter(self, text: str, messages: list[BaseMessage]) -> str:
        question = messages[-1].content if isinstance(messages[-1].content, str) else text
        m = re.search(r"^(.*?),\s*(.+?)\s+or\s+(.+?)\?*$", question.strip())
        if not m:
            return question
        stem = re.sub(r"^(which|who|what)\s+(\w+\s+)?", "", m.group(1), flags=re.I).strip()
        return "\n".join(f"{stem}: {entity.strip()}?" for entity in (m.group(2), m.group(3)))

    def _best(self, question: str, context: str) -> tuple[str, int]:
        q = _words(question)
        scored = [(len(q & _words(s)), -i, s) for i, s in enumerate(_sentences(context))]
        if not scored:
            return "", 0
        overlap, _, sentence = max(scored)
        return sentence, overlap

    def _reasoner(self, text: str, messages: list[BaseMessage]) -> str:
        question = _section(text, "### Question:").strip()
        context = _section(text, "### Context:", "### Question:")
        sentence, overlap = self._best(question, context)
        needed = max(2, (len(_words(question)) + 1) // 2)
        if overlap >= needed:
            return f"### Evidence: {sentence} ### Next-Query: None ### Answer: The answer is: {sentence}"
        return f"### Evidence: {sentence or 'None'} ### Next-Query: {question} details ### Answer: None"

    def _extractor(self, text: str, messages: list[BaseMessage]) -> str:
        question = text.rsplit("\n", 1)[-1]
        content = text.rsplit("Based on the above background", 1)[0]  # not the question itself
        q = _words(question)
        ranked = sorted(_sentences(content), key=lambda s: -len(q & _words(s)))
        return " ".join(ranked[:3])

    def _cot(self, text: str, messages: list[BaseMessage]) -> str:
        question = _section(text, "Question:").strip()
        sentence, _ = self._best(question, text.replace(question, ""))
        return f"The question asks: {question} The most relevant statement is: {sentence}"

    def _filter(self, text: str, messages: list[BaseMessage]) -> str:
        article = _section(text, "Given an article:", "\nQuestion:")
        question = _section(text, "\nQuestion:", "\nThought process")
        keep = len(_words(article) & _words(question)) >= 2
        return json.dumps({"status": keep})

    def _joint_filter(self, text: str, messages: list[BaseMessage]) -> str:
        question = _section(text, "Question:", "\nThen use").strip()
        passages = re.findall(r"\[(E\d+)\] (.*?)(?=\n\n\[E\d+\] |\n\nPlease combine)", text, re.DOTALL)
        cite = [label for label, body in passages if len(_words(body) & _words(question)) >= 2]
        thought = self._cot(text.split("\nThen use")[0], messages)
        return json.dumps({"thought": thought, "cite": cite})

    def _answer(self, question: str, context: str, allow_unanswerable: bool) -> str:
        sentence, overlap = self._best(question, context)
        if overlap < 2 and allow_unanswerable:
            return "unanswerable"
        # the whole sentence: two passages may open the same way (the grounding check reads what is cited)
        label = re.findall(r"\[(E\d+)\][^\[]*?" + re.escape(sentence), context, re.DOTALL)
        sources = f"\nSources: {label[-1]}" if label else ""
        return (sentence or "unanswerable") + sources

    def _generator(self, text: str, messages: list[BaseMessage]) -> str:
        question = _section(text, "Question:").split("\n")[0].strip()
        return self._answer(question, _without_history(text.split("Question:")[0]), "unanswerable" in text)

    def _calculator(self, text: str, messages: list[BaseMessage]) -> str:
        return json.dumps({"expression": "none", "sources": []})

    def _grounding(self, text: str, messages: list[BaseMessage]) -> str:
        passages = _section(text, "Passages:", "\nQuestion:")
        answer = _words(_section(text, "\nAnswer:", "\n\nReply with JSON"))
        found = len(answer & _words(passages))
        return json.dumps({"supported": bool(answer) and 2 * found >= len(answer)})

    def _long_context(self, text: str, messages: list[BaseMessage]) -> str:
        question = _section(text, "Question:", " Answer:").strip()
        context = _section(text, "The following are given passages.", "Answer the question based on")
        return self._answer(question, context, True).split("\nSources:")[0]
