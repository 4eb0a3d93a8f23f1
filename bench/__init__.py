"""Benchmarks (retrieval quality, indexing speed, query latency); see bench/README.md."""
