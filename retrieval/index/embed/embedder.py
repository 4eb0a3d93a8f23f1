"""The dense embedder: the bundled all-MiniLM-L6-v2, CPU, offline (or another sentence-transformers
model directory, LONGQA_EMBEDDER_PATH). By default through ONNX Runtime (onnx_embedder.py: no torch
import, the same vectors), else through sentence-transformers (torch_embedder.py:
`LONGQA_EMBEDDER_BACKEND=torch`, or where the ONNX export cannot be made). A deployment may name an
OpenAI-compatible endpoint instead (endpoint_embedder.py, `get_embedder(endpoint=...)`)."""

from __future__ import annotations

import functools
import json
import logging
import shutil
import threading
from pathlib import Path

from ...environment import EMBED_BATCH_SIZE, embedder_backend
from ...tokens import embedder_model_path
from ..config import EndpointSpec
from .endpoint_embedder import EndpointEmbedder
from .onnx_embedder import OnnxEmbedder
from .torch_embedder import Embedder

log = logging.getLogger(__name__)


_lock = threading.Lock()


@functools.cache  # read once per model directory: every index open and build asks
def describe(model_path: str | Path) -> tuple[str, int] | None:
    """(name, most word pieces per text) of a sentence-transformers model directory, from its config
    alone (so a BM25-only index never loads the model); None when the config does not say."""
    config = Path(model_path) / "sentence_bert_config.json"
    try:
        return Path(model_path).name, int(json.loads(config.read_text("utf-8"))["max_seq_length"]) - 2
    except (OSError, ValueError, KeyError, TypeError):
        return None


def configured_backend() -> str:
    """LONGQA_EMBEDDER_BACKEND: `onnx` (the default) or `torch`."""
    return embedder_backend()


@functools.cache
def _load(path: str, batch_size: int, backend: str) -> Embedder | OnnxEmbedder:
    if backend == "onnx":
        from .onnx_export import OnnxUnavailable, exported_model

        try:
            onnx_file = exported_model(path)
        except (OnnxUnavailable, OSError) as e:
            log.warning("embedding through sentence-transformers: %s", e)
            onnx_file = None
        try:
            if onnx_file is not None:
                log.info("loading embedder from %s (ONNX Runtime)", onnx_file)
                embedder = OnnxEmbedder(path, onnx_file, batch_size=batch_size)
                embedder.embed(["probe"])  # a damaged file fails here, not in the middle of a question
                return embedder
        except Exception as e:  # noqa: BLE001 - onnxruntime's load errors are untyped (a truncated or damaged file)
            log.warning(
                "the ONNX export %s cannot be loaded (%s: %s); it is removed (the next process exports it again) "
                "and this one embeds through sentence-transformers",
                onnx_file.parent,
                type(e).__name__,
                str(e)[:200],
            )
            shutil.rmtree(onnx_file.parent, ignore_errors=True)
    log.info("loading embedder from %s", path)
    return Embedder(path, batch_size=batch_size)


def get_embedder(
    model_path: str | Path | None = None,
    batch_size: int = EMBED_BATCH_SIZE,
    backend: str | None = None,
    endpoint: EndpointSpec | None = None,
) -> Embedder | OnnxEmbedder | EndpointEmbedder:
    """The process-wide embedder: the `endpoint`'s where one is given (retrieval/index/embed/endpoint_embedder.py),
    else the model directory's (default: the bundled one, or LONGQA_EMBEDDER_PATH) through `backend`
    (default: LONGQA_EMBEDDER_BACKEND, else ONNX Runtime, exporting the model on first use); one per
    process and choice, shared by every index."""
    with _lock:
        if endpoint is not None:
            return _endpoint(endpoint)
        return _load(str(model_path or embedder_model_path()), batch_size, backend or configured_backend())


@functools.cache
def _endpoint(spec: EndpointSpec) -> EndpointEmbedder:
    return EndpointEmbedder(spec)


def _preloadable() -> bool:
    """Whether the query encoder may be loaded before a question: ONNX Runtime is the backend and its
    export already exists (an export is never started here)."""
    from .onnx_export import OnnxUnavailable, exported_model

    try:
        if configured_backend() != "onnx":
            return False
        exported_model(embedder_model_path(), export=False)
    except (ValueError, OnnxUnavailable, OSError, ImportError):  # a bad setting: the question's load reports it
        return False
    return True


def preload_in_background() -> threading.Thread | None:
    """Start loading the ONNX query encoder in a daemon thread, so it overlaps the graph's imports in
    a fresh process (`longqa ask`, the warm server); return the thread (None: nothing to load). Only
    where the export already exists (an export is never started here); a failure is left to the
    question's own load, which reports it."""
    if not _preloadable():
        return None

    def load() -> None:
        try:
            get_embedder()  # loads the one-thread session a question uses and runs it once
        except Exception:  # noqa: BLE001 - the question's own load reports it
            log.debug("preloading the embedder failed", exc_info=True)

    thread = threading.Thread(target=load, name="longqa-embedder-preload", daemon=True)
    thread.start()
    return thread
