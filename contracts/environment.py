"""Reading the environment for the run settings: each reader is a field's default factory
(`longqa.contracts.deployment`, `.settings`, `.research`) and names its variable when the value
cannot be used. With retrieval/environment.py (the engines' process-wide choices) and the few
reads tests/test_settings_parts.py allows and justifies, this is the only place longqa reads the
environment; nothing here writes to it."""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A setting that cannot be used: the message names it (the variable, the key) and why."""


def env_text(name: str, default: str | None = None, *alternatives: str) -> Callable[[], str | None]:
    """The variable's text (or the first alternative variable that is set), else `default`."""

    def read() -> str | None:
        for variable in (name, *alternatives):
            value = os.environ.get(variable, "").strip()
            if value:
                return value
        return default

    return read


def env_path(name: str) -> Callable[[], Path | None]:
    """The variable as a path (`~` expanded), else None."""

    def read() -> Path | None:
        value = os.environ.get(name, "").strip()
        return Path(value).expanduser() if value else None

    return read


def env_number(name: str, default: Any, kind: type, lowest: float, highest: float | None = None) -> Callable[[], Any]:
    """A whole or real number in [lowest, highest], else SettingsError naming the variable."""

    def read() -> Any:
        value = os.environ.get(name, "").strip()
        if not value:
            return default
        try:
            number = kind(value)
        except ValueError:
            raise SettingsError(f"{name}={value!r}: expected a {'whole ' if kind is int else ''}number") from None
        if highest is not None and not lowest <= number <= highest:
            raise SettingsError(f"{name}={value!r}: must be between {lowest:g} and {highest:g}")
        if not number >= lowest or not math.isfinite(number):
            raise SettingsError(f"{name}={value!r}: must be at least {lowest:g}")
        return number

    return read


def env_float(name: str, default: float, lowest: float = 0.001) -> Callable[[], float]:
    """A positive real number (at least `lowest`)."""
    return env_number(name, default, float, lowest)


def env_int(name: str, default: int | None, lowest: int = 1, highest: int | None = None) -> Callable[[], int | None]:
    """A whole number in [lowest, highest]."""
    return env_number(name, default, int, lowest, highest)


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> Callable[[], str]:
    """One of `choices`, else SettingsError naming the nearest."""

    def read() -> str:
        value = os.environ.get(name, "").strip() or default
        if value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SettingsError(f"{name}={value!r}: expected one of {', '.join(choices)}{hint}")
        return value

    return read


def env_flag(name: str) -> Callable[[], bool]:
    """True for 1, true or yes (any case); false when unset or anything else."""
    return lambda: os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def env_list(name: str) -> Callable[[], list[str]]:
    """A comma-separated list, blanks dropped."""
    return lambda: [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def env_json_object(name: str, example: str) -> Callable[[], dict[str, Any]]:
    """A JSON object (unset: {}), else SettingsError naming the variable and showing `example`."""

    def read() -> dict[str, Any]:
        text = os.environ.get(name, "").strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            raise SettingsError(f"{name}: expected a JSON object, e.g. {example!r}") from None
        if not isinstance(value, dict):
            raise SettingsError(f"{name}: expected a JSON object, e.g. {example!r}")
        return value

    return read
