"""Prompt templates. Where a seed paper gives a prompt, it is quoted verbatim (table cited)."""
