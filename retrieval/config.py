"""Where indexes live and which vector store serves them (the default home: retrieval/environment.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .environment import EMBED_BATCH_SIZE, default_home
from .loaders import DEFAULT_MAX_WORDS


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
    embed_batch_size: int = Field(default=EMBED_BATCH_SIZE, description="texts per embedding batch")
    max_words: int = Field(default=DEFAULT_MAX_WORDS, description="refuse documents longer than this")
    chunking: Literal["paragraph", "sentence"] = Field(
        default="paragraph",
        description="'paragraph': a paragraph that fits a chunk is never cut; 'sentence': sentences packed across "
        "paragraphs",
    )
