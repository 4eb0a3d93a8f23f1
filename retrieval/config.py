"""Where indexes live and which vector store serves them (environment-overridable)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from .loaders import DEFAULT_MAX_WORDS


def default_home() -> Path:
    """LONGQA_HOME, else $XDG_CACHE_HOME/longqa, else ~/.cache/longqa."""
    if os.environ.get("LONGQA_HOME"):
        return Path(os.environ["LONGQA_HOME"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "longqa"


class IndexSettings(BaseModel):
    home: Path = Field(default_factory=default_home,
                       description="directory for the embedded Chroma store, BM25 and chunk files")
    chroma_host: str | None = Field(default=None, description="Chroma server host; unset = embedded store")
    chroma_port: int = Field(default=8000, description="Chroma server port")
    embed_batch_size: int = Field(default=64, description="texts per embedding batch")
    max_words: int = Field(default=DEFAULT_MAX_WORDS, description="refuse documents longer than this")
    rerank_model_path: str | None = Field(default=None,
                                          description="local cross-encoder directory; unset = no rerank")

    @classmethod
    def from_env(cls, **overrides: object) -> IndexSettings:
        env: dict[str, object] = {}
        if os.environ.get("CHROMA_HOST"):
            env["chroma_host"] = os.environ["CHROMA_HOST"]
        if os.environ.get("CHROMA_PORT"):
            env["chroma_port"] = int(os.environ["CHROMA_PORT"])
        if os.environ.get("LONGQA_MAX_WORDS"):
            env["max_words"] = int(os.environ["LONGQA_MAX_WORDS"])
        if os.environ.get("LONGQA_RERANK_MODEL"):
            env["rerank_model_path"] = os.environ["LONGQA_RERANK_MODEL"]
        env.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**env)
