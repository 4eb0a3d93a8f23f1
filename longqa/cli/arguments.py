"""Argument types and arguments shared by `longqa`'s subcommands (index, search, ask, eval, convert)."""

from __future__ import annotations

import argparse
import math

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


def granularity(text: str) -> int:
    """An argument type: a chunk size in tokens, at least 8."""
    value = positive_int(text)
    if value < 8:
        raise argparse.ArgumentTypeError(f"granularity must be at least 8 tokens (got {value})")
    return value


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
    return key.strip(), value.strip()
