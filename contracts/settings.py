"""Every setting of a run, typed, with defaults and descriptions, in three parts: the deployment's
(`DeploymentSettings`, contracts/deployment.py: the operator's, fixed by the environment; a server's
caller cannot set them), the run's (`RunSettings`, settings_model.py: what a caller chooses for one question,
within the deployment's ceilings on a server) and the research knobs (`ResearchSettings`,
contracts/research.py: the papers' numbers, set by the strategy presets and `--set`). `Settings` is
all three, flat (`settings.question_budget`, `--set question_budget=...`, a context key).

A run's settings are resolved once (`resolve_settings`) and carried in LangGraph's runtime context
(`StateGraph(..., context_schema=Settings)`); a node reads them with `settings_of(runtime)`, which
costs nothing after the first read. Defaults come from the environment where a variable is named
(contracts/environment.py reads it), so a server is configured without code; a run's context
overrides the run and research parts. The fields themselves are contracts/settings_model.py's (this
module re-exports them); on a server a context is held to contracts/ceilings.py's ceilings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from .ceilings import caller_context
from .deployment import DEPLOYMENT_FIELDS, DeploymentSettings
from .environment import SettingsError, env_flag
from .research import RESEARCH_FIELDS, ResearchSettings
from .settings_model import (
    RUN_FIELDS,
    SERVER_LOCKED,
    STRATEGIES,
    InvalidSettings,
    RunContext,
    RunSettings,
    Settings,
    Strategy,
    UnknownSetting,
    _CallerContext,
    check_names,
)

if TYPE_CHECKING:  # an annotation only: `import longqa.cli` does not import langgraph (~1 s) before it needs it
    from langgraph.runtime import Runtime

__all__ = [
    "DEPLOYMENT_FIELDS",
    "RESEARCH_FIELDS",
    "RUN_FIELDS",
    "SERVER_LOCKED",
    "STRATEGIES",
    "DeploymentSettings",
    "InvalidSettings",
    "ResearchSettings",
    "RunContext",
    "RunSettings",
    "Settings",
    "SettingsError",
    "Strategy",
    "UnknownSetting",
    "check_names",
    "resolve_settings",
    "settings_of",
]


def _one_line(e: ValidationError) -> str:
    return "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in e.errors())


def resolve_settings(context: Settings | BaseModel | Mapping[str, Any] | None) -> Settings:
    """A run's context as its Settings, validated here and only here. Settings pass as they are (the
    caller resolved them: CLI, agent tool, evaluations, `longqa serve`). Anything else is a caller's
    choice: on a server (LONGQA_SERVER=1) checked as RunContext against the deployment's ceilings
    (contracts/ceilings.py), the deployment's part always its own; in process taken as it is."""
    if isinstance(context, Settings):
        return context
    if context is None:  # nothing chosen: the deployment's defaults, nothing to hold to a ceiling
        return Settings()
    if env_flag("LONGQA_SERVER")():
        values = caller_context(context).model_dump(exclude_unset=True)  # within the deployment's ceilings
    elif isinstance(context, BaseModel):
        values = context.model_dump(exclude_unset=True)
    else:
        values = dict(context or {})
    try:
        return Settings(**values)
    except ValidationError as e:
        raise InvalidSettings(_one_line(e)) from None


def settings_of(runtime: Runtime[Settings] | None) -> Settings:
    """The run's settings, read by every node: a `Settings` context as it is; a `RunContext` (the
    LangGraph server's) resolved at the first read and kept on it for the rest of the run; no context
    is the deployment's defaults, built at each read (a run given no context has no object to keep
    them on: the CLI, the agent tool, the evaluations and `longqa serve` always pass one)."""
    context = getattr(runtime, "context", None)
    if isinstance(context, Settings):
        return context
    if isinstance(context, _CallerContext):
        if context._settings is None:
            context._settings = resolve_settings(context)
        return context._settings
    return resolve_settings(context)
