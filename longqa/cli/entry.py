"""`longqa` command line: index documents, search them, ask questions, evaluate strategies.

The entry point. Run as the `longqa` command, an `ask` is first offered to the warm server
(`longqa/cli/warm_client.py`, standard library only), which answers it from a process that has already
imported everything; otherwise (or when the server cannot be used) the command runs in this process
(`longqa/cli/commands.py`). A `longqa index` starts its home's warm server as it begins, so the server imports
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
        from longqa.cli.warm_client import answer, start_for_index

        code = answer(argv)
        if code is not None:
            return code
        start_for_index(argv)  # an index: the questions that follow it find a warm server
    from longqa.cli.commands import main as run_in_process

    return run_in_process(list(argv))


if __name__ == "__main__":
    sys.exit(main())
