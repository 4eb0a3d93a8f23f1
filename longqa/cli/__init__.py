"""The command line: `longqa index / search / ask / eval / keys / reembed / index-together / warm / serve`.

Enters: a command line (`main(argv)`), as the `longqa` console script or `python -m longqa.cli`.
Leaves: what the command prints, and its exit status.

`entry.py` is the console script's `main`: standard library only until it has asked the warm server
(`warm_client.py`, over `warm_protocol.py`, both standard library only) to answer an ask; otherwise the
command runs in this process (`commands.py`, the in-process CLI the warm server's workers run too),
over the runner (longqa/runner/: the graph run in-process). `longqa serve` and `longqa keys` reach the
HTTP room (longqa/http/). The warm server (longqa/warm/) sits above this room and imports it, never the
other way: the client starts it by module name and talks to it over a socket.
"""

from longqa.cli.entry import main

__all__ = ["main"]
