"""Chat models: resolution by name, calls that leave a usage record, tolerant parsing, and the
offline scripted model used by tests (never a real LLM)."""
