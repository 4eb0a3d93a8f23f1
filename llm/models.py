"""Resolve a chat model from settings: any `init_chat_model` string, an OpenAI-compatible base URL,
or a registered offline model (`scripted`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import Protocol

import httpx
from langchain_core.language_models import BaseChatModel

from .reply_bounds import bounded_async_client, bounded_client

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 32768  # used only when neither an override nor the model's profile says


class ModelSpec(Protocol):
    """The settings a chat model is built from (Settings, or a run context that has them)."""

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
    """The chat model the spec names (a registered offline model, an OpenAI-compatible base URL, or an
    init_chat_model string), one per distinct spec; ValueError without a model."""
    return _chat_model(spec.model, spec.base_url, spec.api_key_env, spec.temperature, spec.timeout_s)


# the models for awaiting, per event loop: dropped with their loop
_LOOP_MODELS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, BaseChatModel]] = (
    weakref.WeakKeyDictionary()
)
_LOOP_MODELS_LOCK = threading.Lock()


def chat_model_for_loop(spec: ModelSpec, loop: asyncio.AbstractEventLoop) -> BaseChatModel:
    """The model to await on `loop`. An async HTTP connection belongs to the loop that opened it,
    and langchain-openai shares one async client per endpoint across every loop of the process
    (langchain-ai/langchain#35783), so a second `asyncio.run` would reuse the first one's dead
    connections. Each loop gets its own model and client. Call it off the loop: a client loads its
    certificates from disk."""
    key = (spec.model, spec.base_url, spec.api_key_env, spec.temperature, spec.timeout_s)
    with _LOOP_MODELS_LOCK:
        model = _LOOP_MODELS.setdefault(loop, {}).get(key)
    if model is None:
        if spec.model in _REGISTRY:
            model = chat_model(spec)  # in-process models hold no connection
        else:
            model = _build_model(*key, http_async_client=bounded_async_client(spec.timeout_s))
        with _LOOP_MODELS_LOCK:
            model = _LOOP_MODELS.setdefault(loop, {}).setdefault(key, model)
    return model


@functools.cache
def _chat_model(
    model: str | None, base_url: str | None, api_key_env: str, temperature: float, timeout_s: float
) -> BaseChatModel:
    return _build_model(model, base_url, api_key_env, temperature, timeout_s)


def _build_model(
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    temperature: float,
    timeout_s: float,
    http_async_client: httpx.AsyncClient | None = None,
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
        # clients that read no reply's body past what its max_tokens allows (llm/reply_bounds.py)
        kwargs["http_client"] = bounded_client(timeout_s)
        kwargs["http_async_client"] = http_async_client or bounded_async_client(timeout_s)
    from langchain.chat_models import init_chat_model  # here: an evidence-only question never loads it (~50 ms)

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
