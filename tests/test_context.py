"""The context processor: merging neighbours, extending by N tokens, recovering cut tables and
LongRAG's chunk -> whole-paragraph mapping under a token cap."""

from __future__ import annotations

import pytest

from longqa.retrieval.documents import Chunk, Document, ScoredChunk
from longqa.retrieval.index.chunking import chunk_document
from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.context import Passage, extend, merge_chunks, recover_tables, source_paragraphs

# every word is a single word piece, so token counts are word counts
WORDS = (
    "ship port dock crane cargo tide quay pier mast deck hull sail anchor rope boat wave storm coast "
    "bay harbor river sea wind rain fog light bell flag net fish"
).split()


def sentence(i: int, n: int = 9) -> str:
    return " ".join(WORDS[(i + j) % len(WORDS)] for j in range(n)) + "."


def prose(first: int, sentences: int = 3) -> str:
    return " ".join(sentence(first + i) for i in range(sentences))


TABLE = (
    "| Berth | Tons | Cranes |\n|---|---|---|\n"
    + "\n".join(f"| {WORDS[i]} | {100 + i} | {i % 3} |" for i in range(8))
    + "\n| total | 828 | 7 |"
)


@pytest.fixture
def report() -> Document:
    text = "\n\n".join([prose(0), prose(3), TABLE, prose(6), prose(9), TABLE.replace("Berth", "Pier"), prose(12)])
    return document_from_text(text, source="report.md")


def scored(chunk: Chunk, score: float = 0.5, source: str = "report.md") -> ScoredChunk:
    return ScoredChunk(chunk=chunk, score=score, source=source)


def check_passage(p: Passage, document: Document) -> None:
    assert p.doc_id == document.doc_id and p.source == document.source
    assert p.text == document.text[p.start : p.end]


# -- merge_chunks -------------------------------------------------------------------------------------


def test_adjacent_chunks_merge_and_others_stay_apart(report, wordpiece):
    chunks = chunk_document(report, 20, wordpiece)
    assert len(chunks) > 8
    results = [scored(chunks[6], 0.2), scored(chunks[1], 0.9), scored(chunks[2], 0.4), scored(chunks[0], 0.1)]
    passages = merge_chunks(results, {report.doc_id: report})
    assert [(p.start, p.end) for p in passages] == [(chunks[0].start, chunks[2].end), (chunks[6].start, chunks[6].end)]
    assert [p.chunk_indexes for p in passages] == [[0, 1, 2], [6]]
    assert [p.score for p in passages] == [0.9, 0.2]  # a passage scores as its best chunk
    for p in passages:
        check_passage(p, report)
    assert passages[0].citation() == f"report.md[{chunks[0].start}:{chunks[2].end}]"


def test_overlapping_chunks_merge(report, wordpiece):
    small = chunk_document(report, 20, wordpiece)
    large = chunk_document(report, 60, wordpiece)
    a = large[1]
    b = next(c for c in small if a.start < c.start < a.end < c.end)  # starts inside a, ends after it
    passages = merge_chunks([scored(b, 0.3), scored(a, 0.6)], {report.doc_id: report})
    assert len(passages) == 1
    assert (passages[0].start, passages[0].end) == (a.start, b.end)
    assert passages[0].score == 0.6
    check_passage(passages[0], report)


def test_merge_keeps_the_order_of_documents_given(report, wordpiece):
    other = document_from_text(prose(20) + "\n\n" + prose(25), source="other.md")
    r_report = scored(chunk_document(report, 20, wordpiece)[3])
    r_other = scored(chunk_document(other, 20, wordpiece)[1], source="other.md")
    first_other = merge_chunks([r_report, r_other], {other.doc_id: other, report.doc_id: report})
    assert [p.source for p in first_other] == ["other.md", "report.md"]
    first_report = merge_chunks([r_other, r_report], {report.doc_id: report, other.doc_id: other})
    assert [p.source for p in first_report] == ["report.md", "other.md"]
    assert merge_chunks([], {report.doc_id: report}) == []


# -- extend -------------------------------------------------------------------------------------------


@pytest.fixture
def words_document() -> Document:
    return document_from_text(" ".join(WORDS[i % len(WORDS)] for i in range(300)))


def word_span(document: Document, first: int, last: int) -> Passage:
    """A passage of words first..last (inclusive) of a one-word-per-token document."""
    offsets, pos = [], 0
    for word in document.text.split(" "):
        offsets.append((pos, pos + len(word)))
        pos += len(word) + 1
    start, end = offsets[first][0], offsets[last][1]
    return Passage(
        doc_id=document.doc_id,
        source=document.source,
        start=start,
        end=end,
        text=document.text[start:end],
        chunk_indexes=[0],
    )


def test_extend_grows_by_n_tokens_each_side(words_document, wordpiece):
    passage = word_span(words_document, 100, 109)
    grown = extend(passage, words_document, 5, 7, wordpiece)
    text = words_document.text
    assert len(text[grown.start : passage.start].split()) == 5
    assert len(text[passage.end : grown.end].split()) == 7
    assert grown.text == text[grown.start : grown.end]
    assert grown.text.split()[0] == WORDS[95 % len(WORDS)]
    assert extend(passage, words_document, 0, 0, wordpiece) == passage


def test_extend_is_clamped_at_document_ends(words_document, wordpiece):
    text = words_document.text
    head = extend(word_span(words_document, 2, 4), words_document, 50, 1, wordpiece)
    assert head.start == 0
    tail = extend(word_span(words_document, 295, 297), words_document, 1, 50, wordpiece)
    assert tail.end == len(text)
    whole = extend(word_span(words_document, 0, 299), words_document, 10, 10, wordpiece)
    assert (whole.start, whole.end) == (0, len(text))


def test_extend_snaps_to_whole_words(wordpiece):
    long_words = "antidisestablishmentarianism photosynthesis ventriloquism"
    document = document_from_text(f"{long_words} middle part here {long_words}")
    start = document.text.index("middle")
    end = start + len("middle part here")
    passage = Passage(
        doc_id=document.doc_id,
        source=document.source,
        start=start,
        end=end,
        text=document.text[start:end],
        chunk_indexes=[0],
    )
    grown = extend(passage, document, 1, 1, wordpiece)  # one word piece lands inside a long word
    assert grown.text == "ventriloquism middle part here antidisestablishmentarianism"


# -- recover_tables -----------------------------------------------------------------------------------


def test_a_cut_table_is_recovered_whole(report, wordpiece):
    table = next(p for p in report.paragraphs if p.is_table)
    chunks = chunk_document(report, 20, wordpiece)
    inside = [c for c in chunks if table.start < c.start and c.end < table.end]
    assert inside, "a chunk holds rows from the middle of the table"
    [passage] = merge_chunks([scored(inside[0])], {report.doc_id: report})
    recovered = recover_tables(passage, report)
    assert (recovered.start, recovered.end) == (table.start, table.end)
    assert recovered.tables_recovered == 1
    assert recovered.text.startswith("| Berth |") and recovered.text.endswith("| total | 828 | 7 |")
    check_passage(recovered, report)


def test_recover_extends_only_the_cut_side(report):
    table = next(p for p in report.paragraphs if p.is_table)
    start = report.paragraphs[table.id - 1].start
    end = table.start + 30  # prose, then the table's first rows
    passage = Passage(
        doc_id=report.doc_id,
        source=report.source,
        start=start,
        end=end,
        text=report.text[start:end],
        chunk_indexes=[1, 2],
    )
    recovered = recover_tables(passage, report)
    assert (recovered.start, recovered.end, recovered.tables_recovered) == (start, table.end, 1)
    assert recovered.chunk_indexes == [1, 2]


def test_two_cut_tables_are_counted(report):
    first, second = [p for p in report.paragraphs if p.is_table]
    start, end = first.end - 10, second.start + 10
    passage = Passage(
        doc_id=report.doc_id, source=report.source, start=start, end=end, text=report.text[start:end], chunk_indexes=[0]
    )
    recovered = recover_tables(passage, report)
    assert (recovered.start, recovered.end, recovered.tables_recovered) == (first.start, second.end, 2)


def test_passages_that_do_not_cut_a_table_are_unchanged(report):
    table = next(p for p in report.paragraphs if p.is_table)
    prose_only = Passage(
        doc_id=report.doc_id,
        source=report.source,
        start=0,
        end=report.paragraphs[0].end,
        text=report.text[: report.paragraphs[0].end],
        chunk_indexes=[0],
    )
    whole = Passage(
        doc_id=report.doc_id,
        source=report.source,
        start=table.start - 5,
        end=table.end,
        text=report.text[table.start - 5 : table.end],
        chunk_indexes=[0],
    )
    assert recover_tables(prose_only, report) == prose_only
    assert recover_tables(whole, report) == whole
    assert recover_tables(whole, report).tables_recovered == 0


# -- source_paragraphs ---------------------------------------------------------------------------------


def paragraph_of(document: Document, chunk: Chunk):
    [pid] = chunk.paragraph_ids
    return document.paragraphs[pid]


def test_chunks_map_to_whole_paragraphs_in_document_order(report, wordpiece):
    chunks = chunk_document(report, 20, wordpiece)
    late = next(c for c in chunks if c.paragraph_ids == [6])
    early = next(c for c in chunks if c.paragraph_ids == [1])
    same_paragraph = next(c for c in chunks if c.paragraph_ids == [6] and c.index != late.index)
    results = [scored(late, 0.9), scored(early, 0.8), scored(same_paragraph, 0.7)]
    passages = source_paragraphs(results, {report.doc_id: report}, 1000, wordpiece)
    assert [(p.start, p.end) for p in passages] == [
        (report.paragraphs[1].start, report.paragraphs[1].end),
        (report.paragraphs[6].start, report.paragraphs[6].end),
    ]
    assert [p.chunk_indexes for p in passages] == [[early.index], [late.index]]
    for p in passages:
        check_passage(p, report)


def test_a_chunk_across_two_paragraphs_brings_both(report, wordpiece):
    chunks = chunk_document(report, 60, wordpiece)
    across = next(c for c in chunks if len(c.paragraph_ids) == 2)
    passages = source_paragraphs([scored(across)], {report.doc_id: report}, 1000, wordpiece)
    assert [p.text for p in passages] == [report.paragraph_text(report.paragraphs[i]) for i in across.paragraph_ids]


def test_token_cap_is_respected(report, wordpiece):
    chunks = chunk_document(report, 20, wordpiece)
    results = [scored(c, 1.0 - i / 100) for i, c in enumerate(reversed(chunks))]  # best = last chunk
    for cap in (35, 60, 100, 200):
        passages = source_paragraphs(results, {report.doc_id: report}, cap, wordpiece)
        assert passages
        assert sum(wordpiece.count(p.text) for p in passages) <= cap
        assert [p.start for p in passages] == sorted(p.start for p in passages)
        for a, b in zip(passages, passages[1:], strict=False):
            assert a.end <= b.start, "no text given twice"
    # the best-ranked paragraph (the last one) is always taken first when it fits
    assert source_paragraphs(results, {report.doc_id: report}, 35, wordpiece)[-1].end == len(report.text)


def test_paragraph_too_long_for_the_budget_falls_back_to_its_chunk(report, wordpiece):
    chunks = chunk_document(report, 12, wordpiece)
    chunk = next(c for c in chunks if c.paragraph_ids == [3])
    assert wordpiece.count(report.paragraph_text(report.paragraphs[3])) > 20 >= chunk.n_tokens
    [passage] = source_paragraphs([scored(chunk)], {report.doc_id: report}, 20, wordpiece)
    assert (passage.start, passage.end) == (chunk.start, chunk.end)
    assert source_paragraphs([scored(chunk)], {report.doc_id: report}, chunk.n_tokens - 1, wordpiece) == []


def test_a_chunk_taken_for_its_paragraphs_is_not_repeated_by_a_later_paragraph(wordpiece):
    p, q = prose(0), prose(10)
    document = document_from_text(f"{p}\n\n{q}")
    chunks = chunk_document(document, 20, wordpiece, align="sentence")  # a chunk across the two paragraphs
    across = next(c for c in chunks if c.paragraph_ids == [0, 1])
    in_p = next(c for c in chunks if c.paragraph_ids == [0])
    assert wordpiece.count(p) + wordpiece.count(q) > 55 >= across.n_tokens + wordpiece.count(p)
    passages = source_paragraphs([scored(across, 0.9), scored(in_p, 0.5)], {document.doc_id: document}, 55, wordpiece)
    texts = " ".join(x.text for x in passages)
    assert texts.count(sentence(2)) == 1, "the last sentence of the first paragraph appears once"
    assert [(x.start, x.end) for x in passages] == [(0, across.end)]
    assert passages[0].chunk_indexes == sorted([across.index, in_p.index])


def test_source_paragraphs_order_across_documents(report, wordpiece):
    other = document_from_text(prose(20), source="other.md")
    r_other = scored(chunk_document(other, 20, wordpiece)[0], 0.9, "other.md")
    r_report = scored(chunk_document(report, 20, wordpiece)[0], 0.5)
    passages = source_paragraphs([r_other, r_report], {report.doc_id: report, other.doc_id: other}, 1000, wordpiece)
    assert [p.source for p in passages] == ["report.md", "other.md"]
