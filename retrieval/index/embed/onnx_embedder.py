"""The dense embedder through ONNX Runtime: the same all-MiniLM-L6-v2 vectors as sentence-transformers
(retrieval/index/embed/onnx_export.py verifies that), with no torch import, so a fresh `longqa ask` starts in
about a second instead of loading torch and transformers."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ...environment import EMBED_BATCH_SIZE

SMALL_BATCH = 8  # at most this many texts (a query, a few sub-questions) run on one thread


class OnnxEmbedder:
    """Normalised sentence embeddings from the exported model; the interface of `Embedder`."""

    def __init__(self, model_path: str | Path, onnx_file: str | Path, batch_size: int = EMBED_BATCH_SIZE):
        from tokenizers import Tokenizer

        model_path = Path(model_path)
        self.model_path = str(model_path)
        self.name = model_path.name
        self.onnx_file = str(onnx_file)
        self.batch_size = batch_size
        max_length = int(json.loads((model_path / "sentence_bert_config.json").read_text("utf-8"))["max_seq_length"])
        self.max_tokens = max_length - 2  # [CLS] and [SEP] take two of the model's positions
        pooling = json.loads((model_path / "1_Pooling" / "config.json").read_text("utf-8"))
        self.dimension = int(pooling["word_embedding_dimension"])
        self._tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.no_padding()
        self._sessions: dict[int, object] = {}
        self._lock = threading.Lock()
        self.calls = 0  # texts embedded so far; tests use it to prove the cache avoids re-embedding

    def _session(self, threads: int):
        """One session per thread count, made on first use: queries get a one-thread session (a
        second thread only waits on a busy 2-core machine), batches one with a thread per core."""
        with self._lock:
            session = self._sessions.get(threads)
            if session is None:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3  # warnings about the fused graph's shapes say nothing to a user
                session = ort.InferenceSession(self.onnx_file, options, providers=["CPUExecutionProvider"])
                self._sessions[threads] = session
            return session

    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None, pool: bool = False) -> np.ndarray:
        """Embed `texts` (in order); `progress(n)` is called after each group of batches. Texts are
        batched by length, so a batch pads to few positions (vectors do not depend on the padding).
        At most SMALL_BATCH texts (a query) run on one thread, unless `pool` (indexing) asks for all."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        session = self._session(1 if len(texts) <= SMALL_BATCH and not pool else 0)
        encodings = self._tokenizer.encode_batch([str(t).strip() for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        done_since_report = 0
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            out[rows] = session.run(None, feeds)[0]
            done_since_report += len(rows)
            if progress and (done_since_report >= self.batch_size * 8 or start + self.batch_size >= len(order)):
                progress(done_since_report)
                done_since_report = 0
        with self._lock:
            self.calls += len(texts)
        return out
