"""How much inline text (`texts`) one run may bring: how many texts, how large each, how large all
together (the deployment's `max_inline_texts`, `max_inline_text_mb`, `max_inline_mb`; sizes counted
in characters, 1 MiB = 1,048,576). Each text becomes a stored document, a folder and an embedding
pass, so 20,000 tiny texts or one 14 MB "word" are refused before any of that starts: with 413 (too
large) or 422 (too many) by `longqa serve` and the LangGraph server's run guard, and as the run's
input error by the graph (services/inputs.py). The types are checked elsewhere: what is not a list of
strings is left to that check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from longqa.contracts.settings import Settings

TOO_LARGE, TOO_MANY = 413, 422


@dataclass(frozen=True)
class TextsProblem:
    """Why a request's inline texts are refused, with the HTTP status a server answers."""

    status: int
    message: str


def texts_problem(value: Any, settings: Settings) -> TextsProblem | None:
    """Why `texts` (one string or a list of them) is over the deployment's limits, or None."""
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list):
        return None
    most, one = settings.max_inline_texts, _chars(settings.max_inline_text_mb)
    total_limit = _chars(settings.max_inline_mb)
    if len(texts) > most:
        return TextsProblem(
            TOO_MANY, f"'texts' holds {len(texts):,} texts, more than the {most:,} a run may pass (max_inline_texts)"
        )
    total = 0
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            continue
        if len(text) > one:
            return TextsProblem(
                TOO_LARGE,
                f"texts[{i}] is {len(text):,} characters, more than the {one:,} one text may hold "
                "(max_inline_text_mb): index a larger document as a file",
            )
        total += len(text)
    if total > total_limit:
        return TextsProblem(
            TOO_LARGE,
            f"'texts' hold {total:,} characters together, more than the {total_limit:,} a run may pass (max_inline_mb)",
        )
    return None


def run_texts_problem(body: Any) -> TextsProblem | None:
    """The same check on a LangGraph run body (or a batch of them): the texts in its `input`, against
    the deployment's limits read from this process's environment."""
    settings = Settings()
    for item in body if isinstance(body, list) else [body]:
        run_input = item.get("input") if isinstance(item, dict) else None
        if isinstance(run_input, dict) and (problem := texts_problem(run_input.get("texts"), settings)):
            return problem
    return None


def _chars(mb: float) -> int:
    return int(mb * (1 << 20))
