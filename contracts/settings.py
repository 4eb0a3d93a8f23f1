"""Every setting of a run, typed, with defaults and descriptions; read by nodes through
LangGraph's runtime context (`StateGraph(..., context_schema=Settings)`).

Defaults come from the environment where a variable is named (`LONGQA_*`, `CHROMA_*`,
`OPENAI_BASE_URL`), so a server can be configured without code; a run's `context` overrides
them. The OkraLong numbers default to the paper's appendix C.3 values.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, ValidationError, create_model, field_validator, model_validator

from longqa.retrieval import IndexSettings
from longqa.retrieval.bounded import DEFAULT_READ_MEMORY_MB, DEFAULT_READ_TIMEOUT_S, ReadLimits
from longqa.retrieval.config import default_home
from longqa.retrieval.folders import DEFAULT_MAX_FILE_MB
from longqa.retrieval.loaders import DEFAULT_MAX_WORDS

if TYPE_CHECKING:  # an annotation only: `import longqa.cli` does not import langgraph (~1 s) before it needs it
    from langgraph.runtime import Runtime

Strategy = Literal["rag", "lc", "self-route", "longrag", "longrag-ext", "longrag-fil", "adaptive", "adaptive-precise"]
STRATEGIES: tuple[str, ...] = Strategy.__args__


# fixed by the deployment's environment when LONGQA_SERVER=1 (set in langgraph.json)
SERVER_LOCKED = (
    "home",
    "chroma_host",
    "chroma_port",
    "documents_root",
    "base_url",
    "api_key_env",
    "max_words",
    "read_timeout_s",
    "read_memory_mb",
    "max_file_mb",
    "inline_keep_s",
    "postgres_uri",
)


class SettingsError(ValueError):
    """A setting that cannot be used: the message names it (the variable, the key) and why."""


class UnknownSetting(SettingsError):
    """A settings key that is not a field: named with the nearest valid one, never ignored."""


def check_names(names: Iterable[str], allowed: Iterable[str] | None = None, locked: Iterable[str] = ()) -> None:
    """Raise UnknownSetting for the first name that is not a settings field (or not in `allowed`);
    a `locked` name is refused as the deployment's."""
    valid = list(allowed if allowed is not None else Settings.model_fields)
    for name in names:
        if name in locked:
            raise UnknownSetting(f"setting {name!r} is fixed by the deployment; a run's context cannot change it")
        if name not in valid:
            close = difflib.get_close_matches(str(name), valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownSetting(f"unknown setting {name!r}{hint}")


def running_as_server() -> bool:
    return os.environ.get("LONGQA_SERVER", "").lower() in ("1", "true", "yes")


def _env(name: str, default: object = None):
    return lambda: os.environ.get(name, default)


def _env_number(name: str, default, kind: type, lowest: float, highest: float | None = None):
    def read():
        value = os.environ.get(name, "").strip()
        if not value:
            return default
        try:
            number = kind(value)
        except ValueError:
            raise SettingsError(f"{name}={value!r}: expected a {'whole ' if kind is int else ''}number") from None
        if highest is not None and not lowest <= number <= highest:
            raise SettingsError(f"{name}={value!r}: must be between {lowest:g} and {highest:g}")
        if not number >= lowest or number != number or number in (float("inf"), float("-inf")):
            raise SettingsError(f"{name}={value!r}: must be at least {lowest:g}")
        return number

    return read


def _env_float(name: str, default: float, lowest: float = 0.001):
    return _env_number(name, default, float, lowest)


def _env_int(name: str, default: int | None, lowest: int = 1, highest: int | None = None):
    return _env_number(name, default, int, lowest, highest)


DEFAULT_NODE_THREADS = 64
# the server's thread pool for the nodes' own work (longqa/server_app.py): a deployment setting, read at start
node_threads = _env_int("LONGQA_NODE_THREADS", DEFAULT_NODE_THREADS, lowest=0, highest=1024)


def _env_choice(name: str, default: str, choices: tuple[str, ...]):
    def read() -> str:
        value = os.environ.get(name, "").strip() or default
        if value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SettingsError(f"{name}={value!r}: expected one of {', '.join(choices)}{hint}")
        return value

    return read


class Settings(BaseModel):
    @model_validator(mode="before")
    @classmethod
    def _known_names(cls, data: object) -> object:
        """A mistyped key ("modle") is an error naming the nearest field, never silently ignored."""
        if isinstance(data, dict):
            check_names(data, cls.model_fields)
        return data

    # -- the model ------------------------------------------------------------------------------
    model: str | None = Field(
        default_factory=_env("LONGQA_MODEL"),
        description=(
            "chat model as an init_chat_model string, e.g. 'openai:gpt-4o-mini'; 'scripted' selects the offline "
            "scripted test model (not a real LLM); unset = evidence-only (no LLM call, no answer)"
        ),
    )
    base_url: str | None = Field(
        default_factory=lambda: os.environ.get("LONGQA_BASE_URL") or os.environ.get("OPENAI_BASE_URL"),
        description="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, OpenAI)",
    )
    api_key_env: str = Field(default="OPENAI_API_KEY", description="environment variable holding the API key")
    temperature: float = Field(ge=0, le=2, default=0.0, description="sampling temperature")
    timeout_s: float = Field(
        gt=0,
        le=3600,
        default_factory=_env_float("LONGQA_TIMEOUT_S", 60.0),
        description="per-call timeout in seconds (LONGQA_TIMEOUT_S); a timed-out call is not retried",
    )
    deadline_s: float = Field(
        default_factory=_env_float("LONGQA_DEADLINE_S", 900.0),
        gt=0,
        le=86_400,
        description="a whole run's deadline in seconds (LONGQA_DEADLINE_S): no model call starts or runs past it; "
        "the run ends with an error naming it and keeps its usage",
    )
    max_retries: int = Field(
        ge=0, le=5, default=2, description="retries per LLM call after a 429, a 5xx or a dropped connection"
    )
    context_window: int | None = Field(
        ge=256,
        le=10_000_000,
        default_factory=_env_int("LONGQA_CONTEXT_WINDOW", None),
        description="the model's context window in tokens; unset = what the server says (llama.cpp), else the "
        "model's own profile, else 32768",
    )
    # -- output caps, sent as max_tokens on every call (a reply cut at its cap is recorded, not used) --
    analyze_max_tokens: int = Field(ge=1, le=32768, default=160, description="most tokens the LLM analyzer may write")
    split_max_tokens: int = Field(
        ge=1, le=32768, default=256, description="most tokens the question splitter may write"
    )
    reason_max_tokens: int = Field(
        ge=1, le=32768, default=320, description="most tokens one step-wise reasoning step may write"
    )
    cot_max_tokens: int = Field(
        ge=1, le=32768, default=512, description="most tokens the CoT filter's chain of thought may write"
    )
    filter_max_tokens: int = Field(ge=1, le=32768, default=48, description="most tokens one filter verdict may write")
    extract_max_tokens: int = Field(
        ge=1, le=32768, default=512, description="most tokens the extractor's global information may write"
    )
    max_answer_tokens: int = Field(
        ge=1, le=32768, default=384, description="most tokens the generator's answer may write"
    )
    long_context_max_tokens: int = Field(
        ge=1,
        le=32768,
        default=384,
        description="most tokens the long-context reader may write (kept free in its window)",
    )

    # -- what to run ----------------------------------------------------------------------------
    strategy: Strategy = Field(
        default_factory=_env_choice("LONGQA_STRATEGY", "adaptive-precise", STRATEGIES),
        description="preset plan; adaptive ones use the analyzer + organizer",
    )
    stepwise_answer: Literal["reasoner", "passages", "both"] = Field(
        default="both",
        description="step-wise: the reasoner's answer is final, or the generator answers from the hops' passages "
        "(alone, or with the reasoner's notes: the default, measured with Qwen2.5-Coder-0.5B, evals/README.md)",
    )
    calculator: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="the model writes arithmetic, Python computes it (auto: adaptive strategies' arithmetic)",
    )
    grounding: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="an answer its cited passages do not support is a decline (auto: the adaptive strategies)",
    )
    analyzer: Literal["auto", "llm", "local"] = Field(
        default_factory=_env_choice("LONGQA_ANALYZER", "local", ("auto", "llm", "local")),
        description=(
            "'local' = trained local analyzer, no LLM call (rule-based if its weights are unusable); "
            "'llm' = OkraLong table 8 prompt; 'auto' = llm when a model is set, else local"
        ),
    )

    # -- OkraLong numbers (appendix C.3) --------------------------------------------------------
    primary_k: int = Field(ge=1, le=50, default=3, description="chunks in the primary retrieval")
    primary_granularity: int = Field(
        ge=8, le=4096, default=150, description="tokens per chunk in the primary retrieval"
    )
    factoid_k: int = Field(ge=1, le=50, default=5, description="chunks for factoid questions (extractive, arithmetic)")
    contextual_k: int = Field(ge=1, le=50, default=8, description="chunks for contextual questions (summarizing)")
    base_granularity: int = Field(ge=8, le=4096, default=150, description="chunk tokens when evidence is present")
    absent_factoid_granularity: int = Field(
        ge=8, le=4096, default=256, description="chunk tokens, evidence absent, factoid"
    )
    absent_contextual_granularity: int = Field(
        ge=8, le=4096, default=400, description="chunk tokens, evidence absent, contextual"
    )
    fusion_depth: int = Field(ge=1, le=200, default=20, description="each retriever's top-N before min-max fusion")
    preferred_weight: float = Field(
        ge=0, le=100, default=3.0, description="fusion weight of the preferred pattern (3:2)"
    )
    other_weight: float = Field(ge=0, le=100, default=2.0, description="fusion weight of the other pattern")
    sub_question_k: int = Field(ge=1, le=50, default=3, description="chunks per sub-question (split-aggregate)")
    hop_k: int = Field(ge=1, le=50, default=3, description="chunks per step-wise hop")
    max_hops: int = Field(ge=1, le=8, default=4, description="most step-wise reasoning rounds")
    max_sub_questions: int = Field(ge=1, le=10, default=5, description="most sub-questions kept from the splitter")
    extension_tokens: int = Field(ge=0, le=1024, default=64, description="context extension each side (arithmetic)")
    paragraph_cap_tokens: int = Field(
        ge=1, le=100_000, default=3000, description="token cap of source paragraphs for the extractor"
    )
    lc_top_chunks: int = Field(
        ge=1, le=2000, default=200, description="chunks kept when the document exceeds the window"
    )

    # -- what a question may spend (bench/evidence_budget.py, evals/README.md's per-route table) ------------
    question_budget: int = Field(
        ge=0,
        le=10_000_000,
        default_factory=_env_int("LONGQA_QUESTION_BUDGET", 1900, lowest=0),
        description="input tokens all model calls of one question may spend together, retries included "
        "(LONGQA_QUESTION_BUDGET; adaptive strategies; 0 = no limit). The plan sizes every route to fit it; "
        "each prompt is cut to what is left; a question that cannot be answered within it says so",
    )
    filter_mode: Literal["joint", "per-chunk"] = Field(
        default="joint",
        description="the CoT-guided filter of the adaptive strategies: 'joint' = one structured call writes the "
        "thought process and lists the passages to cite; 'per-chunk' = LongRAG's CoT call, then one call per passage",
    )

    # -- what the reader is shown (measured in bench/evidence_budget.py; OkraLong's k via selection="k") ----
    selection: Literal["budget", "k"] = Field(
        default="budget",
        description="'budget': the best chunks that fit evidence_budget tokens (adaptive strategies); "
        "'k': OkraLong's fixed k per question type (factoid_k, contextual_k, sub_question_k, hop_k)",
    )
    evidence_budget: int = Field(
        ge=1,
        le=100_000,
        default=900,
        description="evidence tokens for a factoid question (selection=budget; measured in bench/evidence_budget.py); "
        "a model's route may get less, to fit question_budget",
    )
    contextual_budget: int = Field(
        ge=1,
        le=100_000,
        default=2950,
        description="evidence tokens for a contextual (summarizing) question (selection=budget)",
    )
    bridge_seeds: int = Field(
        ge=0,
        le=10,
        default=2,
        description="LLM-free bridge expansion in direct retrieval: search again with the question plus each of "
        "this many best chunks (0 = off)",
    )
    bridge_per_seed: int = Field(ge=0, le=10, default=2, description="new chunks kept per bridge search")
    bridge_share: float = Field(
        ge=0, le=1, default=0.45, description="share of the evidence budget kept for bridge chunks (measured)"
    )
    bridge_query: Literal["names", "text"] = Field(
        default="names",
        description="a bridge search's query: the question plus the proper names its seed chunk says that the "
        "question does not ('names'), or plus the seed's whole text ('text'; measured in bench/README.md)",
    )
    heading_links: bool = Field(
        default=True,
        description="with a budget: chunks whose heading (a title line) the question names lead the ranking, and "
        "chunks whose heading a bridge seed names lead its bridge search (retrieval/links.py; measured)",
    )
    precision: list[Literal["boilerplate", "redundant", "gap", "sentences"]] = Field(
        default_factory=list,
        description="the precision stage after retrieval (retrieval/precision.py; a list, or comma-separated): "
        "'boilerplate' drops table-of-contents / page-number chunks, 'redundant' a chunk whose words a better one "
        "holds, 'gap' chunks scoring under precision_gap x the best, 'sentences' the sentences of a passage that "
        "share no word with its query (the budget-selected evidence, adaptive strategies). Off by default: none "
        "helped at the same words on the measured sets (bench/README.md)",
    )
    precision_gap: float = Field(
        ge=0, le=1, default=0.5, description="with 'gap' in precision: keep chunks scoring at least this x the best"
    )
    chunking: Literal["paragraph", "sentence"] = Field(
        default="paragraph",
        description="'paragraph': a paragraph that fits a chunk is never cut; 'sentence': sentences packed "
        "across paragraphs (the chunker before paragraph alignment)",
    )

    # -- where documents and indexes live -------------------------------------------------------
    home: Path = Field(default_factory=default_home, description="index directory (LONGQA_HOME)")
    chroma_host: str | None = Field(default_factory=_env("CHROMA_HOST"), description="Chroma server host")
    chroma_port: int = Field(
        default_factory=_env_int("CHROMA_PORT", 8000), ge=1, le=65535, description="Chroma server port"
    )
    postgres_uri: str | None = Field(
        default_factory=_env("LONGQA_POSTGRES_URI"),
        repr=False,  # it may hold a password
        description="PostgreSQL URI for conversation threads where longqa owns the checkpointer (CLI --thread, "
        "longqa serve); unset = SQLite under the index home",
    )
    max_words: int = Field(
        ge=1,
        default_factory=_env_int("LONGQA_MAX_WORDS", DEFAULT_MAX_WORDS),
        description="refuse documents longer than this many words",
    )
    read_timeout_s: float = Field(
        default_factory=_env_float("LONGQA_READ_TIMEOUT_S", DEFAULT_READ_TIMEOUT_S),
        gt=0,
        le=86_400,
        description="a file that takes longer to read is skipped with its reason (LONGQA_READ_TIMEOUT_S, seconds)",
    )
    read_memory_mb: int = Field(
        default_factory=_env_int("LONGQA_READ_MEMORY_MB", DEFAULT_READ_MEMORY_MB, lowest=64),
        ge=64,
        description="a file whose reading needs more memory is skipped with its reason (LONGQA_READ_MEMORY_MB)",
    )
    max_file_mb: float = Field(
        default_factory=_env_float("LONGQA_MAX_FILE_MB", DEFAULT_MAX_FILE_MB),
        gt=0,
        description="a larger file is skipped (found in a folder) or refused (named) before it is read "
        "(LONGQA_MAX_FILE_MB)",
    )
    inline_keep_s: float = Field(
        default_factory=_env_float("LONGQA_INLINE_KEEP_S", 86_400.0, lowest=0),
        ge=0,
        description="how long a text passed inline stays stored and indexed after its last use "
        "(LONGQA_INLINE_KEEP_S, seconds)",
    )
    documents_root: Path | None = Field(
        default_factory=_env("LONGQA_DOCUMENTS_ROOT"),
        description=("if set, document paths must lie under this directory; on a server, paths are refused without it"),
    )

    @field_validator("precision", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        """'a,b' (an environment variable, a --set) is the list ['a', 'b']; '' is none."""
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    def for_server(self) -> Settings:
        """Settings a caller of a server may choose, with the deployment's own values for the rest:
        a run's context must not pick the index directory, the Chroma server, the readable files,
        or where the server sends its API key."""
        deployment = Settings.model_construct(
            **{name: Settings.model_fields[name].get_default(call_default_factory=True) for name in SERVER_LOCKED}
        )
        return self.model_copy(update={name: getattr(deployment, name) for name in SERVER_LOCKED})

    def index_settings(self) -> IndexSettings:
        return IndexSettings(
            home=self.home,
            chroma_host=self.chroma_host,
            chroma_port=self.chroma_port,
            max_words=self.max_words,
            chunking=self.chunking,
        )

    def read_limits(self) -> ReadLimits:
        """The ceiling on reading one file."""
        return ReadLimits(timeout_s=self.read_timeout_s, memory_mb=self.read_memory_mb, max_bytes=self.max_file_bytes)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * (1 << 20))

    @property
    def has_llm(self) -> bool:
        return bool(self.model)

    @property
    def is_scripted(self) -> bool:
        return (self.model or "").startswith("scripted")


class _CallerContext(BaseModel):
    @model_validator(mode="before")
    @classmethod
    def _known_names(cls, data: object) -> object:
        if isinstance(data, dict):
            check_names(data, cls.model_fields, locked=SERVER_LOCKED)
        return data


# What a server's caller may set: every setting but the deployment's own. The server publishes this
# as the graph's context schema (LONGQA_SERVER=1); `settings_of` turns it into full Settings.
RunContext = create_model(
    "RunContext",
    __base__=_CallerContext,
    __doc__="Run settings a caller of the server may choose (the deployment fixes the rest).",
    **{name: (field.annotation, field) for name, field in Settings.model_fields.items() if name not in SERVER_LOCKED},
)


class InvalidSettings(SettingsError):
    """A run's context that names an unknown or locked setting, or a bad value."""


def settings_of(runtime: Runtime[Settings] | None) -> Settings:
    """The run's settings; on a server (LONGQA_SERVER=1) the deployment keeps its own index
    location, Chroma server, documents root, base URL and key variable whatever the caller sends."""
    context = getattr(runtime, "context", None)
    if running_as_server() and isinstance(context, dict | RunContext):
        from longqa.contracts.ceilings import caller_context  # it builds on this module

        context = caller_context(context)  # the caller's values, within the deployment's ceilings
    elif isinstance(context, dict):  # a caller that bypassed the schema's coercion
        try:
            context = Settings(**context)
        except ValidationError as e:
            raise InvalidSettings(
                "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in e.errors())
            ) from None
    if isinstance(context, RunContext):
        context = Settings(**context.model_dump(exclude_unset=True))  # what the caller chose, the rest by default
    settings = context if isinstance(context, Settings) else Settings()
    return settings.for_server() if running_as_server() else settings
