"""Where indexes live, which vector store serves them and which embedder embeds (the default home:
retrieval/environment.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..environment import EMBED_BATCH_SIZE, default_home
from ..read.loaders import DEFAULT_MAX_WORDS


class EndpointSpec(BaseModel):
    """Which endpoint(s) embed and how they are called (the deployment's; a plain, hashable value)."""

    model_config = ConfigDict(frozen=True)

    urls: tuple[str, ...] = Field(min_length=1, description="base URLs (…/v1) of endpoints serving the same model")
    model: str = Field(min_length=1, description="the model name the endpoints are sent")
    key_env: str = Field(default="OPENAI_API_KEY", description="the environment variable holding the API key")
    concurrency: int = Field(default=4, ge=1, le=256, description="requests in flight per endpoint")
    batch: int = Field(default=32, ge=1, le=2048, description="texts per request")
    timeout_s: float = Field(default=60.0, gt=0, description="one request's limit")
    retries: int = Field(default=6, ge=0, le=20, description="retries of a request, with backoff, per endpoint")
    max_tokens: int = Field(default=254, ge=16, description="word pieces per embedded unit (longer chunks are cut)")

    @property
    def name(self) -> str:
        """The embedder's name in a library's manifest: the model, not the endpoint (a fleet is one)."""
        return f"openai:{self.model}"


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
        default=None,
        repr=False,
        description="with a Chroma server: the catalog in PostgreSQL (retrieval/index/library/catalog.py)",
    )
    embed_batch_size: int = Field(default=EMBED_BATCH_SIZE, description="texts per embedding batch")
    max_words: int = Field(default=DEFAULT_MAX_WORDS, description="refuse documents longer than this")
    embeddings: EndpointSpec | None = Field(
        default=None, description="an OpenAI-compatible embeddings endpoint instead of the bundled model"
    )
    chunking: Literal["paragraph", "sentence"] = Field(
        default="paragraph",
        description="'paragraph': a paragraph that fits a chunk is never cut; 'sentence': sentences packed across "
        "paragraphs",
    )
