"""Token-aware chunking: exact offsets, order, sentence boundaries, paragraph ids, whole table rows,
and the over-long sentence path."""

from __future__ import annotations

import re

import pytest

from longqa.retrieval.documents import Chunk, Document
from longqa.retrieval.index.chunking import _units, chunk_document, is_heading, sentence_atoms
from longqa.retrieval.read.loaders import document_from_text

from .conftest import harbor_text

SENTENCE_END = (".", "!", "?", '"', "'", ")", "]")


def quoted_text() -> str:
    """Prose whose sentences end in closing quotes and brackets, plus a table of many rows."""
    prose = [
        'The pilot said "the swell is too high." Nobody boarded that night. Was the harbor closed? '
        'It was (for three days.) The harbor master wrote "reopen at dawn!" in the log.',
        "Storms are rarer in summer [see the appendix.] Ferries kept their timetable. "
        "The breakwater was repaired in April.",
    ]
    rows = "\n".join(f"| Berth {i} | {100 + 7 * i} tons | {i % 4} cranes |" for i in range(1, 21))
    table = "| Berth | Cargo | Cranes |\n|---|---|---|\n" + rows
    return "\n\n".join([harbor_text(10, with_table=False), *prose, table, *prose]) + "\n"


def overlapping_paragraphs(document: Document, chunk: Chunk) -> set[int]:
    return {p.id for p in document.paragraphs if p.start < chunk.end and p.end > chunk.start}


def within_one_atom(document: Document, chunk: Chunk) -> bool:
    return any(
        a.start <= chunk.start and chunk.end <= a.end and (a.start, a.end) != (chunk.start, chunk.end)
        for a in sentence_atoms(document)
    )


def ends_at_sentence_boundary(text: str, end: int) -> bool:
    return end == len(text) or text[end] == "\n" or (text[end - 1] in SENTENCE_END and text[end].isspace())


def check_invariants(document: Document, chunks: list[Chunk], granularity: int, counter) -> None:
    text = document.text
    assert chunks, "a non-empty document has chunks"
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert c.doc_id == document.doc_id
        assert c.text == text[c.start : c.end]
        assert c.text == c.text.strip(), "chunks start and end on text, not whitespace"
        assert c.n_tokens == counter.count(c.text)
        assert c.n_tokens <= granularity
        assert set(c.paragraph_ids) == overlapping_paragraphs(document, c)
        assert c.paragraph_ids == sorted(c.paragraph_ids)
        if not within_one_atom(document, c):
            assert ends_at_sentence_boundary(text, c.end), repr(text[c.end - 20 : c.end + 5])
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.end <= b.start, "in order, no overlap"
    # no text is lost between chunks: what no chunk covers is whitespace
    covered = [False] * len(text)
    for c in chunks:
        covered[c.start : c.end] = [True] * (c.end - c.start)
    lost = "".join(ch for ch, cov in zip(text, covered, strict=True) if not cov)
    assert not lost.strip(), f"text outside every chunk: {lost.strip()[:80]!r}"


@pytest.mark.parametrize("granularity", [150, 256, 400, 40, 12])
@pytest.mark.parametrize("align", ["paragraph", "sentence"])
def test_chunk_invariants(granularity, align, wordpiece):
    document = document_from_text(quoted_text(), source="quoted.md")
    chunks = chunk_document(document, granularity, wordpiece, align=align)
    check_invariants(document, chunks, granularity, wordpiece)
    if granularity <= 40:
        assert len(chunks) > 10
    atoms = sentence_atoms(document)
    units = _units(document)
    for a, b in zip(chunks, chunks[1:], strict=False):
        if within_one_atom(document, a) or within_one_atom(document, b):
            continue
        first_atom_of_b = next(x for x in atoms if x.start == b.start)
        if align == "sentence":  # packing is greedy: the next atom would not have fitted
            needed = wordpiece.count(document.text[first_atom_of_b.start : first_atom_of_b.end])
            assert a.n_tokens + needed > granularity
            continue
        unit = units[first_atom_of_b.paragraph_id]
        members = [p for p in document.paragraphs if units[p.id] == unit]
        starts_unit = first_atom_of_b.start == members[0].start
        if starts_unit:  # greedy per unit: the whole unit would not have fitted into the previous chunk
            whole = wordpiece.count(document.text[members[0].start : members[-1].end])
            assert a.n_tokens + whole > granularity
        else:  # inside a unit: only one too long for any chunk is cut
            assert wordpiece.count(document.text[members[0].start : members[-1].end]) > granularity


def test_a_paragraph_that_fits_is_never_cut_and_a_heading_stays_with_its_text(wordpiece):
    paragraphs = [
        f"## Mill {i}" if i % 3 == 0 else " ".join([f"The mill number {i} ground grain."] * (2 + i % 4))
        for i in range(30)
    ]
    document = document_from_text("\n\n".join(paragraphs), source="mills.md")
    for granularity in (40, 64, 150):
        sentence = chunk_document(document, granularity, wordpiece, align="sentence")
        aligned = chunk_document(document, granularity, wordpiece)
        check_invariants(document, aligned, granularity, wordpiece)
        for p in document.paragraphs:
            text = document.text[p.start : p.end]
            holders = [c for c in aligned if c.start < p.end and c.end > p.start]
            if wordpiece.count(text) <= granularity:
                assert len(holders) == 1, f"{text!r} cut at g={granularity}"
            if text.startswith("## "):  # the heading is in the chunk that holds the start of its text
                (holder,) = holders
                following = next(q for q in document.paragraphs if q.id == p.id + 1)
                assert holder.end > following.start, (granularity, text, holder.text)
        cut = [p for p in document.paragraphs if len([c for c in sentence if c.start < p.end and c.end > p.start]) > 1]
        assert cut, "the sentence packer does cut paragraphs here (the test would be vacuous otherwise)"


def test_heading_detection():
    assert is_heading("## Dredging") and is_heading("Marrowdeep (ship)") and is_heading("Annual report 2024")
    assert not is_heading("The harbor closed.") and not is_heading("line one\nline two") and not is_heading("")
    assert not is_heading("This sentence has no final stop but it runs on for many more words than a title would")


def test_unknown_alignment_is_refused(wordpiece):
    with pytest.raises(ValueError, match="align must be one of paragraph, sentence"):
        chunk_document(document_from_text("Some text."), 40, wordpiece, align="word")


def test_sentences_keep_closing_quotes_and_brackets(wordpiece):
    document = document_from_text('He said "stop the ships now." The harbor closed (see the notice.) Then rain.')
    assert [document.text[a.start : a.end] for a in sentence_atoms(document)] == [
        'He said "stop the ships now."',
        "The harbor closed (see the notice.)",
        "Then rain.",
    ]
    chunks = chunk_document(document, 10, wordpiece)
    assert [c.text for c in chunks] == [
        'He said "stop the ships now."',
        "The harbor closed (see the notice.)",
        "Then rain.",
    ]


def test_small_document_is_one_chunk(wordpiece):
    document = document_from_text("One short paragraph.\n\nAnother short one.")
    chunks = chunk_document(document, 150, wordpiece)
    assert len(chunks) == 1
    assert chunks[0].text == document.text
    assert chunks[0].paragraph_ids == [0, 1]


def test_table_rows_are_never_split(wordpiece):
    document = document_from_text(quoted_text())
    tables = [p for p in document.paragraphs if p.is_table]
    assert len(tables) == 1
    table = tables[0]
    rows = [
        (m.start() + table.start, m.end() + table.start) for m in re.finditer(r"[^\n]+", document.paragraph_text(table))
    ]
    assert len(rows) == 22
    assert max(wordpiece.count(document.text[s:e]) for s, e in rows) <= 20  # every row fits a chunk
    for granularity in (20, 40, 150):
        chunks = chunk_document(document, granularity, wordpiece)
        in_table = [c for c in chunks if table.id in c.paragraph_ids]
        if granularity < 150:
            assert len(in_table) > 1, "the table spans several chunks, so cuts fall inside it"
        for s, e in rows:
            for c in chunks:
                assert c.end <= s or c.start >= e or (c.start <= s and e <= c.end), (
                    f"g={granularity}: chunk {c.index} cuts row {document.text[s:e]!r}"
                )


def test_over_long_sentence_is_split_at_token_boundaries(wordpiece):
    words = " ".join(f"cargo{i % 10} vessel harbor" for i in range(60))
    long_sentence = f"The ledger lists {words} without a single full stop"
    text = f"A short opening sentence. {long_sentence}. Then a short closing sentence."
    document = document_from_text(text)
    assert wordpiece.count(long_sentence) > 3 * 40
    chunks = chunk_document(document, 40, wordpiece)
    check_invariants(document, chunks, 40, wordpiece)
    pieces = [c for c in chunks if within_one_atom(document, c)]
    assert len(pieces) >= 3
    # the pieces are consecutive, each cut between words, and together are the whole sentence
    assert " ".join(p.text for p in pieces).split() == f"{long_sentence}.".split()
    for p in pieces:
        assert p.start == 0 or text[p.start - 1].isspace()
        assert p.end == len(text) or text[p.end].isspace()
    assert chunks[0].text == "A short opening sentence."
    assert chunks[-1].text == "Then a short closing sentence."


def test_a_single_word_longer_than_the_granularity_is_cut_inside(wordpiece):
    word = "zqxjkvbwp" * 10  # 70 word pieces, no space (under the tokenizer's 100-character [UNK] limit)
    document = document_from_text(f"Before. {word} after.")
    assert wordpiece.count(word) == 70
    chunks = chunk_document(document, 8, wordpiece)
    assert all(c.text == document.text[c.start : c.end] for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == document.text.replace(" ", "")
    assert len(chunks) >= 70 // 8


class LineBreakCounter:
    """A stand-in tokenizer that, like tiktoken, makes a token of a paragraph break."""

    name = "words+breaks"
    _TOKEN = re.compile(r"\S+|\n\n")

    def spans(self, text):
        return [m.span() for m in self._TOKEN.finditer(text)]

    def count(self, text):
        return len(self.spans(text))

    def count_many(self, texts):
        return [self.count(t) for t in texts]


def test_breaks_between_paragraphs_count_toward_the_granularity():
    counter = LineBreakCounter()
    document = document_from_text("\n\n".join(["one two three four five"] * 6))
    chunks = chunk_document(document, 10, counter)
    assert all(c.n_tokens <= 10 for c in chunks), [c.n_tokens for c in chunks]
    assert all(c.n_tokens == counter.count(c.text) for c in chunks)


def test_granularity_too_small():
    with pytest.raises(ValueError, match="at least 8"):
        chunk_document(document_from_text("Some text."), 7)
