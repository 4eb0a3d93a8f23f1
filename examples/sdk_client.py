"""Ask a running longqa server (`langgraph dev` or a LangGraph deployment) through the SDK.

    python examples/sdk_client.py http://127.0.0.1:8123 report.md "Who manages the Eastmoor terminal?"

The document path is resolved under the server's LONGQA_DOCUMENTS_ROOT. Extra run settings can be
passed as JSON in LONGQA_RUN_CONTEXT, e.g. '{"model": "openai:gpt-4o-mini", "strategy": "rag"}'.
"""

from __future__ import annotations

import json
import os
import sys

from langgraph_sdk import get_sync_client


def ask(url: str, documents: list[str], question: str, context: dict | None = None) -> dict:
    client = get_sync_client(url=url)
    thread = client.threads.create()
    final: dict = {}
    for part in client.runs.stream(
        thread["thread_id"],
        "longqa",
        input={"question": question, "documents": documents},
        context=context or {},
        stream_mode=["updates", "values"],
    ):
        if part.event == "updates":
            print("  ran:", ", ".join(part.data), file=sys.stderr)
        elif part.event == "values":
            final = part.data
    return final


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__)
        return 2
    context = json.loads(os.environ.get("LONGQA_RUN_CONTEXT", "{}"))
    result = ask(argv[0], argv[1:-1], argv[-1], context)
    print(f"status: {result.get('status')}\nanswer: {result.get('answer')}")
    for c in result.get("citations") or []:
        print(f"  [{c['id']}] {c['source']} chars {c['start']}-{c['end']}")
    return 0 if result.get("status") != "error" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
