"""One LLM call = one usage record (node, tokens in/out, seconds), from the provider's
`usage_metadata`, or estimated with the offline tokenizer and marked so when it gives none."""

from __future__ import annotations

import logging
import time

from langchain_core.messages import AIMessage, BaseMessage

from longqa.retrieval.tokens import default_counter

from .models import ModelSpec, chat_model

log = logging.getLogger(__name__)


class LLMError(RuntimeError):
    """The model could not answer (after the client's retries): the node degrades or the run ends
    with this message in its output."""


def call_llm(spec: ModelSpec, node: str, messages: list[BaseMessage]) -> tuple[str, dict]:
    """Invoke the configured model; return (reply text, usage record)."""
    t0 = time.perf_counter()
    try:
        model = chat_model(spec)  # inside: a missing key or unknown provider fails here
        reply = model.invoke(messages)
    except Exception as e:  # providers raise many types (HTTP, timeout, auth): all end this call
        raise LLMError(
            f"{node}: model call failed ({type(e).__name__}: {str(e)[:300]}; max_retries={spec.max_retries})"
        ) from e
    seconds = time.perf_counter() - t0
    text = reply.content if isinstance(reply.content, str) else _text_of(reply)
    return text, usage_record(node, spec.model or "", messages, reply, text, seconds)


def usage_record(
    node: str, model: str, messages: list[BaseMessage], reply: BaseMessage, text: str, seconds: float
) -> dict:
    usage = getattr(reply, "usage_metadata", None) or {}
    if usage.get("input_tokens") or usage.get("output_tokens"):
        return {
            "node": node,
            "model": model,
            "input_tokens": int(usage.get("input_tokens", 0)),
            "output_tokens": int(usage.get("output_tokens", 0)),
            "seconds": round(seconds, 4),
            "estimated": False,
        }
    counter = default_counter()
    prompt = "\n".join(m.content if isinstance(m.content, str) else str(m.content) for m in messages)
    return {
        "node": node,
        "model": model,
        "input_tokens": counter.count(prompt),
        "output_tokens": counter.count(text),
        "seconds": round(seconds, 4),
        "estimated": True,
    }


def _text_of(reply: AIMessage) -> str:
    parts = reply.content if isinstance(reply.content, list) else [reply.content]
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts)
