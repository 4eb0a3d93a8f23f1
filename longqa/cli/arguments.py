"""Argument types and arguments shared by `longqa`'s subcommands (index, search, ask, eval, convert)."""

from __future__ import annotations

import argparse
import math

from longqa.services.inputs import InputError

GRANULARITY_HELP = "chunk size in tokens (OkraLong uses 150, 256, 400; Std-RAG 512)"
ANALYZER_HELP = (
    "analyzer backend (default $LONGQA_ANALYZER or local): local = trained, no LLM "
    "call; llm = OkraLong table 8; auto = llm when a model is set"
)


def positive_int(text: str) -> int:
    """An argument type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number (got {text!r})") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def positive_float(text: str) -> float:
    """An argument type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number (got {text!r})") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number (got {text!r})")
    return value


MAX_GRANULARITY = 4096  # tokens: the largest chunk size a deployment's ceilings may name (contracts/ceilings.py)
MAX_INDEX_GRANULARITIES = 3  # chunk sizes one index run builds, as the servers allow (longqa/http/requests.py)


def granularity(text: str) -> int:
    """An argument type: a chunk size in tokens, 8 to 4,096."""
    value = positive_int(text)
    if not 8 <= value <= MAX_GRANULARITY:
        raise argparse.ArgumentTypeError(f"granularity must be 8 to {MAX_GRANULARITY:,} tokens (got {value:,})")
    return value


def index_granularities(sizes: list[int]) -> list[int]:
    """`index -g`'s sizes, each once, at most three (each one chunks and embeds the whole library again)."""
    distinct = list(dict.fromkeys(sizes))
    if len(distinct) > MAX_INDEX_GRANULARITIES:
        raise InputError(
            f"at most {MAX_INDEX_GRANULARITIES} granularities per index run (got {len(distinct)}: "
            f"{', '.join(map(str, distinct))}); index the others in another run"
        )
    return distinct


def weights(text: str) -> tuple[float, float]:
    """An argument type: the fusion weights `DENSE:BM25`, non-negative and not both zero."""
    try:
        dense, sparse = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"weights must look like DENSE:BM25, e.g. 3:2 (got {text!r})") from None
    if not (math.isfinite(dense) and math.isfinite(sparse)) or dense < 0 or sparse < 0 or dense + sparse == 0:
        raise argparse.ArgumentTypeError("weights must be non-negative and not both zero")
    return dense, sparse


def query(text: str) -> str:
    """An argument type: a search query that is not blank."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the query is empty")
    return text


def question_text(text: str) -> str:
    """An argument type: a question that is not blank (the graph's own message names its input fields)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the question is empty")
    return text


def add_model_arguments(parser: argparse.ArgumentParser, model_help: str, base_url_help: str) -> None:
    """--model, --base-url, --analyzer and --context-window: the model a run calls (ask and eval share them)."""
    parser.add_argument("--model", default=None, help=model_help)
    parser.add_argument("--base-url", default=None, help=base_url_help)
    parser.add_argument("--analyzer", choices=["auto", "llm", "local"], default=None, help=ANALYZER_HELP)
    parser.add_argument(
        "--context-window",
        type=positive_int,
        default=None,
        help="the model's context window in tokens (default: what the server says, else the model's profile)",
    )


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    """`--set FIELD=VALUE` (repeatable) into `overrides`; the caller checks the names."""
    parser.add_argument(
        "--set",
        dest="overrides",
        type=assignment,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any other setting, e.g. --set max_answer_tokens=128 (repeatable; an unknown name is an error)",
    )


def assignment(text: str) -> tuple[str, str]:
    """An argument type: `FIELD=VALUE` as a (field, value) pair, both stripped (the value may be empty)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE (got {text!r})")
    if value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):  # pydantic would say "less than or equal to"
        raise argparse.ArgumentTypeError(f"{key.strip()}: must be a finite number (got {value.strip()!r})")
    return key.strip(), value.strip()
