"""The section a passage lies in (retrieval/search/sections.py): the nearest heading at or before it, cited."""

from __future__ import annotations

from longqa.retrieval.read.loaders import document_from_text
from longqa.retrieval.search.sections import MAX_SECTION_CHARS, section_of

TEXT = (
    "# Harbour report\n\n"
    "The harbour had a busy year, with more ships than ever before.\n\n"
    "4.2 Arrivals at dawn\n\n"
    "The pilot boarded the Aurora at dawn, as the tide turned.\n\n"
    "Cargo volumes rose by a fifth, led by grain and timber."
)


def test_a_passage_is_under_the_heading_before_it():
    document = document_from_text(TEXT, source="report.md")
    assert section_of(document, TEXT.index("The harbour had")) == {"section": "Harbour report"}
    assert section_of(document, TEXT.index("Cargo volumes")) == {"section": "4.2 Arrivals at dawn"}
    assert section_of(document, TEXT.index("4.2 Arrivals")) == {"section": "4.2 Arrivals at dawn"}  # its own


def test_no_heading_no_section_and_a_long_heading_is_cut():
    prose = document_from_text("One sentence here.\n\nAnother sentence there.", source="a.md")
    assert section_of(prose, 20) == {}
    title = "# " + " ".join(["Word"] * 11) + " " + "x" * 60
    long = document_from_text(f"{title}\n\nBody text follows here.", source="b.md")
    shown = section_of(long, len(title) + 2)["section"]
    assert shown.endswith("…") and len(shown) <= MAX_SECTION_CHARS + 1


def test_the_graphs_evidence_names_its_section(run_graph):
    out = run_graph("Who boarded the Aurora at dawn?", model=None, inputs={"texts": [TEXT]})
    held = [e for e in out["evidence"] if "boarded the Aurora" in e["text"]]
    assert held and held[0]["section"] in {"Harbour report", "4.2 Arrivals at dawn"}, out["evidence"]
