"""The rehearsal: the warm server's standby child (longqa/warm/server.py) runs the last `longqa ask`
once more before the next one arrives, so that ask finds its library open, its vector index and BM25
loaded and the graph's first run behind it. A child forked for a question spends ~0.1 s on those
(issue #32, bench/README); a standby that rehearsed does not.

A rehearsal is the last ask's documents, collection and patterns with a fixed question, evidence only
(never a model call, whatever the ask's model), in no thread, and reading only: a library whose files
changed since it was indexed is left for the real ask to update (retrieval/index/library/reading_only.py). Its
output goes nowhere. Anything it cannot rehearse (another command, bad arguments, a failure) leaves
the standby as warm as it got; the real ask then runs as it would in a fresh child.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Sequence

QUESTION = "What does this document say?"  # any question: it is the loading that counts, never the answer


def rehearse(argv: Sequence[str], run: Callable[..., dict] | None = None) -> str:
    """Rehearse `longqa` arguments `argv` in this process (its working folder and environment are the
    ask's); return what happened, for the server's log: `rehearsed`, `skipped: ...` or `failed: ...`."""
    from longqa.cli import commands
    from longqa.retrieval.index.library.reading_only import reading_only

    quiet = io.StringIO()
    try:
        with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet):
            args = commands.build_parser().parse_args(list(argv))
    except SystemExit:
        return "skipped: arguments the CLI refuses"
    if getattr(args, "command", None) != "ask":
        return f"skipped: not an ask ({getattr(args, 'command', None)})"
    if run is None:
        from longqa.runner.ask import run_question as run
    try:
        settings = commands.ask_settings(args).model_copy(update={"model": None})
        with reading_only():
            result = run(args.paths, QUESTION, settings, thread=None, progress=None, scope=commands.scope_of(args))
    except Exception as e:  # noqa: BLE001 - a rehearsal never fails the standby; the real ask reports its own faults
        return f"failed: {type(e).__name__}: {str(e)[:200]}"
    if result.get("status") == "error":
        return f"failed: {str(result.get('error'))[:200]}"
    return "rehearsed"
