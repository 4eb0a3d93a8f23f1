"""Evaluation helpers: LongBench-style long contexts built from the shared QA data, and the
LongBench/SQuAD answer metrics. Nothing here imports the graph or the nodes."""
