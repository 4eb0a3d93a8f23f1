"""What a LangGraph server's caller may put into a thread, checked before any grant (longqa/http/auth.py,
longqa/http/state_guard.py): a run's `input` and its `command` (a state `update`, validated as an input;
`goto`, which would hand a node a task of the caller's making, is refused), and a thread's state
updates (`POST /threads/{id}/state`, a new thread's `supersteps`). Webhooks go only to the hosts the
operator lists in LONGQA_WEBHOOK_HOSTS (none by default), and LangGraph's own checks still apply."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel

from longqa.contracts.environment import env_list
from longqa.http.requests import AnyGraphInput, IndexInput, QuestionInput, RequestError, parsed, shown

_INPUTS: dict[str | None, type[BaseModel]] = {"ask": QuestionInput, "index": IndexInput, None: AnyGraphInput}


def _update(update: Any) -> Any:
    """A command's `update` as an object: LangGraph takes a list of [key, value] pairs too."""
    if isinstance(update, list):
        if not all(isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in update):
            raise RequestError("'command.update' must be an object or a list of [name, value] pairs")
        return dict(update)
    return update


def run_payloads(action: str | None, run_input: Any, command: Any) -> list[dict[str, Any]]:
    """What a run would read, one payload per source (its input, its command's update), each validated
    by its graph's input model (`action` 'ask', 'index', or None for an assistant that may run either)."""
    model = _INPUTS[action]
    payloads = [parsed(model, run_input, "the run's input")]
    if command is None:
        return payloads
    if not isinstance(command, dict):
        raise RequestError(f"'command' must be an object (got {type(command).__name__})")
    if command.get("goto"):
        raise RequestError("'command.goto' is not accepted on this server: start a run with an input")
    if command.get("update") is not None:
        payloads.append(parsed(model, _update(command["update"]), "the command's update"))
    return payloads


def state_payloads(path_is_create: bool, body: Any) -> list[dict[str, Any]]:
    """What a thread's state update would put in it: `values` of `POST /threads/{id}/state`, or each
    update of a new thread's `supersteps` (`POST /threads`)."""
    if not isinstance(body, dict):
        return []
    if not path_is_create:
        return [parsed(AnyGraphInput, _update(body.get("values")), "the state's values")]
    steps = body.get("supersteps") or []
    if not isinstance(steps, list):
        raise RequestError("'supersteps' must be a list")
    payloads = []
    for step in steps:
        for update in (step.get("updates") if isinstance(step, dict) else None) or []:
            if not isinstance(update, dict):
                raise RequestError("each superstep update must be an object")
            if update.get("command") is not None:
                payloads += run_payloads(None, None, update["command"])
            payloads.append(parsed(AnyGraphInput, _update(update.get("values")), "the state's values"))
    return payloads


def webhook_refusal(url: str) -> str | None:
    """Why a run's webhook is refused, or None when its host is one the operator allows
    (LONGQA_WEBHOOK_HOSTS, comma-separated host names; none by default: every webhook is refused)."""
    allowed = {h.lower() for h in env_list("LONGQA_WEBHOOK_HOSTS")()}
    if not allowed:
        return "webhooks are off on this server (its operator allows none: LONGQA_WEBHOOK_HOSTS)"
    try:
        parts = urlparse(url)
        scheme, host = parts.scheme, (parts.hostname or "").lower()
    except ValueError:
        scheme, host = "", ""
    if scheme not in ("https", "http") or host not in allowed:
        return f"webhook {shown(url)}: its host is not one this server's operator allows"
    return None
