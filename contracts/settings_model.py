"""The settings' model: every field of a run, typed, with its default and description (`Settings`:
the deployment's, the research knobs and the run's, flat), what a server's caller may set
(`RunContext`), and the names' checks. Resolving a run's context into them is settings.py's (on a
server through contracts/ceilings.py, which builds on this module)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, create_model, model_validator

from longqa.retrieval import IndexSettings

from .deployment import DEPLOYMENT_FIELDS, DeploymentSettings
from .environment import SettingsError, env_choice, env_float, env_int, env_text
from .research import ResearchSettings

Strategy = Literal["rag", "lc", "self-route", "longrag", "longrag-ext", "longrag-fil", "adaptive", "adaptive-precise"]
STRATEGIES: tuple[str, ...] = Strategy.__args__


SHOWN_NAME = 80  # characters of an unknown setting's name an error echoes


class UnknownSetting(SettingsError):
    """A settings key that is not a field: named with the nearest valid one, never ignored."""


class InvalidSettings(SettingsError):
    """A run's context that names an unknown or locked setting, or a bad value."""


def check_names(names: Iterable[str], allowed: Iterable[str] | None = None, locked: Iterable[str] = ()) -> None:
    """Raise UnknownSetting for the first name that is not a settings field (or not in `allowed`);
    a `locked` name is refused as the deployment's."""
    valid = list(allowed if allowed is not None else Settings.model_fields)
    for name in names:
        if name in locked:
            raise UnknownSetting(f"setting {name!r} is fixed by the deployment; a run's context cannot change it")
        if name not in valid:
            shown = str(name)[:SHOWN_NAME] + ("..." if len(str(name)) > SHOWN_NAME else "")  # a caller's name, echoed
            close = difflib.get_close_matches(shown, valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownSetting(f"unknown setting {shown!r}{hint}")


class RunSettings(BaseModel):
    """What a caller chooses for one question: the model and how long and how much it may spend (each
    costly one within the deployment's ceilings on a server), and the strategy."""

    model: str | None = Field(
        default_factory=env_text("LONGQA_MODEL"),
        description=(
            "chat model as an init_chat_model string, e.g. 'openai:gpt-4o-mini'; 'scripted' selects the offline "
            "scripted test model (not a real LLM); unset = evidence-only (no LLM call, no answer)"
        ),
    )
    strategy: Strategy = Field(
        default_factory=env_choice("LONGQA_STRATEGY", "adaptive-precise", STRATEGIES),
        description="preset plan; adaptive ones use the analyzer + organizer",
    )
    temperature: float = Field(ge=0, le=2, default=0.0, description="sampling temperature")
    timeout_s: float = Field(
        gt=0,
        le=3600,
        default_factory=env_float("LONGQA_TIMEOUT_S", 60.0),
        description="per-call timeout in seconds (LONGQA_TIMEOUT_S); a timed-out call is not retried",
    )
    deadline_s: float = Field(
        default_factory=env_float("LONGQA_DEADLINE_S", 900.0),
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
        default_factory=env_int("LONGQA_CONTEXT_WINDOW", None),
        description="the model's context window in tokens; unset = what the server says (llama.cpp), else the "
        "model's own profile, else 32768",
    )
    question_budget: int = Field(
        ge=0,
        le=10_000_000,
        default_factory=env_int("LONGQA_QUESTION_BUDGET", 2270, lowest=0),
        description="input tokens all model calls of one question may spend together, retries included "
        "(LONGQA_QUESTION_BUDGET; adaptive strategies; 0 = no limit). The plan sizes every route to fit it; "
        "each prompt is cut to what is left; a question that cannot be answered within it says so",
    )
    max_answer_tokens: int = Field(
        ge=1, le=32768, default=384, description="most tokens the generator's answer may write"
    )

    @property
    def has_llm(self) -> bool:
        """A model is set (unset: evidence-only runs)."""
        return bool(self.model)

    @property
    def is_scripted(self) -> bool:
        """The offline scripted test model, not a real LLM."""
        return (self.model or "").startswith("scripted")

    @property
    def question_limit(self) -> int | None:
        """The question budget as a run carries it, from the plan to the ledger's totals: input tokens,
        None for no limit (the setting's 0)."""
        return self.question_budget or None


RUN_FIELDS: tuple[str, ...] = tuple(RunSettings.model_fields)
SERVER_LOCKED = DEPLOYMENT_FIELDS  # what a server's caller may not set


class Settings(DeploymentSettings, ResearchSettings, RunSettings):
    """A run's settings: the run's choices, the research knobs and the deployment, as one flat model."""

    @model_validator(mode="before")
    @classmethod
    def _known_names(cls, data: object) -> object:
        """A mistyped key ("modle") is an error naming the nearest field, never silently ignored."""
        if isinstance(data, dict):
            check_names(data, cls.model_fields)
        return data

    def index_settings(self) -> IndexSettings:
        """Where this run's index store lives and how it chunks."""
        return IndexSettings(
            home=self.home,
            chroma_host=self.chroma_host,
            chroma_port=self.chroma_port,
            max_words=self.max_words,
            chunking=self.chunking,
            embeddings=self.embeddings(),
        )


class _CallerContext(BaseModel):
    _settings: Settings | None = PrivateAttr(default=None)  # this run's, once resolved (`settings_of`)

    @model_validator(mode="before")
    @classmethod
    def _known_names(cls, data: object) -> object:
        if isinstance(data, dict):
            check_names(data, cls.model_fields, locked=SERVER_LOCKED)
        return data


# What a server's caller may set: the run and research parts, not the deployment's. The LangGraph
# server publishes this as the graph's context schema (graph/server.py); `settings_of` resolves it.
RunContext = create_model(
    "RunContext",
    __base__=_CallerContext,
    __doc__="Run settings a caller of the server may choose (the deployment fixes the rest).",
    **{name: (field.annotation, field) for name, field in Settings.model_fields.items() if name not in SERVER_LOCKED},
)
