"""longqa: question answering over long documents (CLI, evaluation and benchmarks)."""

import os

# chromadb and LangSmith phone home unless told not to; this project runs offline by default
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LANGSMITH_TRACING", "false")
