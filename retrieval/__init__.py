"""Retrieval engine: loading, chunking, the persisted hybrid index and the context processor.

Nothing here imports the graph or the nodes (see DESIGN.md: arrows point down only).
"""

from .config import IndexSettings
from .context import Passage, extend, merge_chunks, merge_passages, recover_tables, source_paragraphs
from .documents import Chunk, Document, Paragraph, ScoredChunk
from .loaders import DocumentError, document_from_text, load_document
from .search import Searcher, SearchMode, fuse, min_max
from .store import IndexStore

__all__ = [
    "Chunk",
    "Document",
    "DocumentError",
    "IndexSettings",
    "IndexStore",
    "Paragraph",
    "Passage",
    "ScoredChunk",
    "SearchMode",
    "Searcher",
    "document_from_text",
    "extend",
    "fuse",
    "load_document",
    "merge_chunks",
    "merge_passages",
    "min_max",
    "recover_tables",
    "source_paragraphs",
]
