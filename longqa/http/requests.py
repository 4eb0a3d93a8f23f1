"""What a caller may send, as pydantic models with strict types: `longqa serve`'s /ask and /index
bodies, the LangGraph server's run inputs (both graphs), a run's `command.update` and a thread's
state updates. Both servers validate a body here before any grant check (longqa/http/access.py), so a
grant is always checked on what the run will read: `documents` is a list of path strings (or one
string), never an object whose keys would be read as paths; a path holds no NUL; a collection is
a name; chunk sizes are the deployment's (contracts/ceilings.py). Every refusal is one line naming
the field (422), echoing at most `SHOWN` characters of anything the caller sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from longqa.contracts.ceilings import Ceilings
from longqa.contracts.settings import STRATEGIES
from longqa.retrieval.index.library.manifest import name_problem

SHOWN = 80  # characters of a caller's value or name an error echoes
MAX_PATHS = 1000  # documents, include or exclude entries in one request
MAX_PATH_CHARS = 4096
MAX_GRANULARITIES = 3  # as the index graph allows (nodes/index_documents.py)


class RequestError(ValueError):
    """A request body that does not match its schema: refused with 422 before anything runs."""

    status = 422


def shown(value: object) -> str:
    """A caller's value as an error may echo it: repr, cut to `SHOWN` characters."""
    text = repr(value) if isinstance(value, str) else type(value).__name__
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _strings(name: str, value: Any, *, items: int = MAX_PATHS, chars: int | None = MAX_PATH_CHARS) -> list[str] | None:
    """A field of strings: one string, or a list of them (no object, no nesting, no NUL, none empty)."""
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list):
        raise ValueError(f"'{name}' must be a list of strings (got {type(value).__name__})")
    if len(values) > items:
        raise ValueError(f"'{name}' holds {len(values):,} entries; at most {items:,}")
    for i, item in enumerate(values):
        if not isinstance(item, str):
            raise ValueError(f"{name}[{i}] must be a string (got {type(item).__name__})")
        if chars is not None and not item:
            raise ValueError(f"{name}[{i}] is empty")
        if chars is not None and "\x00" in item:
            raise ValueError(f"{name}[{i}] holds a NUL character")
        if chars is not None and any(_not_a_name_surrogate(ch) for ch in item):
            raise ValueError(f"{name}[{i}] holds a lone surrogate that no file name holds ({_first_surrogate(item)})")
        if chars is not None and len(item) > chars:
            raise ValueError(f"{name}[{i}] is {len(item):,} characters; at most {chars:,}")
    return values


def _not_a_name_surrogate(ch: str) -> bool:
    """A lone surrogate no file name decodes to: a name's undecodable bytes are \\udc80-\\udcff (surrogateescape),
    which a caller may send for a file whose name is not UTF-8; any other (seen: "\\ud800") names nothing."""
    return "\ud800" <= ch <= "\udfff" and not "\udc80" <= ch <= "\udcff"


def _first_surrogate(item: str) -> str:
    return next(f"\\u{ord(ch):04x}" for ch in item if _not_a_name_surrogate(ch))


def paths_of(value: Any) -> list[str]:
    """`documents` as the list of paths it names (none for None); RequestError for any other shape."""
    try:
        return _strings("documents", value) or []
    except ValueError as e:
        raise RequestError(str(e)) from None


class _Body(BaseModel):
    """The fields every request that reads documents shares."""

    model_config = ConfigDict(extra="forbid")

    documents: list[str] | None = None
    include: list[str] | None = None
    exclude: list[str] | None = None
    texts: list[str] | None = None  # their count and size are services/text_limits.py's
    collection: str | None = None

    @field_validator("documents", "include", "exclude", mode="before")
    @classmethod
    def _paths(cls, value: Any, info) -> list[str] | None:
        return _strings(info.field_name, value)

    @field_validator("texts", mode="before")
    @classmethod
    def _texts(cls, value: Any) -> list[str] | None:
        return _strings("texts", value, items=10**9, chars=None)

    @field_validator("collection", mode="before")
    @classmethod
    def _collection(cls, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ValueError(f"'collection' must be a name (got {type(value).__name__})")
        if problem := name_problem(value):
            raise ValueError(problem)
        return value


class _Context(BaseModel):
    context: Any = None  # its shape, names and values are contracts/ceilings.py's to check, in its words


class AskRequest(_Body, _Context):
    """`POST /ask` on `longqa serve`."""

    question: str | None = None
    thread_id: str | None = None

    @field_validator("question", "thread_id", mode="before")
    @classmethod
    def _text(cls, value: Any, info) -> str | None:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"'{info.field_name}' must be a string (got {type(value).__name__})")
        return value


class IndexInput(_Body):
    """The index graph's input on the LangGraph server."""

    granularities: list[int] | None = None

    @field_validator("granularities", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> list[int] | None:
        if value is None or value == []:
            return None
        ok = isinstance(value, list) and all(isinstance(g, int) and not isinstance(g, bool) for g in value)
        if not ok:
            raise ValueError("'granularities' must be a list of whole numbers (chunk sizes in tokens)")
        if len(set(value)) > MAX_GRANULARITIES:
            raise ValueError(f"at most {MAX_GRANULARITIES} granularities per run (got {len(set(value))})")
        return value


class IndexRequest(IndexInput, _Context):
    """`POST /index` on `longqa serve`."""


class QuestionInput(_Body):
    """The question graph's input on the LangGraph server (contracts/state.py `InputState`), and what a
    thread's state update or a run's `command.update` may set."""

    question: str | None = None
    messages: list[Any] | None = None  # chat messages: LangGraph's own schema checks each
    strategy: str | None = None  # one of STRATEGIES (seen: "bogus" ran, ungrounded, as an unknown plan)

    @field_validator("question", "strategy", mode="before")
    @classmethod
    def _text(cls, value: Any, info) -> str | None:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"'{info.field_name}' must be a string (got {type(value).__name__})")
        if info.field_name == "strategy" and value is not None and value not in STRATEGIES:
            raise ValueError(f"'strategy' must be one of {', '.join(STRATEGIES)} (got {value[:40]!r})")
        return value

    @field_validator("messages", mode="before")
    @classmethod
    def _messages(cls, value: Any) -> list | None:
        if value is not None and not isinstance(value, list | dict | str):
            raise ValueError(f"'messages' must be a list of messages (got {type(value).__name__})")
        return value if isinstance(value, list) or value is None else [value]


class AnyGraphInput(QuestionInput, IndexInput):
    """The input of an assistant an admin made, which may run either graph: every field of both."""


def parsed(model: type[BaseModel], body: Any, what: str = "the body") -> dict[str, Any]:
    """`body` validated by `model`, as a dict of the fields it sets; RequestError(422) naming the first
    problem otherwise (a field's name and at most `SHOWN` characters of the caller's value)."""
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise RequestError(f"{what} must be a JSON object (got {type(body).__name__})")
    try:
        return model.model_validate(dict(body)).model_dump(exclude_none=True)
    except ValidationError as e:
        raise RequestError(_first(e, what)) from None


def _first(e: ValidationError, what: str) -> str:
    error = e.errors(include_input=False, include_url=False)[0]
    place = ".".join(str(p)[:SHOWN] for p in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"unknown field {place!r} in {what}"
    message = str(error["msg"]).removeprefix("Value error, ")
    return message if message.startswith(("'", place.split(".")[0])) or not place else f"{place}: {message}"


def granularities_problem(sizes: list[int] | None, ceilings: Ceilings) -> str | None:
    """Why an index run's chunk sizes are not the deployment's, or None: the same sizes an ask may
    choose (`primary_granularity`, contracts/ceilings.py)."""
    outside = [g for g in sizes or [] if g not in ceilings.granularities]
    if not outside:
        return None
    allowed = ", ".join(map(str, sorted(ceilings.granularities)))
    return f"granularities: {outside[0]} is not offered; one of {allowed} on this server"
