"""The sentence-transformers embedder (torch): the reference the ONNX export is checked against
(onnx_export.py), and the path taken with `LONGQA_EMBEDDER_BACKEND=torch` or where no ONNX file can be
made. Chosen by embedder.py."""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ...environment import EMBED_BATCH_SIZE

# A question (or a few sub-questions) is embedded on one torch thread: torch's pool of one thread per
# core makes a single short text many times slower when another process holds a core (measured in
# bench/warm_question.py); indexing batches keep the whole pool.
SMALL_BATCH = 8


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with `n` torch intra-op threads (None: leave them as they are)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Embedder:
    """Normalised sentence embeddings; cosine similarity is then a dot product."""

    def __init__(self, model_path: str | Path, batch_size: int = EMBED_BATCH_SIZE):
        self.model_path = str(model_path)
        self.name = Path(model_path).name
        self._model = _load_quietly(self.model_path)
        self.batch_size = batch_size
        # [CLS] and [SEP] take two of the model's positions
        self.max_tokens = int(self._model.max_seq_length) - 2
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses every core
        self.calls = 0  # texts embedded so far; tests use it to prove the cache avoids re-embedding

    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None, pool: bool = False) -> np.ndarray:
        """Embed `texts`; `progress(n)` is called after each batch with the number just done. At most
        SMALL_BATCH texts (a query) run on one torch thread, larger batches (and any with `pool`:
        indexing) on torch's whole pool."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = []
        # the lock makes this the only forward pass, so the thread count it sets is its own
        with self._lock, torch_threads(1 if len(texts) <= SMALL_BATCH and not pool else None):
            for i in range(0, len(texts), self.batch_size * 8):
                batch = texts[i : i + self.batch_size * 8]
                out.append(
                    self._model.encode(
                        batch,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                )
                self.calls += len(batch)
                if progress:
                    progress(len(batch))
        return np.vstack(out).astype(np.float32, copy=False)

    @property
    def dimension(self) -> int:
        """The length of the model's embedding vectors."""
        # renamed in sentence-transformers 5 (the old name warns); both report the same number
        dimension = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )
        return int(dimension())


def _load_quietly(model_path: str):
    """Load the model without the libraries' progress bars and deprecation notices: they say nothing
    to a longqa user (a load failure still raises)."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return SentenceTransformer(model_path, device="cpu", local_files_only=True)
