"""The dense embedder behind any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM,
Text Embeddings Inference, llama.cpp's `--embedding` server), or a fleet of them serving one model.

Through the `openai` client, which retries 408/409/429 and 5xx answers and dropped connections with
exponential backoff (honouring `retry-after`) and bounds each request by a timeout; here: batching,
a bounded number of requests in flight per endpoint (a batch goes to the least busy one, and to the
next endpoint when one keeps failing), every answer checked (one vector per text, in order, all of
one dimension) and normalised, so cosine similarity is a dot product as with the bundled model."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...environment import secret
from ..config import EndpointSpec
from .embedder_errors import EmbedderUnavailable


class EndpointEmbedder:
    """Normalised embeddings from an OpenAI-compatible endpoint; the interface of `Embedder`."""

    def __init__(self, spec: EndpointSpec):
        import openai

        self.spec = spec
        self.name = spec.name
        self.model_path = ", ".join(spec.urls)
        self.max_tokens = spec.max_tokens
        self.batch_size = spec.batch
        key = secret(spec.key_env) or "not-needed"  # local servers take any key; the client insists on one
        self._clients = [
            openai.OpenAI(base_url=url, api_key=key, timeout=spec.timeout_s, max_retries=spec.retries)
            for url in spec.urls
        ]
        self._busy = [0] * len(spec.urls)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(spec.concurrency * len(spec.urls), thread_name_prefix="longqa-embed")
        self._dimension: int | None = None
        self.calls = 0  # texts embedded so far
        self.requests = 0  # requests answered

    @property
    def dimension(self) -> int:
        """The length of the endpoint's vectors (asked once with a probe text when not yet seen)."""
        if self._dimension is None:
            self.embed(["dimension probe"])
        return int(self._dimension)  # type: ignore[arg-type]

    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None, pool: bool = False) -> np.ndarray:
        """Embed `texts` (in order) in batches of `spec.batch`, at most `spec.concurrency` requests in
        flight per endpoint; `progress(n)` after each batch. `pool` is the bundled model's switch (unused)."""
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        batches = [texts[i : i + self.spec.batch] for i in range(0, len(texts), self.spec.batch)]
        futures = [self._pool.submit(self._batch, b) for b in batches]
        out = []
        for future, batch in zip(futures, batches, strict=True):
            out.append(future.result())
            if progress:
                progress(len(batch))
        return np.vstack(out)

    def _batch(self, texts: list[str]) -> np.ndarray:
        """One request, to the least busy endpoint, then to each other one in turn if it fails."""
        with self._lock:
            first = min(range(len(self._clients)), key=lambda i: self._busy[i])
        order = [(first + k) % len(self._clients) for k in range(len(self._clients))]
        failure: Exception | None = None
        for i in order:
            with self._lock:
                self._busy[i] += 1
            try:
                return self._request(i, texts)
            except EmbedderUnavailable as e:
                failure = e
            finally:
                with self._lock:
                    self._busy[i] -= 1
        raise failure  # type: ignore[misc]

    def _request(self, i: int, texts: list[str]) -> np.ndarray:
        import openai

        url = self.spec.urls[i]
        sent = [t if t.strip() else " " for t in texts]  # endpoints refuse an empty input
        try:
            reply = self._clients[i].embeddings.create(model=self.spec.model, input=sent, encoding_format="float")
        except openai.OpenAIError as e:
            raise EmbedderUnavailable(f"embedding endpoint {url} (model {self.spec.model}): {_reason(e)}") from e
        rows = sorted(reply.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise EmbedderUnavailable(f"embedding endpoint {url} answered {len(rows)} vectors for {len(texts)} texts")
        vectors = np.asarray([r.embedding for r in rows], dtype=np.float32)
        with self._lock:
            if self._dimension is None:
                self._dimension = vectors.shape[1]
            expected = self._dimension
            self.calls += len(texts)
            self.requests += 1
        if vectors.ndim != 2 or vectors.shape[1] != expected:
            raise EmbedderUnavailable(
                f"embedding endpoint {url} (model {self.spec.model}) answered {vectors.shape[-1]}-dimensional "
                f"vectors; this embedder's are {expected}-dimensional (two models behind one name?)"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)


def _reason(error: Exception) -> str:
    """The client's error in one line (its status and the server's message where it gave them)."""
    status = getattr(error, "status_code", None)
    text = str(error).splitlines()[0][:300] if str(error) else type(error).__name__
    return f"HTTP {status}: {text}" if status else f"{type(error).__name__}: {text}"
