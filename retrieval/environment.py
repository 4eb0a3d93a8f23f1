"""The engines' process-wide choices, read from the environment in this one module: where indexes
and exports live by default (LONGQA_HOME, LONGQA_ONNX_DIR, XDG_CACHE_HOME), which tokenizer counts
(LONGQA_TOKENIZER) and which embedder model and backend embed (LONGQA_EMBEDDER_PATH,
LONGQA_EMBEDDER_BACKEND). The engines sit below `longqa.contracts` (ARCHITECTURE.md's layers) and load
these once per process, so they read them here; the deployment part of the run settings
(`longqa.contracts.deployment`) shows the same values through these functions, and every other
setting is read by `longqa.contracts` alone (tests/test_settings_parts.py checks)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TOKENIZERS = ("wordpiece", "tiktoken")
BACKENDS = ("onnx", "torch")
# texts per embedding batch: 16 embedded 1.16-1.31x faster than 64 on 2 cores in 9 interleaved rounds
# (identical vectors, peak memory 331 MiB instead of 864: the activations stay in cache; bench/README)
EMBED_BATCH_SIZE = 16


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """$XDG_CACHE_HOME, else ~/.cache."""
    return Path(environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"))


def default_home(environ: Mapping[str, str] = os.environ) -> Path:
    """LONGQA_HOME, else $XDG_CACHE_HOME/longqa, else ~/.cache/longqa (of `environ`: the warm server's
    client passes its caller's; standard library only, so that client can import it)."""
    named = environ.get("LONGQA_HOME", "").strip()
    return Path(named).expanduser() if named else cache_dir(environ) / "longqa"


def onnx_dir() -> Path:
    """Where the embedder's ONNX exports live: LONGQA_ONNX_DIR, else the cache's longqa/onnx."""
    named = os.environ.get("LONGQA_ONNX_DIR", "").strip()
    return Path(named).expanduser() if named else cache_dir() / "longqa" / "onnx"


def embedder_path_override() -> Path | None:
    """LONGQA_EMBEDDER_PATH: a sentence-transformers model directory instead of the bundled one."""
    named = os.environ.get("LONGQA_EMBEDDER_PATH", "").strip()
    return Path(named) if named else None


def secret(name: str) -> str | None:
    """The value of the environment variable `name` (an API key the deployment names, e.g. its
    embeddings key variable): read when a client is made, never kept in settings."""
    return os.environ.get(name) or None


def tokenizer_choice() -> str:
    """LONGQA_TOKENIZER as written (lowercase): `wordpiece` (the default) or `tiktoken`; the counter
    that loads it refuses any other name (retrieval/tokens.py)."""
    return os.environ.get("LONGQA_TOKENIZER", "wordpiece").strip().lower() or "wordpiece"


def embedder_backend() -> str:
    """LONGQA_EMBEDDER_BACKEND: `onnx` (the default) or `torch`; ValueError naming it otherwise."""
    choice = os.environ.get("LONGQA_EMBEDDER_BACKEND", "onnx").strip().lower() or "onnx"
    if choice not in BACKENDS:
        raise ValueError(f"LONGQA_EMBEDDER_BACKEND={choice!r}: expected one of {', '.join(BACKENDS)}")
    return choice
