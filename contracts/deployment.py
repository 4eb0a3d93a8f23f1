"""The deployment's part of the run settings: the operator's, fixed by the environment a process
starts in. Where indexes, threads and keys live; which engines serve (the Chroma server, the model
endpoint and the variable holding its key, PostgreSQL); which files may be read and how much
reading one may cost; whether this process is a server, and on a server what a caller may choose
(`ceilings`, `offered_models`: contracts/ceilings.py). A server's caller can set none of these
(`longqa.contracts.settings.RunContext` leaves them out; naming one is refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from longqa.retrieval.environment import default_home
from longqa.retrieval.index.config import EndpointSpec
from longqa.retrieval.read.bounded import DEFAULT_READ_MEMORY_MB, DEFAULT_READ_TIMEOUT_S, ReadLimits
from longqa.retrieval.read.folders import DEFAULT_MAX_FILE_MB
from longqa.retrieval.read.loaders import DEFAULT_MAX_TEXT_CHARS, DEFAULT_MAX_WORDS
from longqa.retrieval.read.ocr import DEFAULT_FILE_TIMEOUT_S, DEFAULT_MAX_PAGES, DEFAULT_PAGE_TIMEOUT_S, OcrLimits

from .environment import env_choice, env_flag, env_float, env_int, env_json_object, env_list, env_path, env_text

DEFAULT_NODE_THREADS = 64
CEILINGS_EXAMPLE = '{"question_budget": 4000}'


class DeploymentSettings(BaseModel):
    """What the operator sets once for every run of a process: data, engines, the readable files and
    the limits on reading, the server's threads, keys and ceilings."""

    server: bool = Field(
        default_factory=env_flag("LONGQA_SERVER"),
        description="this process serves other callers (LONGQA_SERVER=1, set in langgraph.json; `longqa serve` "
        "sets it on its own settings): document paths need documents_root, and a caller's run settings are "
        "checked against the ceilings",
    )
    home: Path = Field(default_factory=default_home, description="index directory (LONGQA_HOME)")
    chroma_host: str | None = Field(default_factory=env_text("CHROMA_HOST"), description="Chroma server host")
    chroma_port: int = Field(
        default_factory=env_int("CHROMA_PORT", 8000), ge=1, le=65535, description="Chroma server port"
    )
    postgres_uri: str | None = Field(
        default_factory=env_text("LONGQA_POSTGRES_URI"),
        repr=False,  # it may hold a password
        description="PostgreSQL URI for conversation threads where longqa owns the checkpointer (CLI --thread, "
        "longqa serve); unset = SQLite under the index home",
    )
    base_url: str | None = Field(
        default_factory=env_text("LONGQA_BASE_URL", None, "OPENAI_BASE_URL"),
        description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, OpenAI; LONGQA_BASE_URL, else "
        "OPENAI_BASE_URL)",
    )
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the API key")
    embeddings_url: str | None = Field(
        default_factory=env_text("LONGQA_EMBEDDINGS_URL"),
        description="OpenAI-compatible /v1/embeddings endpoint(s) that embed instead of the bundled model: base "
        "URLs ending in /v1, comma-separated for a fleet serving one model (LONGQA_EMBEDDINGS_URL)",
    )
    embeddings_model: str | None = Field(
        default_factory=env_text("LONGQA_EMBEDDINGS_MODEL"),
        description="the model the embeddings endpoint is asked for (LONGQA_EMBEDDINGS_MODEL)",
    )
    embeddings_key_env: str = Field(
        default_factory=env_text("LONGQA_EMBEDDINGS_KEY_ENV", "OPENAI_API_KEY"),  # type: ignore[arg-type]
        description="environment variable holding the embeddings endpoint's key (LONGQA_EMBEDDINGS_KEY_ENV)",
    )
    embeddings_concurrency: int = Field(
        default_factory=env_int("LONGQA_EMBEDDINGS_CONCURRENCY", 4, highest=256),
        ge=1,
        le=256,
        description="embedding requests in flight per endpoint (LONGQA_EMBEDDINGS_CONCURRENCY)",
    )
    embeddings_batch: int = Field(
        default_factory=env_int("LONGQA_EMBEDDINGS_BATCH", 32, highest=2048),
        ge=1,
        le=2048,
        description="texts per embedding request (LONGQA_EMBEDDINGS_BATCH)",
    )
    documents_root: Path | None = Field(
        default_factory=env_path("LONGQA_DOCUMENTS_ROOT"),
        description="if set, document paths must lie under this directory; on a server, paths are refused without it "
        "(LONGQA_DOCUMENTS_ROOT)",
    )
    max_words: int = Field(
        ge=1,
        default_factory=env_int("LONGQA_MAX_WORDS", DEFAULT_MAX_WORDS),
        description="refuse documents longer than this many words (LONGQA_MAX_WORDS)",
    )
    read_timeout_s: float = Field(
        default_factory=env_float("LONGQA_READ_TIMEOUT_S", DEFAULT_READ_TIMEOUT_S),
        gt=0,
        le=86_400,
        description="a file that takes longer to read is skipped with its reason (LONGQA_READ_TIMEOUT_S, seconds)",
    )
    read_memory_mb: int = Field(
        default_factory=env_int("LONGQA_READ_MEMORY_MB", DEFAULT_READ_MEMORY_MB, lowest=64),
        ge=64,
        description="a file whose reading needs more memory is skipped with its reason (LONGQA_READ_MEMORY_MB)",
    )
    ocr: Literal["on", "off"] = Field(
        default_factory=env_choice("LONGQA_OCR", "on", ("on", "off")),
        description="read scans (PDF pages with no text layer) and images (.png, .jpg, .tif, ...) by OCR with "
        "Tesseract (LONGQA_OCR=off: they are skipped with the reason)",
    )
    ocr_page_timeout_s: float = Field(
        default_factory=env_float("LONGQA_OCR_PAGE_TIMEOUT_S", DEFAULT_PAGE_TIMEOUT_S),
        gt=0,
        le=3_600,
        description="a page whose OCR takes longer is left out, named in a warning (LONGQA_OCR_PAGE_TIMEOUT_S)",
    )
    ocr_max_pages: int = Field(
        default_factory=env_int("LONGQA_OCR_MAX_PAGES", DEFAULT_MAX_PAGES),
        ge=1,
        description="a file with more pages to read by OCR is skipped with the reason (LONGQA_OCR_MAX_PAGES)",
    )
    ocr_file_timeout_s: float = Field(
        default_factory=env_float("LONGQA_OCR_FILE_TIMEOUT_S", DEFAULT_FILE_TIMEOUT_S),
        gt=0,
        le=86_400,
        description="all of one file's OCR: past it the pages not yet read are left out, named in a warning, and a "
        "file with no text read is skipped with the reason (LONGQA_OCR_FILE_TIMEOUT_S, seconds)",
    )
    max_file_mb: float = Field(
        default_factory=env_float("LONGQA_MAX_FILE_MB", DEFAULT_MAX_FILE_MB),
        gt=0,
        description="a larger file is skipped (found in a folder) or refused (named) before it is read "
        "(LONGQA_MAX_FILE_MB)",
    )
    max_text_mb: float = Field(
        default_factory=env_float("LONGQA_MAX_TEXT_MB", DEFAULT_MAX_TEXT_CHARS / (1 << 20)),
        gt=0,
        description="a file whose text is longer (in MiB of characters) is skipped or refused, in its reader "
        "(LONGQA_MAX_TEXT_MB, default 32: prose meets max_words first; this bounds text with few words)",
    )
    max_inline_texts: int = Field(
        default_factory=env_int("LONGQA_MAX_INLINE_TEXTS", 256, lowest=1),
        ge=1,
        description="most inline texts one run may pass (LONGQA_MAX_INLINE_TEXTS, default 256; each is a stored "
        "document: a folder and an embedding pass)",
    )
    max_inline_mb: float = Field(
        default_factory=env_float("LONGQA_MAX_INLINE_MB", 4.0),
        gt=0,
        description="most text all of one run's inline texts may hold, in MiB of characters (LONGQA_MAX_INLINE_MB, "
        "default 4: a quarter of the request body limit)",
    )
    max_inline_text_mb: float = Field(
        default_factory=env_float("LONGQA_MAX_INLINE_TEXT_MB", 1.0),
        gt=0,
        description="most text one inline text may hold, in MiB of characters (LONGQA_MAX_INLINE_TEXT_MB, default 1: "
        "~150,000 words; a larger document is indexed as a file)",
    )
    inline_keep_s: float = Field(
        default_factory=env_float("LONGQA_INLINE_KEEP_S", 86_400.0, lowest=0),
        ge=0,
        description="how long a text passed inline stays stored and indexed after its last use "
        "(LONGQA_INLINE_KEEP_S, seconds)",
    )
    node_threads: int = Field(
        default_factory=env_int("LONGQA_NODE_THREADS", DEFAULT_NODE_THREADS, lowest=0, highest=1024),
        ge=0,
        le=1024,
        description="the LangGraph server's threads for the nodes' own work (LONGQA_NODE_THREADS; 0 = Python's "
        "default pool; longqa/http/server_app.py)",
    )
    keys_file: Path | None = Field(
        default_factory=env_path("LONGQA_KEYS_FILE"),
        description="the servers' API keys (LONGQA_KEYS_FILE; unset = keys.json under the index home)",
    )
    ceilings: dict[str, Any] = Field(
        default_factory=env_json_object("LONGQA_CEILINGS", CEILINGS_EXAMPLE),
        description="what a server's caller may raise a costly setting to, above the deployment's own value "
        "(LONGQA_CEILINGS, a JSON object; contracts/ceilings.py)",
    )
    offered_models: list[str] = Field(
        default_factory=env_list("LONGQA_MODELS"),
        description="models a server's caller may pick besides the deployment's own (LONGQA_MODELS, comma-separated)",
    )

    def embeddings(self) -> EndpointSpec | None:
        """The embeddings endpoint(s) to embed with; None: the bundled model (or LONGQA_EMBEDDER_PATH's)."""
        if not self.embeddings_url:
            return None
        if not self.embeddings_model:
            raise ValueError("LONGQA_EMBEDDINGS_URL needs LONGQA_EMBEDDINGS_MODEL: the model the endpoint embeds with")
        urls = tuple(u.strip().rstrip("/") for u in self.embeddings_url.split(",") if u.strip())
        return EndpointSpec(
            urls=urls,
            model=self.embeddings_model,
            key_env=self.embeddings_key_env,
            concurrency=self.embeddings_concurrency,
            batch=self.embeddings_batch,
        )

    def read_limits(self) -> ReadLimits:
        """The ceiling on reading one file."""
        return ReadLimits(
            timeout_s=self.read_timeout_s,
            memory_mb=self.read_memory_mb,
            max_bytes=self.max_file_bytes,
            max_chars=int(self.max_text_mb * (1 << 20)),
            ocr=OcrLimits(
                self.ocr == "on", self.ocr_page_timeout_s, self.ocr_max_pages, file_timeout_s=self.ocr_file_timeout_s
            ),
        )

    @property
    def max_file_bytes(self) -> int:
        """`max_file_mb` in bytes."""
        return int(self.max_file_mb * (1 << 20))

    @property
    def keys_path(self) -> Path:
        """Where this deployment's API keys live: `keys_file`, else keys.json under the index home."""
        return Path(self.keys_file).expanduser() if self.keys_file else Path(self.home) / "keys.json"


DEPLOYMENT_FIELDS: tuple[str, ...] = tuple(DeploymentSettings.model_fields)
