"""Where indexes live and which vector store serves them (environment-overridable)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .loaders import DEFAULT_MAX_WORDS


def default_home() -> Path:
    """LONGQA_HOME, else $XDG_CACHE_HOME/longqa, else ~/.cache/longqa."""
    if os.environ.get("LONGQA_HOME"):
        return Path(os.environ["LONGQA_HOME"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "longqa"


class IndexSettings(BaseModel):
    """Where one index store lives. A plain value: the environment is read once, by longqa's
    run settings (`longqa.contracts.settings.Settings.index_settings`)."""

    model_config = ConfigDict(frozen=True)  # hashable: one store per distinct location

    home: Path = Field(
        default_factory=default_home, description="directory for the embedded Chroma store, BM25 and chunk files"
    )
    chroma_host: str | None = Field(default=None, description="Chroma server host; unset = embedded store")
    chroma_port: int = Field(default=8000, description="Chroma server port")
    postgres_uri: str | None = Field(
        default=None, repr=False, description="with a Chroma server: the catalog in PostgreSQL (retrieval/catalog.py)"
    )
    embed_batch_size: int = Field(default=64, description="texts per embedding batch")
    max_words: int = Field(default=DEFAULT_MAX_WORDS, description="refuse documents longer than this")
    chunking: Literal["paragraph", "sentence"] = Field(
        default="paragraph",
        description="'paragraph': a paragraph that fits a chunk is never cut; 'sentence': sentences packed across "
        "paragraphs",
    )
