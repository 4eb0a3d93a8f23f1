"""The embedder's two refusals, importable without numpy (the CLI names them before any model loads)."""

from __future__ import annotations


class EmbedderMismatch(RuntimeError):
    """A library's vectors were made by another embedder than this process's: searching them with its
    vectors would rank noise. The message names both and how to re-embed (embedder_identity.py)."""


class EmbedderUnavailable(RuntimeError):
    """The embedding endpoint could not embed a batch (it kept failing, timed out, or answered
    vectors of the wrong shape): the message names the endpoint and the model."""
