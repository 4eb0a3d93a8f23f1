"""What a server's caller may choose: every run setting of RunContext, checked as a value and against
the deployment's ceilings (`longqa serve` and the LangGraph server alike, and `settings_of` for a run
whose context reached the graph another way).

A caller may lower a setting that costs, never lift it or switch it off. A ceiling is the
deployment's own value (its environment: LONGQA_QUESTION_BUDGET, LONGQA_DEADLINE_S, LONGQA_TIMEOUT_S,
LONGQA_CONTEXT_WINDOW, ..., else the default), or what its `ceilings` (LONGQA_CEILINGS) raise it to, a JSON object such
as `{"question_budget": 4000, "factoid_k": 10, "granularities": [150, 256, 400, 512, 1024]}`. So
`question_budget: 0` ("no limit") is refused where the deployment has a budget. A chunk size costs
the other way (each new one indexes the whole collection again), so a caller picks one of the
deployment's (`granularities`). Models: the deployment's LONGQA_MODEL and its `offered_models`
(LONGQA_MODELS, comma-separated; unset model = evidence-only is always allowed). Every refusal is one line naming the
field, never pydantic's raw text."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from longqa.contracts.settings_model import (
    SERVER_LOCKED,
    InvalidSettings,
    RunContext,
    Settings,
    SettingsError,
    UnknownSetting,
    check_names,
)

# settings whose larger value costs more (tokens, calls, time): the caller may only lower them
CEILINGED = (
    "timeout_s",
    "deadline_s",
    "max_retries",
    "context_window",
    "analyze_max_tokens",
    "split_max_tokens",
    "reason_max_tokens",
    "cot_max_tokens",
    "filter_max_tokens",
    "extract_max_tokens",
    "max_answer_tokens",
    "long_context_max_tokens",
    "primary_k",
    "factoid_k",
    "contextual_k",
    "sub_question_k",
    "hop_k",
    "fusion_depth",
    "max_hops",
    "max_sub_questions",
    "extension_tokens",
    "paragraph_cap_tokens",
    "lc_top_chunks",
    "question_budget",
    "evidence_budget",
    "contextual_budget",
    "bridge_seeds",
    "bridge_per_seed",
)
GRANULARITY_FIELDS = (
    "primary_granularity",
    "base_granularity",
    "absent_factoid_granularity",
    "absent_contextual_granularity",
)
PRESET_GRANULARITIES = (256, 400, 512)  # the preset strategies' own chunk sizes (contracts/plan.py)
WINDOW_WITHOUT_SETTING = 32768  # the ceiling of context_window when the deployment names none (llm/models.py)
NO_LIMIT_MEANS_ZERO = ("question_budget",)  # 0 switches the limit off


class Ceilings(BaseModel):
    """The highest value of each costly setting, the chunk sizes and the models a caller may pick."""

    highest: dict[str, float]
    granularities: frozenset[int]
    models: frozenset[str]


def deployment_ceilings(deployment: Settings | None = None) -> Ceilings:
    """This deployment's ceilings (its settings, else the environment's); an unusable LONGQA_CEILINGS
    is a SettingsError."""
    deployment = deployment or Settings()
    highest: dict[str, float] = {}
    for name in CEILINGED:
        value = getattr(deployment, name)
        if name == "context_window" and value is None:
            value = WINDOW_WITHOUT_SETTING
        if not (name in NO_LIMIT_MEANS_ZERO and value == 0):  # the deployment itself set no limit
            highest[name] = value
    granularities = {getattr(deployment, name) for name in GRANULARITY_FIELDS} | set(PRESET_GRANULARITIES)
    raised = _raised_ceilings(deployment.ceilings)
    for name, value in raised.items():
        if name == "granularities":
            granularities |= set(value)
        elif name in NO_LIMIT_MEANS_ZERO and value == 0:
            highest.pop(name, None)
        elif name in highest and value < highest[name]:  # the deployment's own value would be over it
            raise SettingsError(
                f"LONGQA_CEILINGS: {name} {value:g} is below the deployment's own value {highest[name]:g}; "
                "a ceiling only raises what a caller may choose (lower the deployment's value instead)"
            )
        else:
            highest[name] = value
    models = set(deployment.offered_models)
    if deployment.model:
        models.add(deployment.model)
    return Ceilings(highest=highest, granularities=frozenset(granularities), models=frozenset(models))


def _raised_ceilings(raised: dict[str, Any]) -> dict[str, Any]:
    """The deployment's raised ceilings, each checked as a value of its setting."""
    for name, value in raised.items():
        if name == "granularities":
            if not isinstance(value, list) or not all(isinstance(g, int) and 8 <= g <= 4096 for g in value):
                raise SettingsError("LONGQA_CEILINGS: granularities must be a list of whole numbers 8-4096")
            continue
        if name not in CEILINGED:
            raise SettingsError(f"LONGQA_CEILINGS: {name!r} has no ceiling; settings with one: {', '.join(CEILINGED)}")
        try:  # the ceiling must itself be a value the setting takes
            RunContext(**{name: value})
        except ValidationError as e:
            raise SettingsError(f"LONGQA_CEILINGS: {_problem(e.errors()[0], name)}") from None
    return raised


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _problem(error: Mapping[str, Any], field: str | None = None) -> str:
    """One pydantic error as `field: what is wrong (got value)`."""
    where = field or ".".join(str(part) for part in error.get("loc", ())) or "context"
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if error.get("type") in ("model_type", "dict_type"):
        return f"{where}: must be an object of run settings (got {_shown(error.get('input'))})"
    return f"{where}: {message[:200]} (got {_shown(error.get('input'))})"


def _numeric(name: str) -> bool:
    """Whether a run setting takes a number (and no true/false)."""
    field = RunContext.model_fields.get(name)
    return field is not None and _takes_number(field.annotation)


def _takes_number(annotation: Any) -> bool:
    """Whether a type is, or is a union holding, int or float and no bool (a Literal's values are no type: seen,
    reading the type's text, `Literal['joint', 'per-chunk']` counted as a number for its "int")."""
    if annotation is bool or get_origin(annotation) is Literal:
        return False
    if annotation in (int, float):
        return True
    members = get_args(annotation)
    return bool(members) and bool not in members and any(_takes_number(m) for m in members)


def caller_context(context: Any, ceilings: Ceilings | None = None) -> RunContext:
    """A caller's run context as RunContext, or InvalidSettings naming the first field that is
    unknown, fixed by the deployment, not a valid value, or over its ceiling."""
    if context is None:
        context = {}
    if isinstance(context, RunContext):
        chosen = context
    else:
        if not isinstance(context, Mapping):
            raise InvalidSettings(f"context: must be an object of run settings (got {_shown(context)})")
        try:
            check_names(context, RunContext.model_fields, locked=SERVER_LOCKED)
        except UnknownSetting as e:
            raise InvalidSettings(str(e)) from None
        for name, value in context.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidSettings(f"{name}: must be a finite number (got {value!r})")
            if isinstance(value, bool) and _numeric(name):  # seen: "question_budget": true ran as a budget of 1
                raise InvalidSettings(f"{name}: must be a number (got {str(value).lower()})")
        try:
            chosen = RunContext(**context)
        except ValidationError as e:
            raise InvalidSettings("; ".join(_problem(err) for err in e.errors()[:3])) from None
    over_ceiling(chosen, ceilings or deployment_ceilings())
    return chosen


def over_ceiling(chosen: BaseModel, ceilings: Ceilings) -> None:
    """InvalidSettings for the first setting the caller chose above what the deployment allows."""
    for name in sorted(chosen.model_fields_set):
        value = getattr(chosen, name)
        if name in ceilings.highest and value is not None:
            top = ceilings.highest[name]
            if name in NO_LIMIT_MEANS_ZERO and value == 0:
                raise InvalidSettings(f"{name}: 0 (no limit) is not allowed on this server; at most {top:g}")
            if value > top:
                raise InvalidSettings(f"{name}: at most {top:g} on this server (got {_shown(value)})")
        elif name in GRANULARITY_FIELDS and value not in ceilings.granularities:
            sizes = ", ".join(map(str, sorted(ceilings.granularities)))
            raise InvalidSettings(f"{name}: one of {sizes} on this server (got {_shown(value)})")
        elif name == "model" and value and value not in ceilings.models:
            offered = ", ".join(sorted(ceilings.models)) or "none: evidence-only runs"
            raise InvalidSettings(f"model: {_shown(value)} is not offered by this server (offered: {offered})")
