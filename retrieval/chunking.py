"""Token-aware, sentence-respecting chunking with character offsets and paragraph ids.

Sentences (and table rows) are the atoms: a chunk is a run of whole atoms whose tokens fit the
granularity. Only an atom longer than the granularity itself is cut, at token boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .documents import Chunk, Document
from .tokens import TokenCounter, default_counter, word_windows

# a sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace;
# line breaks inside a paragraph (list items, headings, table rows) always end an atom
_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]]*)\s+|\n+")


@dataclass(frozen=True, slots=True)
class Atom:
    start: int
    end: int
    paragraph_id: int


def sentence_atoms(document: Document) -> list[Atom]:
    """Sentences of prose paragraphs and rows of tables, as character spans."""
    atoms: list[Atom] = []
    text = document.text
    for p in document.paragraphs:
        pos = p.start
        body = text[p.start : p.end]
        splitter = re.finditer(r"\n+", body) if p.is_table else _SENTENCE_END.finditer(body)
        for m in splitter:
            closing = m.group(1) if m.re.groups else None  # closing quotes/brackets stay in the sentence
            end = p.start + m.start() + len(closing or "")
            if text[pos:end].strip():
                atoms.append(Atom(pos, end, p.id))
            pos = p.start + m.end()
        if text[pos : p.end].strip():
            atoms.append(Atom(pos, p.end, p.id))
    return atoms


def chunk_document(document: Document, granularity: int, counter: TokenCounter | None = None) -> list[Chunk]:
    """Pack whole sentences into chunks of at most `granularity` tokens."""
    if granularity < 8:
        raise ValueError(f"granularity must be at least 8 tokens, got {granularity}")
    counter = counter or default_counter()
    atoms = sentence_atoms(document)
    # count each atom with the whitespace before it: a chunk's text includes the breaks between its
    # atoms, and some tokenizers (tiktoken) count line breaks as tokens
    gap_starts = [a.start for a in atoms[:1]] + [a.end for a in atoms[:-1]]
    sizes = counter.count_many([document.text[g : a.end] for g, a in zip(gap_starts, atoms, strict=True)])
    spans: list[tuple[int, int, set[int]]] = []  # (start, end, paragraph ids) per chunk
    cur_start, cur_end, cur_tokens, cur_pids = -1, -1, 0, set()

    def flush() -> None:
        nonlocal cur_start, cur_tokens, cur_pids
        if cur_start >= 0:
            spans.append((cur_start, cur_end, cur_pids))
        cur_start, cur_tokens, cur_pids = -1, 0, set()

    for atom, size in zip(atoms, sizes, strict=True):
        if size > granularity:
            flush()
            for s, e in _split_long_atom(document.text, atom, granularity, counter):
                spans.append((s, e, {atom.paragraph_id}))
            continue
        if cur_tokens + size > granularity:
            flush()
        if cur_start < 0:
            cur_start = atom.start
        cur_end, cur_tokens = atom.end, cur_tokens + size
        cur_pids.add(atom.paragraph_id)
    flush()

    texts = [document.text[s:e] for s, e, _ in spans]
    counts = counter.count_many(texts)
    return [
        Chunk(doc_id=document.doc_id, index=i, start=s, end=e, paragraph_ids=sorted(pids), n_tokens=n, text=t)
        for i, ((s, e, pids), t, n) in enumerate(zip(spans, texts, counts, strict=True))
    ]


def _split_long_atom(text: str, atom: Atom, granularity: int, counter: TokenCounter) -> list[tuple[int, int]]:
    """Cut a sentence longer than the granularity at token boundaries (between words where it can)."""
    spans = counter.spans(text[atom.start : atom.end])
    pieces = []
    for window in word_windows(text[atom.start : atom.end], spans, granularity):
        s, e = atom.start + window[0][0], atom.start + window[-1][1]
        while s < e and text[s].isspace():
            s += 1
        if s < e:
            pieces.append((s, e))
    return pieces
