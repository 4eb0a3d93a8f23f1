"""`longqa ask`'s answer block: the answer, the files newly skipped, each passage around the words that
answer with where it is, and the usage table (or the whole output as JSON). What the graph returns comes
from the runner (longqa/runner/ask.py)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from longqa.cli.console import excerpt

MIN_PASSAGE_WORDS = 4  # a shorter passage ("IBM.") is filler: not shown unless the answer cites it
MAX_SKIPS_SHOWN = 5
_WORD = re.compile(r"\w+")


def render(
    result: dict[str, Any],
    out: TextIO | None = None,
    question: str = "",
    new_skipped: Sequence[str] | None = None,
    quiet: bool = False,
) -> None:
    """The answer block: the answer, the files newly skipped (`new_skipped`; None: all of them), each passage
    around the sentence that answers (else the one that best matches `question`) with where it is, and the usage
    table. `quiet`: the answer (or the evidence, without a model) and its passages only. `out`: default, the
    stdout of the moment (not of the import: a test's capture, a warm worker's redirected stream)."""
    out = out or sys.stdout
    status = result.get("status")
    if not quiet:
        print(file=out)
    if status == "evidence-only":
        if not quiet:
            print(
                "No LLM configured: evidence only (set LONGQA_MODEL, e.g. openai:gpt-4o-mini, to get an answer).",
                file=out,
            )
    elif status == "error":  # on stderr where the answer would go to stdout: a script reading stdout gets no answer
        print(f"Error: {result.get('error')}", file=sys.stderr if out is sys.stdout else out)
    else:
        label = f" [{result['model']}]" if result.get("model") else ""
        print(f"Answer{label}: {result.get('answer')}", file=out)
    if not quiet:
        _render_skipped(result.get("skipped") or [], new_skipped, out)
    _render_passages(result, question, out, quiet)
    if not quiet:
        _render_usage(result, out)


def _render_passages(result: dict[str, Any], question: str, out: TextIO, quiet: bool) -> None:
    """Each passage (filler left out unless cited) with where it is, around the words that answer."""
    status = result.get("status")
    citations = result.get("citations") or []
    cited = set(re.findall(r"\[([A-Za-z]*\d+)\]", result.get("answer") or ""))
    shown = [c for c in citations if c["id"] in cited or len(_WORD.findall(c["text"])) >= MIN_PASSAGE_WORDS]
    answer = result.get("answer") if status == "answered" else None
    if shown:
        print(("" if quiet else "\n") + ("Sources:" if status != "evidence-only" else "Evidence:"), file=out)
        for c in shown:
            where = f"{c['source']}{_where(c)}{_section(c)} chars {c['start']}-{c['end']}"
            print(f"  [{c['id']}] {where}: {excerpt(c['text'], question, answer=answer)}", file=out)
    if len(shown) < len(citations) and not quiet:
        n = len(citations) - len(shown)
        print(f"  ({n} passage(s) of fewer than {MIN_PASSAGE_WORDS} words not shown; --json lists all)", file=out)


def _render_usage(result: dict[str, Any], out: TextIO) -> None:
    """The usage table: one row per model call, the totals and the question budget spent."""
    usage = result.get("usage") or []
    if not usage:
        return
    print(f"\n{'node':<16}{'input':>8}{'output':>8}{'seconds':>9}", file=out)
    for r in usage:
        flag = (f" ({r['outcome']})" if r["outcome"] not in ("ok", "truncated") else "") + (
            " (estimated)" if r["estimated"] else ""
        )
        print(f"{r['node']:<16}{r['input_tokens']:>8}{r['output_tokens']:>8}{r['seconds']:>9.2f}{flag}", file=out)
    t = result["totals"]
    print(
        f"{'total':<16}{t['input_tokens']:>8}{t['output_tokens']:>8}{t['seconds']:>9.2f}  "
        f"calls={t['calls']} cost(in+4*out)={t['cost']}",
        file=out,
    )
    if t.get("question_budget"):
        print(f"question budget: {t['input_tokens']:,} of {t['question_budget']:,} input tokens spent", file=out)


def _section(citation: dict[str, Any]) -> str:
    """The heading a passage lies under, when its document has one: ' § "4.2 Results"'."""
    return f' § "{citation["section"]}"' if citation.get("section") else ""


def _where(citation: dict[str, Any]) -> str:
    """A passage's page in a paged document, and that OCR read it: " page 3 (OCR)"."""
    page = f" page {citation['page']}" if citation.get("page") else ""
    return page + (" (OCR)" if citation.get("ocr") else "")


def _render_skipped(skipped: list[str], new: Sequence[str] | None, out: TextIO) -> None:
    new = skipped if new is None else list(new)
    if new:
        shown = "; ".join(new[:MAX_SKIPS_SHOWN])
        more = f"; and {len(new) - MAX_SKIPS_SHOWN} more (--json lists all)" if len(new) > MAX_SKIPS_SHOWN else ""
        print(f"Skipped {len(new)} {'new ' if len(new) < len(skipped) else ''}file(s): {shown}{more}", file=out)
    if len(skipped) > len(new):
        print(f"({len(skipped) - len(new)} file(s) skipped as before; --json lists all)", file=out)


def print_json(result: dict[str, Any], out: TextIO | None = None) -> None:
    """Write the whole question output as indented JSON (what `longqa ask --json` prints) to `out` (default: the
    stdout of the moment)."""
    out = out or sys.stdout
    json.dump(result, out, indent=1, default=str)
    print(file=out)
