"""Resolve a chat model from settings: any `init_chat_model` string, an OpenAI-compatible base URL,
or a registered offline model (`scripted`)."""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Protocol

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 32768  # used only when neither an override nor the model's profile says


class ModelSpec(Protocol):
    model: str | None
    base_url: str | None
    api_key_env: str
    temperature: float
    timeout_s: float
    max_retries: int
    context_window: int | None


_REGISTRY: dict[str, Callable[[], BaseChatModel]] = {}


def register_model(name: str, factory: Callable[[], BaseChatModel]) -> None:
    """Make `factory()` the model for settings.model == name (tests, offline demos)."""
    _REGISTRY[name] = factory
    _chat_model.cache_clear()


def _scripted() -> BaseChatModel:
    from .scripted import ScriptedChatModel

    return ScriptedChatModel()


_REGISTRY["scripted"] = _scripted


def chat_model(spec: ModelSpec) -> BaseChatModel:
    return _chat_model(spec.model, spec.base_url, spec.api_key_env, spec.temperature, spec.timeout_s)


@functools.cache
def _chat_model(
    model: str | None, base_url: str | None, api_key_env: str, temperature: float, timeout_s: float
) -> BaseChatModel:
    if not model:
        raise ValueError("no chat model configured")
    if model in _REGISTRY:
        return _REGISTRY[model]()
    # retries are call_llm's (it does not retry a timeout); the client's own would
    kwargs: dict[str, object] = {"temperature": temperature, "timeout": timeout_s, "max_retries": 0}
    provider = None if ":" in model else "openai"
    if base_url:
        kwargs["base_url"] = base_url
        if provider is None and model.startswith("openai:"):
            model = model.split(":", 1)[1]  # the endpoint is sent the bare name ("openai:x" -> "x")
        provider = provider or "openai"
    if provider == "openai" or model.startswith("openai:"):
        # local OpenAI-compatible servers accept any key; the client library insists on one
        kwargs["api_key"] = os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        kwargs["stream_usage"] = True
    return init_chat_model(model, model_provider=provider, **kwargs)


def speaks_openai(spec: ModelSpec) -> bool:
    """Whether requests go over OpenAI's chat-completions API (OpenAI itself or a compatible URL)."""
    model = spec.model or ""
    if not model or model in _REGISTRY:
        return False
    return bool(spec.base_url) or ":" not in model or model.startswith("openai:")


def context_window(spec: ModelSpec) -> int:
    """The override, else what the server says (llama.cpp's /props), else the model profile's max
    input tokens, else DEFAULT_CONTEXT_WINDOW."""
    if spec.context_window:
        return spec.context_window
    if not spec.model:  # evidence only: nothing to look up, and no model to mislead
        return DEFAULT_CONTEXT_WINDOW
    if spec.base_url and speaks_openai(spec):
        from .endpoint import context_size

        served = context_size(spec.base_url)
        if served:
            return served
    try:
        profile = getattr(chat_model(spec), "profile", None) or {}
    except ValueError:
        profile = {}
    window = profile.get("max_input_tokens")
    if window:
        return int(window)
    log.warning(
        "context window of %s unknown; assuming %d tokens (set LONGQA_CONTEXT_WINDOW)",
        spec.model,
        DEFAULT_CONTEXT_WINDOW,
    )
    return DEFAULT_CONTEXT_WINDOW
