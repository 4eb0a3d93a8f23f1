"""`longqa` command line: index documents, search them, ask questions, evaluate strategies.

The entry point. Run as the `longqa` command, an `ask` is first offered to the warm server
(`longqa/warm_client.py`, standard library only), which answers it from a process that has already
imported everything; otherwise (or when the server cannot be used) the command runs in this process
(`longqa/commands.py`). A `longqa index` starts its home's warm server as it begins, so the server imports
while the index reads and embeds, and the questions that follow find it ready.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run `longqa ARGV`. Without `argv` (this process is the `longqa` command) an ask goes through
    the warm server where it can; with `argv` (a caller's own process) everything runs in-process."""
    if argv is None:
        argv = sys.argv[1:]
        from longqa.warm_client import answer, start_for_index

        code = answer(argv)
        if code is not None:
            return code
        start_for_index(argv)  # an index: the questions that follow it find a warm server
    from longqa.commands import main as run_in_process

    return run_in_process(list(argv))


def __getattr__(name: str):
    """The in-process CLI's names (`build_parser`, the commands), for callers that import them from here.
    Not the import system's own questions (`__path__`, asked by the `longqa` script's `from longqa.cli
    import main`), which would import every command before the warm server is asked."""
    if name.startswith("__"):
        raise AttributeError(f"module 'longqa.cli' has no attribute '{name}'")
    from longqa import commands

    return getattr(commands, name)


if __name__ == "__main__":
    sys.exit(main())
