"""Embedding: texts in, vectors out (the bundled MiniLM through ONNX or sentence-transformers, or a
deployment's HTTP endpoint), with the fingerprint a library records so another embedder is refused."""
