"""The document model shared by every retrieval step: text, paragraphs and chunks with offsets."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field


class Paragraph(BaseModel):
    """One block of the source text: a prose paragraph, a heading, or a whole table."""

    id: int
    start: int = Field(description="character offset of the first character in Document.text")
    end: int = Field(description="character offset one past the last character")
    is_table: bool = False


class Document(BaseModel):
    """A loaded document. `doc_id` is the SHA-256 of its text, so the same content is indexed once."""

    doc_id: str
    source: str = Field(description="where it came from: a path, or a label for text passed inline")
    text: str
    paragraphs: list[Paragraph]
    encoding: str = "utf-8"
    warnings: list[str] = Field(
        default_factory=list, description="what the reader could not read (charts, diagrams, ...): the text is partial"
    )
    ocr_pages: list[int] = Field(
        default_factory=list, description="the pages (1-based) whose text was read by OCR from an image"
    )

    def paragraph_text(self, paragraph: Paragraph) -> str:
        """The text of one of the document's paragraphs."""
        return self.text[paragraph.start : paragraph.end]

    @property
    def n_words(self) -> int:
        """Words in the document, split on white space."""
        return len(self.text.split())


class Chunk(BaseModel):
    """A retrieval unit. `text == document.text[start:end]` always holds."""

    doc_id: str
    index: int = Field(description="position of the chunk in its document at this granularity")
    start: int
    end: int
    paragraph_ids: list[int]
    n_tokens: int
    text: str

    @property
    def chunk_id(self) -> str:
        """A short id of the chunk: the start of its document's id and its index there."""
        return f"{self.doc_id[:16]}:{self.index}"


class ScoredChunk(BaseModel):
    """A chunk as returned by a search: the fused score and both component scores (raw, before
    normalisation; None when that retriever did not rank the chunk in its top `depth`)."""

    chunk: Chunk
    score: float
    dense_score: float | None = None
    bm25_score: float | None = None
    granularity: int = 0
    source: str = ""


def content_hash(text: str) -> str:
    """The SHA-256 hex digest of a text's UTF-8 bytes (a document's id)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
