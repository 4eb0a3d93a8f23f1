"""Loading .txt/.md/.pdf/.html into Documents with whole paragraphs and whole tables, and refusing
bad input with a DocumentError that names the file and the reason."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from longqa.retrieval.documents import Document, content_hash
from longqa.retrieval.read import loaders
from longqa.retrieval.read.loaders import DocumentError, document_from_text, load_document


def blocks(document: Document) -> list[tuple[str, bool]]:
    return [(document.paragraph_text(p), p.is_table) for p in document.paragraphs]


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def assert_names_file(error: DocumentError, path: Path, *reason_words: str) -> None:
    message = str(error)
    assert error.source == str(path)
    assert message.startswith(f"{path}: ")
    for word in reason_words:
        assert word.lower() in message.lower(), message


# -- text and markdown ---------------------------------------------------------------------------


def test_txt_paragraphs_offsets_and_hash(tmp_path):
    text = "First paragraph, line one\nstill the first paragraph.\n\n  Second paragraph.  \n\n\n\nThird one."
    path = write(tmp_path / "notes.txt", text)
    document = load_document(path)
    assert document.source == str(path)
    assert document.encoding == "utf-8"
    assert document.text == text
    assert document.doc_id == content_hash(text)
    assert blocks(document) == [
        ("First paragraph, line one\nstill the first paragraph.", False),
        ("Second paragraph.", False),
        ("Third one.", False),
    ]
    assert [p.id for p in document.paragraphs] == [0, 1, 2]


def test_crlf_is_normalised(tmp_path):
    path = write(tmp_path / "dos.txt", b"One line.\r\nSame paragraph.\r\n\r\nNext paragraph.\r\n")
    document = load_document(path)
    assert "\r" not in document.text
    assert blocks(document) == [("One line.\nSame paragraph.", False), ("Next paragraph.", False)]


def test_markdown_pipe_table_is_one_block(tmp_path):
    table = "| Terminal | Tons |\n|---|---|\n| North | 1200 |\n| South | 900 |"
    text = f"# Report\n\nIntro paragraph about cargo.\n{table}\n\nClosing words."
    document = load_document(write(tmp_path / "report.md", text))
    # the table is split off the prose it was glued to, and kept whole
    assert blocks(document) == [
        ("# Report", False),
        ("Intro paragraph about cargo.", False),
        (table, True),
        ("Closing words.", False),
    ]


def test_space_and_tab_aligned_tables_are_blocks(tmp_path):
    spaced = "Terminal    Tons    Ships\nNorth       1200    14\nSouth       900     11"
    tabbed = "name\tqty\tprice\nbolt\t10\t0.5\nnut\t20\t0.2"
    text = f"Prose before the tables.\n\n{spaced}\n\nMiddle prose.\n\n{tabbed}\n"
    document = load_document(write(tmp_path / "tables.txt", text))
    assert blocks(document) == [
        ("Prose before the tables.", False),
        (spaced, True),
        ("Middle prose.", False),
        (tabbed, True),
    ]


def test_one_aligned_line_in_prose_is_not_a_table(tmp_path):
    text = "Totals were   high   and   rising.\nThe next line is ordinary prose."
    document = load_document(write(tmp_path / "prose.txt", text))
    assert [is_table for _, is_table in blocks(document)] == [False, False]
    assert "".join(t for t, _ in blocks(document)).replace("\n", "") == text.replace("\n", "")


def test_utf8_bom_is_removed(tmp_path):
    document = load_document(write(tmp_path / "bom.txt", b"\xef\xbb\xbfCaf\xc3\xa9 text."))
    assert document.text == "Café text."
    assert document.encoding == "utf-8-sig"


def test_document_from_text_inline():
    document = document_from_text("Alpha.\n\n| a | b |\n| 1 | 2 |", source="<question>")
    assert document.source == "<question>"
    assert blocks(document) == [("Alpha.", False), ("| a | b |\n| 1 | 2 |", True)]
    with pytest.raises(DocumentError, match="<question>: no text content"):
        document_from_text(" \n\t ", source="<question>")


# -- PDF --------------------------------------------------------------------------------------------


def make_pdf(path: Path, prose: list[str], table: list[tuple[str, ...]], after: str) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    c.setFont("Helvetica", 11)
    y = 760
    for line in prose:
        c.drawString(72, y, line)
        y -= 16
    y -= 24
    for row in table:  # a small table drawn as aligned text
        for x, cell in zip((72, 220, 340), row, strict=True):
            c.drawString(x, y, cell)
        y -= 16
    y -= 24
    c.drawString(72, y, after)
    c.showPage()
    c.save()
    return path


def test_pdf_prose_and_aligned_table(tmp_path):
    rows = [("Terminal", "Tons", "Ships"), ("North", "1200", "14"), ("South", "900", "11"), ("Total", "2100", "25")]
    path = make_pdf(
        tmp_path / "report.pdf",
        ["The harbor authority published its annual report.", "Cargo volumes rose across every terminal."],
        rows,
        "The board approved the dredging plan.",
    )
    document = load_document(path)
    assert document.encoding == "pdf"
    found = blocks(document)
    prose = [t for t, is_table in found if not is_table]
    tables = [t for t, is_table in found if is_table]
    assert "The harbor authority published its annual report." in prose
    assert "The board approved the dredging plan." in prose
    assert len(tables) == 1
    lines = tables[0].split("\n")
    assert [line.split() for line in lines] == [list(r) for r in rows]
    # document order: intro prose, then the table, then the closing sentence
    order = [document.text.index(s) for s in ("annual report", "Terminal", "dredging plan")]
    assert order == sorted(order)


def test_pdf_without_text_is_refused(tmp_path):
    from reportlab.pdfgen import canvas

    path = tmp_path / "blank.pdf"
    c = canvas.Canvas(str(path))
    c.rect(100, 100, 50, 50)
    c.showPage()
    c.save()
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "no extractable text")


def test_corrupt_pdf_is_refused(tmp_path):
    path = write(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not really a pdf\n%%EOF\n")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path)
    assert "pdf" in e.value.reason.lower()


def test_pdf_over_word_limit_is_refused(tmp_path):
    path = make_pdf(tmp_path / "long.pdf", ["word " * 12] * 10, [("a", "b", "c")], "end.")
    with pytest.raises(DocumentError) as e:
        load_document(path, max_words=50)
    assert_names_file(e.value, path, "more than 50 words")


# -- HTML ---------------------------------------------------------------------------------------------

HTML = """<!doctype html>
<html><head><title>Ignored title</title><style>p { color: red; }</style>
<script>var secret = "do not index";</script></head>
<body>
<h2>Harbor report</h2>
<p>The harbor grew <b>fast</b> this year.</p>
<div><p>Nested paragraph inside a div.</p></div>
<ul><li>First item</li><li>Second item</li></ul>
<table>
  <tr><th>Terminal</th><th>Tons</th></tr>
  <tr><td>North</td><td>1200</td></tr>
  <tr><td>South | West</td><td>900</td></tr>
</table>
<noscript>enable javascript</noscript>
<p>Final paragraph.</p>
</body></html>
"""


def test_html_blocks_table_and_no_script(tmp_path):
    document = load_document(write(tmp_path / "page.html", HTML))
    assert blocks(document) == [
        ("## Harbor report", False),
        ("The harbor grew fast this year.", False),
        ("Nested paragraph inside a div.", False),
        ("First item", False),
        ("Second item", False),
        ("| Terminal | Tons |\n|---|---|\n| North | 1200 |\n| South / West | 900 |", True),
        ("Final paragraph.", False),
    ]
    for hidden in ("secret", "color", "Ignored title", "javascript"):
        assert hidden not in document.text


def test_html_without_block_tags_keeps_visible_text(tmp_path):
    document = load_document(write(tmp_path / "bare.htm", "<html><body>Just text<br>and more</body></html>"))
    assert "Just text" in document.text and "and more" in document.text
    assert "<" not in document.text


# -- bad input -----------------------------------------------------------------------------------------


def test_empty_file(tmp_path):
    path = write(tmp_path / "empty.txt", b"")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "empty")


def test_whitespace_only_file(tmp_path):
    path = write(tmp_path / "blank.md", " \n\n\t  \n")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "no text content")


def test_binary_file_with_nul_bytes(tmp_path):
    path = write(tmp_path / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "binary", "NUL")


def test_binary_file_of_control_bytes(tmp_path):
    path = write(tmp_path / "blob.md", bytes([1, 2, 3, 4, 5, 6, 7, 8, 14, 15]) * 50)
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "binary")


def test_cp1252_fallback_is_logged(tmp_path, caplog):
    path = write(tmp_path / "legacy.txt", "Caf\u00e9 cr\u00e8me \u2013 \u20ac5 \u201cquoted\u201d.".encode("cp1252"))
    with caplog.at_level(logging.WARNING, logger="longqa.retrieval.read.loaders"):
        document = load_document(path)
    assert document.encoding == "cp1252"
    assert document.text == "Caf\u00e9 cr\u00e8me \u2013 \u20ac5 \u201cquoted\u201d."
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert str(path) in warnings[0].getMessage() and "cp1252" in warnings[0].getMessage()


def test_undecodable_bytes(tmp_path):
    path = write(tmp_path / "garbled.txt", b"Some text \x81\x8d\x8f\x90\x9d more text")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "undecodable", "UTF-8", "cp1252")


def test_unsupported_extension(tmp_path):
    path = write(tmp_path / "slides.key", "a,b,c")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "unsupported file type '.key'", ".txt", ".pdf", ".html")


def test_no_extension(tmp_path):
    path = write(tmp_path / "README", "text")
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "unsupported file type '(none)'")


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.txt"
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "not found")


def test_directory(tmp_path):
    path = tmp_path / "folder.txt"
    path.mkdir()
    with pytest.raises(DocumentError) as e:
        load_document(path)
    assert_names_file(e.value, path, "not a regular file")


def test_too_long_file_names_file_and_limit(tmp_path):
    path = write(tmp_path / "novel.txt", "\n\n".join(["lorem ipsum dolor sit amet " * 20] * 30))  # 3,000 words
    with pytest.raises(DocumentError) as e:
        load_document(path, max_words=1000)
    assert_names_file(e.value, path, "1,000 words", "LONGQA_MAX_WORDS")
    assert load_document(path, max_words=3000).n_words == 3000  # the limit is inclusive


def test_too_long_file_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "_READ_BLOCK", 4096)
    path = write(tmp_path / "huge.md", "word " * 200_000)  # 1,000,000 bytes
    with pytest.raises(DocumentError) as e:
        load_document(path, max_words=1000)
    assert_names_file(e.value, path, "more than 1,000 words", "bytes before stopping")
    read = int(e.value.reason.split("read ")[1].split(" bytes")[0].replace(",", ""))
    assert 0 < read <= 2 * 4096 < path.stat().st_size


def test_words_split_across_blocks_count_once(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "_READ_BLOCK", 7)  # cuts most words in two
    path = write(tmp_path / "exact.txt", "harbor " * 100)
    assert load_document(path, max_words=100).n_words == 100
    with pytest.raises(DocumentError):
        load_document(path, max_words=99)


def test_ligatures_and_soft_hyphens_become_plain_letters():
    from longqa.retrieval.read.loaders import document_from_text

    doc = document_from_text("The \ufb01rst \ufb02ow of in\u00adformation is e\ufb03cient.")
    assert doc.text == "The first flow of information is efficient."
