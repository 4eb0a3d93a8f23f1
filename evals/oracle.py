"""The decomposition oracle: what the split and step-wise workflows can retrieve when their queries
are right. An upper bound of retrieval, never a quality number.

A stand-in chat model (not a language model) plays the operators that write queries, from the gold
annotations: the analyzer names the workflow (MuSiQue: multi-bridge, step-wise; a HotpotQA
comparison: multi-source, split), the splitter returns one sub-question per compared entity, and
the step-wise reasoner returns MuSiQue's decomposition steps as its next queries (answers of
earlier hops substituted), one per hop, then stops. Every other operator gets a fixed reply that
keeps all evidence (the filter keeps every chunk) and answers nothing: the harness scores only the
passages the generator is shown (`shown`), with the retrieval-only scorer.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from longqa.contracts.settings import Settings
from longqa.llm.models import register_model
from longqa.llm.scripted import prompt_kind

from .longbench import EvalItem

ORACLE_TITLE = "decomposition oracle (gold queries) — an upper bound of retrieval, not answer quality"
NO_ANSWER = "(decomposition oracle: no answer)"
WORKFLOW_TYPE = {"stepwise": "multi-bridge", "split": "multi-source"}
MODEL_PREFIX = "oracle:"  # each item's stand-in is registered as oracle:<item uid>


def is_oracle(settings: Settings) -> bool:
    """Whether the settings' model is the decomposition oracle."""
    return (settings.model or "").startswith(MODEL_PREFIX)


def oracle_of(item: EvalItem) -> dict[str, Any] | None:
    """{"workflow", "queries"} for an item the oracle can run (see `evals.converters`), else None."""
    oracle = item.extra.get("oracle")
    if isinstance(oracle, dict) and oracle.get("workflow") in WORKFLOW_TYPE and oracle.get("queries"):
        return oracle
    return None


class OracleChatModel(BaseChatModel):
    """Replies from one item's gold decomposition (see the module docstring)."""

    workflow: str
    queries: list[str]

    @property
    def _llm_type(self) -> str:
        return "longqa-decomposition-oracle"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        text = "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.reply(prompt_kind(text), text)))])

    def reply(self, kind: str, text: str) -> str:
        """The oracle's reply to one kind of prompt: the workflow's question type, the gold split or next step query,
        a kept chunk for the filter, and no answer for every other operator."""
        if kind == "analyzer":
            return json.dumps({"question-type": WORKFLOW_TYPE[self.workflow], "info-type": "same", "containing": "no"})
        if kind == "splitter":
            return "\n".join(self.queries)
        if kind == "reasoner":
            hop = text.count("(hop ")  # the reasoner's earlier steps, each labelled "(hop n)"
            next_query = self.queries[hop] if hop < len(self.queries) else "None"
            return f"### Evidence: gold step {hop + 1} ### Next-Query: {next_query} ### Answer: None"
        if kind == "filter":
            return json.dumps({"status": True})
        return NO_ANSWER  # cot, extractor, generator, long context


def oracle_settings(item: EvalItem, uid: str, settings: Settings) -> Settings | None:
    """The run settings of `item` under the oracle (its own registered model), or None when the item
    has no gold decomposition."""
    oracle = oracle_of(item)
    if oracle is None:
        return None
    name = f"{MODEL_PREFIX}{uid}"
    model = OracleChatModel(workflow=oracle["workflow"], queries=list(oracle["queries"]))
    register_model(name, lambda: model)
    # the first retrieval is the question itself; then one hop per gold step, and one to stop
    hops = max(settings.max_hops, len(oracle["queries"]) + 1)
    # retrieval only: nothing it "answers" is an answer to ground; a multi-bridge item walks its gold hops
    update = {"model": name, "analyzer": "llm", "max_hops": hops, "grounding": "off", "multi_bridge": "stepwise"}
    return settings.model_copy(update=update)
