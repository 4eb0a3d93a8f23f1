"""longqa: question answering over long documents (CLI, evaluation and benchmarks).

This folder holds the package's entry points in four rooms, each importing only the ones after it: the warm
server (`warm/`), the command line (`cli/`), the HTTP servers with their keys and auth (`http/`), and the
runner all three run the question graph through (`runner/`). ARCHITECTURE.md draws them."""

import os

# chromadb and LangSmith phone home unless told not to; this project runs offline by default
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LANGSMITH_TRACING", "false")
