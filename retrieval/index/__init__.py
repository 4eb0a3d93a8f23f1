"""Indexing: a `Document` in (read by `retrieval/read/`), chunks with their BM25 and vectors out.

Enters: documents and the index settings. Leaves: an `IndexStore` of chunked, embedded documents and
libraries (`library/`: a collection's versions, their manifest, the catalog that locks and publishes
them, the build queue several workers share) that search reads. `embed/` turns texts into vectors
(ONNX, sentence-transformers or an HTTP endpoint). Imports `read/` and what `retrieval/` shares, never
`search/`.
"""
