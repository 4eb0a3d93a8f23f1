"""The question graph run in a process that owns it: the room every other room of longqa/ stands on.

Enters: a question with its documents and resolved `Settings` (the CLI's ask, the warm server's
rehearsal), a thread's checkpointer asked for by `longqa serve`, or an agent's tool call.
Leaves: the graph's output face (`answer_fields`), the compiled graphs, the checkpointers threads persist
in (`threads.py`), the tool for chat agents (`agent_tool.py`).

It sits beside the graph (longqa/graph/), not in the CLI's room, because the CLI, the warm server and the
HTTP servers all run the graph through it; it imports only the layers below (graph, contracts) and no
room of longqa/, so every import of a room points down to it.
"""
