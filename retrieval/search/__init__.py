"""Search: a question (or a sub-question) in, the passages it is answered from out.

Enters: a query, the index (`retrieval/index/`) and the search settings. Leaves: scored chunks,
fused (BM25 and dense), led by the labels and heading links the question names, and the evidence
budget's passages (merged, extended, tables put back together). Imports `index/` and `read/`; nothing
below imports it.
"""
