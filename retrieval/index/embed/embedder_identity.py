"""Which embedder made a library's vectors: its name, dimension and a fingerprint (the rounded vectors
of fixed probe texts), recorded in the manifest (issue 49). Vectors of two embedders are not
comparable: a library is searched only with the embedder that made it. On one host a changed
embedder re-embeds the library into a new version (its chunking's signature names the embedder);
on a shared catalog a replica configured with another embedder refuses, naming both and the command
that re-embeds (`longqa reembed NAME`), which other replicas' questions do not wait for."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from .embedder_errors import EmbedderMismatch

PROBES = (
    "The ferry leaves the harbour at nine every morning.",
    "Quarterly revenue rose 4.2% to $1.3 billion.",
    "Der Leuchtturm steht seit 1891 auf der Landzunge.",
)
FINGERPRINT_DIMS = 8  # components kept of each probe's vector
ROUND = 3  # decimals kept: two runs of one model agree, two models do not
TOLERANCE = 0.02  # largest difference of a fingerprint component between runs of one model (batching, threads)


class EmbedderRecord(BaseModel):
    """A library's embedder, as its manifest records it."""

    name: str = Field(description="the embedder's name: a model directory's, or `openai:<model>` for an endpoint")
    dimension: int = Field(ge=1, description="the length of its vectors")
    fingerprint: list[float] = Field(default_factory=list, description="the first components of the probes' vectors")

    def matches(self, other: EmbedderRecord) -> bool:
        """Whether `other` makes the same vectors: same name and dimension, fingerprints within tolerance."""
        if (self.name, self.dimension) != (other.name, other.dimension):
            return False
        if len(self.fingerprint) != len(other.fingerprint):
            return True  # one was recorded without probes: the name and dimension decide
        return bool(np.max(np.abs(np.subtract(self.fingerprint, other.fingerprint)), initial=0.0) <= TOLERANCE)

    def label(self) -> str:
        """`name (N-d)`."""
        return f"{self.name} ({self.dimension}-d)"


_records: dict[int, tuple[Any, EmbedderRecord]] = {}
_lock = threading.Lock()


def record_of(embedder: Any) -> EmbedderRecord:
    """This embedder's record: the probes embedded once per embedder object."""
    with _lock:
        held = _records.get(id(embedder))
        if held is not None and held[0] is embedder:
            return held[1]
    vectors = np.asarray(embedder.embed(list(PROBES)), dtype=np.float32)
    fingerprint = [round(float(x), ROUND) for row in vectors[:, :FINGERPRINT_DIMS] for x in row]
    record = EmbedderRecord(name=embedder.name, dimension=int(vectors.shape[1]), fingerprint=fingerprint)
    with _lock:
        _records[id(embedder)] = (embedder, record)
    return record


def refuse(library: str, recorded: EmbedderRecord, ours: EmbedderRecord) -> EmbedderMismatch:
    """The refusal: which embedder made the library, which this process has, and how to go on."""
    how = (
        "the same name answers other vectors (another model behind it?)"
        if recorded.name == ours.name
        else f"this process embeds with {ours.label()}"
    )
    return EmbedderMismatch(
        f"library {library} was embedded with {recorded.label()}; {how}, so its vectors cannot be searched "
        f"here. Configure this process with the library's embedder (LONGQA_EMBEDDINGS_URL and "
        f"LONGQA_EMBEDDINGS_MODEL for an endpoint, unset for the bundled model, LONGQA_EMBEDDER_PATH for a model "
        f"directory), or re-embed the library with this one: `longqa reembed {library}` (questions keep the "
        f"current version until the new one is published)"
    )


def to_check(manifest: Any, name: str, dense: bool) -> bool:
    """Whether an update must compare embedders: the library has vectors, and this update embeds, or
    this process's embedder has another name (a BM25-only update would otherwise rebuild them with it)."""
    recorded = manifest.embedder
    has_vectors = any(p.dense for p in manifest.parts.values())
    return recorded is not None and has_vectors and (dense or recorded.name != name)


def check(library: str, recorded: EmbedderRecord | None, embedder: Any, shared: bool) -> bool:
    """Whether `embedder` made `recorded`'s vectors (nothing recorded: yes). A different name on one
    host is False (the caller's update re-embeds into a new version); anywhere else a mismatch
    raises `EmbedderMismatch`, as does a different name on a shared catalog."""
    if recorded is None:
        return True
    ours = record_of(embedder)
    if recorded.matches(ours):
        return True
    if recorded.name != ours.name and not shared:
        return False
    raise refuse(library, recorded, ours)
