"""Heading links stay linear in a document's size (retrieval/search/links.py): one long paragraph spanning
many chunks is tokenised once and its words shared by its chunks, so building the links of a 1 MB
paragraph takes megabytes, where re-tokenising the whole paragraph for each chunk took gigabytes; on a
normal document the links are those of the straightforward construction."""

from __future__ import annotations

import random
import string
import tracemalloc
from collections.abc import Sequence

from longqa.retrieval import document_from_text
from longqa.retrieval.documents import Chunk, Document
from longqa.retrieval.index.chunking import chunk_document, is_heading
from longqa.retrieval.search.links import LEADING_HEADINGS, MAX_NAME_WORDS, DocumentLinks, names_of, words

SECTIONS = """# Annual report

## Goodwill

Goodwill rose to 4.2 million after the Delta acquisition, as the Rank Organisation had said.
Revenue fell in the second half, and West Chicago saw the largest drop.

## Delta acquisition

Delta was bought in March for 9 million. The Goodwill section explains the rest.

| Segment | Revenue |
|---|---|
| Delta acquisition | 9 |

- Maintenance
- Training
- Fuel

Passage 3:
The Rank Organisation
The Rank Organisation was a British entertainment conglomerate, later part of West Chicago, Illinois.

Costs are listed above, and Delta acquisition costs are in the table."""


def reference(document: Document, chunks: Sequence[Chunk]) -> tuple[dict, list, list]:
    """The straightforward construction (each chunk re-tokenises the joined text of its paragraphs):
    quadratic on a long paragraph, the definition of the links on any document."""
    named: dict[int, list[tuple[str, ...]]] = {}
    body: dict[int, str] = {}
    pending: list[str] = []
    for p in document.paragraphs:
        text = document.paragraph_text(p)
        if p.is_table:
            body[p.id], pending = text, []
            continue
        lines = text.split("\n")
        heads = next((i for i, line in enumerate(lines) if not is_heading(line)), len(lines))
        if heads == len(lines) and heads <= LEADING_HEADINGS:
            pending += lines
            body[p.id] = ""
            continue
        lead = heads if heads < len(lines) and heads <= LEADING_HEADINGS else 0
        named[p.id] = [n for line in pending + lines[:lead] for n in names_of(line)]
        body[p.id] = "\n".join(lines[lead:])
        pending = []
    titled: dict[tuple[str, ...], dict[int, list[int]]] = {}
    bodies, carried = [], []
    for chunk in chunks:
        own: set[tuple[str, ...]] = set()
        for pid in chunk.paragraph_ids:
            for n in named.get(pid, []):
                titled.setdefault(n, {}).setdefault(pid, []).append(chunk.index)
                own.add(n)
        carried.append(frozenset(own))
        bodies.append(words(" ".join(body.get(pid, "") for pid in chunk.paragraph_ids)))
    return {n: list(by.values()) for n, by in titled.items()}, bodies, carried


def reference_mentions(names: dict, text_words: Sequence[str], skip: frozenset = frozenset()) -> dict:
    """Every run of up to MAX_NAME_WORDS words tried as a name."""
    said = {}
    for i in range(len(text_words)):
        for n in range(1, min(MAX_NAME_WORDS, len(text_words) - i) + 1):
            name = tuple(text_words[i : i + n])
            if name in names and name not in skip:
                said[name] = names[name]
    return said


def paragraph(n_bytes: int, seed: int) -> str:
    """One paragraph of random six-letter words, no blank line: the auditor's hostile input."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(n_bytes // 7)) + "."


def peak_of_build(n_bytes: int) -> tuple[int, DocumentLinks, list[Chunk]]:
    """Peak Python allocations (bytes) while building the links of one titled paragraph of `n_bytes`."""
    document = document_from_text("Random words\n\n" + paragraph(n_bytes, seed=n_bytes))
    chunks = chunk_document(document, 150)
    tracemalloc.start()
    try:
        links = DocumentLinks.build(document, chunks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, links, chunks


def test_links_of_a_normal_document_are_those_of_the_straightforward_construction():
    document = document_from_text(SECTIONS)
    assert any(p.is_table for p in document.paragraphs), "the crafted document holds a table"
    for granularity in (8, 20, 40, 150):
        chunks = chunk_document(document, granularity)
        links = DocumentLinks.build(document, chunks)
        names, bodies, carried = reference(document, chunks)
        assert links.names == names and links.bodies == bodies and links.carried == carried, granularity
        for body, own in zip(bodies, carried, strict=True):
            assert links.mentions(body, own) == reference_mentions(names, body, own)
            assert links.mentions(body) == reference_mentions(names, body)
    # the specific links at one granularity, so the reference itself is pinned
    chunks = chunk_document(document, 40)
    links = DocumentLinks.build(document, chunks)
    assert sorted(" ".join(n) for n in links.names) == [
        "Annual report",
        "Delta acquisition",
        "Goodwill",
        "Passage 3",
        "Rank Organisation",
        "The Rank Organisation",
    ]
    question = words("What did Goodwill say about the Rank Organisation?")
    assert set(links.mentions(question)) == {("Goodwill",), ("Rank", "Organisation")}


def test_a_long_paragraph_is_tokenised_once_and_shared_by_its_chunks():
    _, links, chunks = peak_of_build(20_000)
    inside = [i for i, c in enumerate(chunks) if c.paragraph_ids == [1]]
    assert len(inside) > 10
    assert all(links.bodies[i] is links.bodies[inside[0]] for i in inside)  # one tuple, not one per chunk
    assert inside == [c.index for c in chunks if 1 in c.paragraph_ids]  # the title stands alone in chunk 0
    assert links.names == {("Random", "words"): [inside]}  # the title block names the whole paragraph
    assert all(links.carried[i] == {("Random", "words")} for i in inside)


def test_a_one_megabyte_paragraph_builds_its_links_in_bounded_memory():
    peak, links, chunks = peak_of_build(1_000_000)
    assert len(chunks) > 3000
    # the straightforward construction needs ~1.4 GB for 200 KB (quadratic); sharing needs ~11 MB here
    assert peak < 100 * 2**20, f"{peak / 2**20:.0f} MiB"


def test_doubling_a_paragraph_about_doubles_the_memory_of_its_links():
    small, _, _ = peak_of_build(50_000)
    large, _, _ = peak_of_build(100_000)
    # linear: ~2x; the quadratic construction gave ~4x (85 MB, then 340 MB)
    assert large < 2.5 * small, (small, large)
