"""Services the nodes use: which documents a run reads (`inputs`) and the process-wide caches of
index stores, libraries and searchers (`stores`)."""
