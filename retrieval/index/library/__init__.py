"""Libraries: a named collection of documents, built in parts and published as versions.

Enters: documents to add or remove. Leaves: a manifest naming a version's members, its BM25 and
vectors; the catalog (`catalog.py`: files, Chroma's records or PostgreSQL) is where a library is
locked and a version published, the build queue where several workers share one build."""
