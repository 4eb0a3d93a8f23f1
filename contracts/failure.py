"""One way to fail: `fail` is the update that ends a run, `ended` is what every router asks.

A node that cannot go on returns `fail(node, message, **its_other_fields)`; a node that raises is
turned into the same update by the node wrapper (graph/node.py). Either way the run has `status:
error`, the `error` that says why, and `failed` naming the node; every router sends it to
`respond` on its "failed" edge. No node writes these fields itself (tests/test_operators.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ended", "fail"]


def fail(node: str, message: str, **fields: Any) -> dict[str, Any]:
    """The update of `node` ending the run with `message` (also its trace line, unless `fields`
    carry their own `trace`), with the node's other `fields` (what it read, what it cites)."""
    return {"trace": [message], **fields, "status": "error", "error": message, "failed": node}


def ended(state: Mapping[str, Any]) -> bool:
    """A node failed (returned `fail` or raised): the run goes straight to `respond`."""
    return bool(state.get("failed"))
