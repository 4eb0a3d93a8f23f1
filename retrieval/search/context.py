"""OkraLong's context processor (appendix C.3) and LongRAG's chunk→paragraph mapping f_m.

Retrieved chunks keep their document positions, so the processor can merge neighbours into
continuous passages, extend a passage by N tokens on either side, put back the rest of a table
or of an announced list that a chunk cut in half, and map chunks to their whole source paragraphs under a token cap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from ..documents import Document, ScoredChunk
from ..tokens import TokenCounter, default_counter
from .lists import lists_near


class Passage(BaseModel):
    """A continuous span of one document, built from one or more retrieved chunks."""

    doc_id: str
    source: str
    start: int
    end: int
    text: str
    chunk_indexes: list[int]
    score: float = 0.0
    tables_recovered: int = 0

    def citation(self) -> str:
        """How the passage is cited: `source[start:end]`, character offsets into its document."""
        return f"{self.source}[{self.start}:{self.end}]"


def _passage(document: Document, start: int, end: int, chunk_indexes: list[int], score: float) -> Passage:
    return Passage(
        doc_id=document.doc_id,
        source=document.source,
        start=start,
        end=end,
        text=document.text[start:end],
        chunk_indexes=chunk_indexes,
        score=score,
    )


def merge_chunks(results: Iterable[ScoredChunk], documents: Mapping[str, Document]) -> list[Passage]:
    """Merge chunks that overlap or touch (only whitespace between them) into passages, ordered
    by document (in the order given) and position. A passage's score is its best chunk's."""
    return merge_passages(
        [_passage(documents[r.chunk.doc_id], r.chunk.start, r.chunk.end, [r.chunk.index], r.score) for r in results],
        documents,
    )


def merge_passages(passages: Iterable[Passage], documents: Mapping[str, Document]) -> list[Passage]:
    """Merge passages that overlap or touch, ordered by document (in the order given) and position."""
    order = {doc_id: i for i, doc_id in enumerate(documents)}
    merged: list[Passage] = []
    for p in sorted(passages, key=lambda p: (order.get(p.doc_id, len(order)), p.start, p.end)):
        last = merged[-1] if merged else None
        if last is not None and last.doc_id == p.doc_id and not documents[p.doc_id].text[last.end : p.start].strip():
            grown = _passage(
                documents[p.doc_id],
                last.start,
                max(last.end, p.end),
                sorted(set(last.chunk_indexes) | set(p.chunk_indexes)),
                max(last.score, p.score),
            )
            merged[-1] = grown.model_copy(update={"tables_recovered": last.tables_recovered + p.tables_recovered})
        else:
            merged.append(p)
    return merged


def extend(
    passage: Passage, document: Document, before: int, after: int, counter: TokenCounter | None = None
) -> Passage:
    """Grow a passage by about `before` tokens to the left and `after` to the right, snapped
    outward to whole words."""
    counter = counter or default_counter()
    text = document.text
    start, end = passage.start, passage.end
    if before > 0 and start > 0:
        window_start = max(0, start - before * 12)
        spans = counter.spans(text[window_start:start])
        if spans:
            start = window_start + spans[max(0, len(spans) - before)][0]
            while start > 0 and not text[start - 1].isspace():
                start -= 1
    if after > 0 and end < len(text):
        spans = counter.spans(text[end : end + after * 12])
        if spans:
            end = end + spans[min(after, len(spans)) - 1][1]
            while end < len(text) and not text[end].isspace():
                end += 1
    return passage.model_copy(update={"start": start, "end": end, "text": text[start:end]})


def recover_tables(
    passage: Passage, document: Document, max_tokens: int | None = None, counter: TokenCounter | None = None
) -> Passage:
    """If the passage cuts into a table (a paragraph marked is_table), grow it to the whole table,
    so a row is never shown without its header or its totals; unless the grown passage would pass
    `max_tokens` (a huge table stays cut rather than blow the plan's budget)."""
    start, end, recovered = passage.start, passage.end, 0
    for p in document.paragraphs:
        if p.is_table and p.start < end and p.end > start and (p.start < start or p.end > end):
            start, end, recovered = min(start, p.start), max(end, p.end), recovered + 1
    if not recovered:
        return passage
    recovered += passage.tables_recovered
    return _grown(passage, document, start, end, max_tokens, counter, tables_recovered=recovered)


def recover_lists(
    passage: Passage, document: Document, max_tokens: int | None = None, counter: TokenCounter | None = None
) -> Passage:
    """If the passage cuts into a list its document announces (its announcing sentence or any item: lists.py), grow it
    over the whole list, so "the following baselines:" is never shown with its first item only; unless the grown
    passage would pass `max_tokens`."""
    start, end = passage.start, passage.end
    for a, b in lists_near(document.text, passage.start, passage.end):
        if a < passage.end and b > passage.start and (a < start or b > end):
            start, end = min(start, a), max(end, b)
    if (start, end) == (passage.start, passage.end):
        return passage
    return _grown(passage, document, start, end, max_tokens, counter)


def _grown(
    passage: Passage,
    document: Document,
    start: int,
    end: int,
    max_tokens: int | None,
    counter: TokenCounter | None,
    **more: int,
) -> Passage:
    """The passage over document.text[start:end] (and `more` fields), or as it was where that would pass `max_tokens`:
    what a recovered table and a recovered list share."""
    if max_tokens is not None and (counter or default_counter()).count(document.text[start:end]) > max_tokens:
        return passage
    return passage.model_copy(update={"start": start, "end": end, "text": document.text[start:end], **more})


def source_paragraphs(
    results: Iterable[ScoredChunk],
    documents: Mapping[str, Document],
    max_tokens: int,
    counter: TokenCounter | None = None,
) -> list[Passage]:
    """LongRAG's f_m: map chunks (best first) to the whole paragraphs they overlap; take
    paragraphs in rank order while they fit `max_tokens`; return them in document order. A
    paragraph too long for the remaining budget is replaced by the chunk itself when that fits."""
    counter = counter or default_counter()
    chosen: dict[tuple[str, int, int], Passage] = {}
    used = 0
    for r in results:
        document = documents[r.chunk.doc_id]
        spans = [(p.start, p.end) for p in document.paragraphs if p.id in set(r.chunk.paragraph_ids)]
        spans = spans or [(r.chunk.start, r.chunk.end)]
        new = [
            (s, e)
            for s, e in spans
            if (document.doc_id, s, e) not in chosen and not _covered(chosen, document.doc_id, s, e)
        ]
        if not new:
            continue
        cost = counter.count_many([document.text[s:e] for s, e in new])
        if used + sum(cost) > max_tokens:
            if used + r.chunk.n_tokens > max_tokens or _covered(chosen, document.doc_id, r.chunk.start, r.chunk.end):
                continue
            new, cost = [(r.chunk.start, r.chunk.end)], [r.chunk.n_tokens]
        for (s, e), n in zip(new, cost, strict=True):
            chosen[(document.doc_id, s, e)] = _passage(document, s, e, [r.chunk.index], r.score)
            used += n
    order = {doc_id: i for i, doc_id in enumerate(documents)}
    passages: list[Passage] = []
    for p in sorted(chosen.values(), key=lambda p: (order.get(p.doc_id, len(order)), p.start)):
        last = passages[-1] if passages else None
        if last is not None and last.doc_id == p.doc_id and p.start < last.end:
            # a chunk taken in place of its paragraph can overlap a paragraph taken later: one span,
            # so no text is given twice (the union is shorter than the two, so the cap still holds)
            passages[-1] = _passage(
                documents[p.doc_id],
                last.start,
                max(last.end, p.end),
                sorted(set(last.chunk_indexes) | set(p.chunk_indexes)),
                max(last.score, p.score),
            )
        else:
            passages.append(p)
    return passages


def _covered(chosen: Mapping[tuple[str, int, int], Passage], doc_id: str, start: int, end: int) -> bool:
    return any(d == doc_id and s <= start and end <= e for d, s, e in chosen)
