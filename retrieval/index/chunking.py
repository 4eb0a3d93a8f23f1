"""Token-aware, sentence-respecting chunking with character offsets and paragraph ids.

Sentences (and table rows) are the atoms: a chunk is a run of whole atoms whose tokens fit the
granularity. Only an atom longer than the granularity itself is cut, at token boundaries.

Paragraphs are units too (`align="paragraph"`, the default): a paragraph that fits the granularity
is never cut between two chunks, and a heading counts as part of the paragraph it titles. Small
units still share a chunk while they fit whole; a unit longer than the granularity starts a chunk
of its own and is cut at sentence boundaries. `align="sentence"` packs sentences across paragraph
boundaries (the chunker before paragraph alignment was measured, bench/evidence_budget.py).

Linear and bounded on hostile text (issue 45): a run without whitespace longer than `LONG_RUN_CHARS`
is cut into atoms of that many characters, an atom longer than `MAX_ATOM_CHARS` is cut at its last
space within that many (else there), a chunk spans at most `MAX_CHUNK_CHARS`, and no tokenizer call
is given more than `MAX_GAP_CHARS` of the whitespace before an atom: so one 30 MB "word" costs time and
memory in proportion to its size, never a tokenizer's per-character tables over the whole of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from ..documents import Chunk, Document
from ..tokens import TokenCounter, default_counter, word_windows

# a sentence ends at . ! ? (optionally followed by closing quotes/brackets) before whitespace;
# line breaks inside a paragraph (list items, headings, table rows) always end an atom
_SENTENCE_END = re.compile(r"(?<=[.!?])([\"')\]]*)\s+|\n+")
LONG_RUN_CHARS = 256  # a run of non-space characters longer than this is cut into pieces this long
MAX_ATOM_CHARS = 1 << 16  # ~16k tokens of prose: past every granularity, so prose is cut here only if at all
MAX_CHUNK_CHARS = 1 << 16  # a chunk spans at most this many characters (runs of spaces count)
MAX_GAP_CHARS = 64  # of the whitespace before an atom, what is counted with it
# a run's start (after a space or at the start): each start scans its own run once, so finding them is linear
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{LONG_RUN_CHARS + 1},}}+")


@dataclass(frozen=True, slots=True)
class Atom:
    """The smallest span a chunk is cut from: a sentence of prose or a row of a table, in one paragraph."""

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
            atoms += _bounded_atoms(text, pos, end, p.id)
            pos = p.start + m.end()
        atoms += _bounded_atoms(text, pos, p.end, p.id)
    return atoms


def _bounded_atoms(text: str, start: int, end: int, paragraph_id: int) -> list[Atom]:
    """The span as one atom, or, when it is long, cut: each run without spaces longer than
    LONG_RUN_CHARS into pieces that long, the rest at spaces every MAX_ATOM_CHARS at most."""
    if end - start <= LONG_RUN_CHARS:
        return [Atom(start, end, paragraph_id)] if text[start:end].strip() else []
    spans: list[tuple[int, int]] = []
    pos = start
    for run in _LONG_RUN.finditer(text, start, end):
        spans += _cut_at_spaces(text, pos, run.start())
        spans += [(s, min(s + LONG_RUN_CHARS, run.end())) for s in range(run.start(), run.end(), LONG_RUN_CHARS)]
        pos = run.end()
    spans += _cut_at_spaces(text, pos, end)
    return [Atom(s, e, paragraph_id) for s, e in spans if text[s:e].strip()]


def _cut_at_spaces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) in pieces of at most MAX_ATOM_CHARS, each cut after the last space it holds."""
    pieces = []
    while end - start > MAX_ATOM_CHARS:
        limit = start + MAX_ATOM_CHARS
        cut = max(text.rfind(" ", start, limit), text.rfind("\n", start, limit), text.rfind("\t", start, limit))
        cut = cut + 1 if cut > start else limit
        pieces.append((start, cut))
        start = cut
    return [*pieces, (start, end)]


Align = Literal["paragraph", "sentence"]
ALIGNS: tuple[str, ...] = Align.__args__


def chunk_document(
    document: Document, granularity: int, counter: TokenCounter | None = None, align: Align = "paragraph"
) -> list[Chunk]:
    """Pack whole sentences into chunks of at most `granularity` tokens, never cutting a paragraph
    that fits (`align="paragraph"`)."""
    if align not in ALIGNS:
        raise ValueError(f"align must be one of {', '.join(ALIGNS)}, got {align!r}")
    if granularity < 8:
        raise ValueError(f"granularity must be at least 8 tokens, got {granularity}")
    counter = counter or default_counter()
    atoms = sentence_atoms(document)
    # count each atom with the whitespace before it: a chunk's text includes the breaks between its
    # atoms, and some tokenizers (tiktoken) count line breaks as tokens
    gap_starts = [a.start for a in atoms[:1]] + [max(a.end, b.start - MAX_GAP_CHARS) for a, b in pairwise(atoms)]
    sizes = counter.count_many([document.text[g : a.end] for g, a in zip(gap_starts, atoms, strict=True)])
    spans: list[tuple[int, int, set[int]]] = []  # (start, end, paragraph ids) per chunk
    cur_start, cur_end, cur_tokens, cur_pids = -1, -1, 0, set()

    def flush() -> None:
        nonlocal cur_start, cur_tokens, cur_pids
        if cur_start >= 0:
            spans.append((cur_start, cur_end, cur_pids))
        cur_start, cur_tokens, cur_pids = -1, 0, set()

    unit_of = _units(document)  # paragraph id -> its unit (a heading and the paragraph after it)
    unit_tokens: dict[int, int] = {}
    for atom, size in zip(atoms, sizes, strict=True):
        unit = unit_of[atom.paragraph_id]
        unit_tokens[unit] = unit_tokens.get(unit, 0) + size
    previous_unit = None
    for atom, size in zip(atoms, sizes, strict=True):
        unit = unit_of[atom.paragraph_id]
        if align == "paragraph" and unit != previous_unit:
            # a new unit: start a chunk unless the whole unit fits in this one
            if cur_tokens + unit_tokens[unit] > granularity:
                flush()
            previous_unit = unit
        if size > granularity:
            flush()
            for s, e in _split_long_atom(document.text, atom, granularity, counter):
                spans.append((s, e, {atom.paragraph_id}))
            continue
        if cur_tokens + size > granularity or (cur_start >= 0 and atom.end - cur_start > MAX_CHUNK_CHARS):
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


_HEADING_END = re.compile(r"[.!?;,]['\")\]]*$")


def is_heading(text: str) -> bool:
    """A one-line paragraph that titles what follows: a markdown heading, or a short line that does
    not end like a sentence."""
    text = text.strip()
    if not text or "\n" in text:
        return False
    return text.startswith("#") or (len(text.split()) <= 12 and not _HEADING_END.search(text))


def _units(document: Document) -> dict[int, int]:
    """Paragraph id -> unit id: a heading belongs to the paragraph after it, so alignment keeps a
    section's title with its text instead of with the end of the section before."""
    units: dict[int, int] = {}
    pending: list[int] = []  # headings waiting for the paragraph they title
    for p in document.paragraphs:
        if not p.is_table and is_heading(document.text[p.start : p.end]):
            pending.append(p.id)
            continue
        for h in pending:
            units[h] = p.id
        pending = []
        units[p.id] = p.id
    for h in pending:  # trailing headings: on their own
        units[h] = h
    return units


def _split_long_atom(text: str, atom: Atom, granularity: int, counter: TokenCounter) -> list[tuple[int, int]]:
    """Cut a sentence longer than the granularity at token boundaries (between words where it can);
    one token that counts past the granularity (a long unknown word) into equal pieces by characters."""
    spans = counter.spans(text[atom.start : atom.end])
    pieces = []
    for window in word_windows(text[atom.start : atom.end], spans, granularity):
        s, e = atom.start + window[0][0], atom.start + window[-1][1]
        while s < e and text[s].isspace():
            s += 1
        n = counter.count(text[s:e]) if len(window) == 1 and e - s > 1 else 0
        if n > granularity:
            step = -(-(e - s) // -(-n // granularity))
            pieces += [(i, min(i + step, e)) for i in range(s, e, step)]
        elif s < e:
            pieces.append((s, e))
    return pieces
