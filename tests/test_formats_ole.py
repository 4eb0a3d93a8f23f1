"""Old binary Word (.doc) and PowerPoint (.ppt) files read through olefile and the hand-written
readers of retrieval/read/office/ole_office.py, on Apache Tika's test files (bench/corpus/tika, Apache-2.0), and
refused clearly when they cannot be read (not OLE, a newer file under the old name, cut short,
encrypted, Word 6/95)."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.retrieval.read.loaders import DocumentError, load_document

TIKA = Path(__file__).resolve().parents[1] / "bench" / "corpus" / "tika"
DOC, PPT = TIKA / "testWORD_various.doc", TIKA / "testPPT_various.ppt"


def blocks(document) -> list[str]:
    return [document.paragraph_text(p) for p in document.paragraphs]


def test_a_word_97_document_is_read_with_its_table_text_box_header_and_footnote():
    document = load_document(DOC)
    assert document.encoding == "doc"
    found = blocks(document)
    assert found[:2] == ["Footnote appears here", "Bold italic underline superscript subscript"]
    assert (
        "| Row 1 Col 1 | Row 1 Col 2 | Row 1 Col 3 |\n|---|---|---|\n| Row 2 Col 1 | Row 2 Col 2 | Row 2 Col 3 |"
        in found
    )
    for text in ("This is a hyperlink", "Here is a text box", "This is the header text.", "This is a footnote."):
        assert text in found, text
    assert "（ＧＨＱ）" in found and "𐌲𐌿𐍄𐌹𐍃𐌺" in found  # UTF-16 pieces, a character outside the BMP
    assert not any("HYPERLINK" in b for b in found)  # a field shows its result, not its code


def test_word_97_headings_are_found_from_their_paragraph_styles():
    found = blocks(load_document(TIKA / "testWORD.doc"))
    assert [b for b in found if b.startswith("#")] == [
        "# Sample Word Document Title",  # the Title style
        "# Heading Level 1",
        "## Heading Level 2",
        "### Heading Level 3",
    ]
    assert "This is a sample Microsoft Word Document." in found


def test_a_powerpoint_97_file_is_read_slide_by_slide_without_the_masters():
    document = load_document(PPT)
    found = blocks(document)
    assert found[0] == "This is the header text."  # the notes master's header, before the slides
    assert "## Slide 1" in found
    text = document.text
    for line in (
        "Here is a text box",
        "Row 2 Col 3",
        "Figure 1 This is a caption for Figure 1",
        "[1] This is a footnote.",
    ):
        assert line in text, line
    assert "Click to edit Master" not in text
    assert text.count("Here is a text box") == 1 and "This is the header text." in text


def test_powerpoint_97_slide_titles_and_a_masters_own_text_without_its_prompts():
    assert blocks(load_document(TIKA / "testPPT.ppt"))[:2] == [
        "## Slide 1: Sample Powerpoint Slide",
        "Created with Microsoft\nPowerpoint X for Mac\nService Release 1",
    ]
    text = load_document(TIKA / "testPPT_masterText.ppt").text
    assert text == "Text that I added to the master slide"  # no "Click to edit Master title style", no "*"


def _patched(source: Path, target: Path, offset: int, value: bytes) -> Path:
    """A copy of a .doc with bytes of its WordDocument stream's header changed (the stream starts
    on a 512-byte sector with Word's magic number)."""
    data = bytearray(source.read_bytes())
    start = next(i for i in range(512, len(data), 512) if data[i : i + 2] == b"\xec\xa5")  # Word 97's magic
    data[start + offset : start + offset + len(value)] = value
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize(
    ("offset", "value", "reason"),
    [
        (0x0A, b"\x00\x03", "DOC is password-protected (encrypted)"),
        (0x02, b"\x65\x00", "not read: Word 6.0/95 format (older than Word 97); save it as .docx"),
        (0x00, b"\xdc\xa5", "not read: Word 6.0/95 format (older than Word 97); save it as .docx"),
    ],
)
def test_an_encrypted_or_word_95_document_is_refused_with_its_reason(tmp_path, offset, value, reason):
    path = _patched(DOC, tmp_path / "old.doc", offset, value)
    with pytest.raises(DocumentError, match=reason.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        load_document(path)


@pytest.mark.parametrize(("name", "sample"), [("notes.doc", DOC), ("deck.ppt", PPT)])
def test_old_office_files_that_cannot_be_read_say_why(tmp_path, name, sample):
    label = "Word" if name.endswith(".doc") else "PowerPoint"
    text = tmp_path / name
    text.write_text("plain text saved under the wrong name", "utf-8")
    with pytest.raises(DocumentError, match=f"not a {label} 97-2003 file"):
        load_document(text)
    rtf = tmp_path / f"rtf-{name}"
    rtf.write_bytes(b"{\\rtf1\\ansi Minutes}")
    with pytest.raises(DocumentError, match=f"not read: an RTF document under the .{name[-3:]} name"):
        load_document(rtf)
    newer = tmp_path / f"newer-{name}"
    newer.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(DocumentError, match=f"a newer {label} saved under the old name: rename it to .{name[-3:]}x"):
        load_document(newer)
    cut = tmp_path / f"cut-{name}"
    cut.write_bytes(sample.read_bytes()[:3000])
    with pytest.raises(DocumentError, match="corrupt"):
        load_document(cut)


def test_word_97_text_past_the_word_limit_is_refused():
    with pytest.raises(DocumentError, match="more than 20 words"):
        load_document(DOC, max_words=20)
    with pytest.raises(DocumentError, match="more than 20 words"):
        load_document(PPT, max_words=20)


def _clx(pieces: int, length: int) -> bytes:
    """A piece table of `pieces` pieces of `length` UTF-16 characters, each at the stream's start."""
    import struct

    plc = struct.pack(f"<{pieces + 1}I", *range(0, (pieces + 1) * length, length))
    plc += b"".join(struct.pack("<HIH", 0, 0, 0) for _ in range(pieces))
    return b"\x02" + struct.pack("<I", len(plc)) + plc


def test_pieces_pointing_at_one_region_many_times_are_bounded_by_the_word_limit():
    from longqa.retrieval.read.office.ole_office import BASE_CHARS, CHARS_PER_WORD, _piece_text

    word = "ab".encode("utf-16-le") * 500  # 1,000 characters
    assert _piece_text(Path("ok.doc"), word, _clx(2, 1_000), 10) == (word * 2, [(0, 1_000, 0, 2), (1_000, 2_000, 0, 2)])
    assert 2_000 * 1_000 > CHARS_PER_WORD * 10 + BASE_CHARS  # 2 million characters from 2 KB
    with pytest.raises(DocumentError, match="more than 10 words"):
        _piece_text(Path("bomb.doc"), word, _clx(2_000, 1_000), 10)
