"""The warm server: one process per user and index home that has already imported what a question needs,
and runs each `longqa` command it is handed in a forked child (issue #32).

Enters: an ask from `longqa` over a Unix socket (longqa/cli/warm_client.py and warm_protocol.py: the CLI's
side and the wire they share), with the client's three standard streams.
Leaves: the command's own output, written by the child to those streams, and its exit status.

It is the CLI's host, so it sits above the CLI's room and imports it (`commands.main`, the parser, the
protocol) and the runner (longqa/runner/); nothing below imports it: the CLI starts it by module name
(`python -m longqa.warm.server`). `server.py` accepts and forks, `worker.py` is what runs in the children,
`preload.py` what the server imports before and after it listens, `rehearsal.py` what a standby runs.
"""
