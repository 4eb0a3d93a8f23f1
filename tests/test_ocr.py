"""Scans and photos are read by OCR (issue 47, part 1): a folder of scans (PDF upright and turned,
PNG, JPEG, BMP, WebP, a multi-page TIFF, a PDF mixing a text page and a scanned one, built by
bench/scan_corpus.py with known text) is indexed with nothing skipped, and a question about each
file finds its answer in the evidence, cited with its page and marked as read by OCR. With OCR off,
or without Tesseract, images are skipped with the reason and a mixed PDF keeps its text page."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.scan_corpus import build
from longqa.contracts.settings import Settings
from longqa.retrieval.documents import Document
from longqa.retrieval.read.bounded import BoundedReader, ReadLimits
from longqa.retrieval.read.loaders import DocumentError, load_document
from longqa.retrieval.read.ocr import OcrLimits, configure, location, page_span
from longqa.runner.ask import run_question

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="Tesseract not installed")
ENV = {**os.environ, "LONGQA_MODEL": ""}


@pytest.fixture(scope="module")
def scans(tmp_path_factory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("scans") / "docs"
    corpus = build(folder)
    (folder / "truth.json").unlink()  # not a scan: the folder holds only what is read by OCR
    return folder, corpus


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "longqa.cli", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env={**ENV, **env},
        timeout=600,
    )


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, scans) -> tuple[Path, str]:
    home = tmp_path_factory.mktemp("scans-home")
    done = _cli(home, "index", str(scans[0]))
    assert done.returncode == 0, done.stderr
    return home, done.stdout + done.stderr


def _flat(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@needs_tesseract
def test_a_folder_of_scans_is_indexed_with_nothing_skipped(indexed, scans):
    home, output = indexed
    assert "skipped" not in output.lower(), output
    listed = _cli(home, "ask", "--json", str(scans[0]), "four score and seven years ago")
    assert json.loads(listed.stdout)["skipped"] == [], listed.stdout


@needs_tesseract
def test_each_scan_answers_a_question_about_it_from_evidence_with_its_page_and_ocr(indexed, scans):
    home, _ = indexed
    folder, corpus = scans
    settings = Settings(home=home, model=None)  # evidence only: no model answers here
    for scan in corpus:
        result = run_question([str(folder / scan.name)], f"Which passage says {scan.answer}?", settings, progress=None)
        assert result["status"] == "evidence-only", result.get("error")
        found = [e for e in result["evidence"] if _flat(scan.answer) in _flat(e["text"])]
        assert found, (scan.name, [e["text"][:80] for e in result["evidence"]])
        assert all(e["ocr"] for e in found), found  # every answer of the corpus sits on a scanned page
        if scan.name.endswith((".pdf", ".tif")):
            assert all(e["page"] for e in found), found
    mixed = run_question([str(folder / "mixed.pdf")], "Who went to the woods?", settings, progress=None)
    # its text page and its scanned page are one short passage: cited across both, partly read by OCR
    assert any(e["page"] == "1-2" and e["ocr"] and "deliberately" in e["text"] for e in mixed["evidence"]), mixed


@needs_tesseract
def test_ask_says_a_passage_was_read_by_ocr_and_on_which_page(indexed, scans):
    home, _ = indexed
    done = _cli(home, "ask", str(scans[0] / "bundle.tif"), "Who went to the woods to live deliberately?")
    line = next(line for line in done.stdout.splitlines() if "bundle.tif" in line)
    assert re.search(r"bundle\.tif page 1(-2)? \(OCR\) chars", line), done.stdout  # short: one passage, both pages


@needs_tesseract
def test_a_mixed_pdf_reads_only_its_scanned_page_by_ocr(scans):
    document = load_document(scans[0] / "mixed.pdf")
    assert document.ocr_pages == [2]
    first, second = document.text.split("\f")
    assert "deliberately" in first and "incredulity" in _flat(second)
    assert location(document, 0, 20) == {"page": "1"}
    assert location(document, len(document.text) - 20, len(document.text)) == {"page": "2", "ocr": True}


@needs_tesseract
def test_turned_pages_are_read_upright(scans):
    for name in ("turned_90.png", "turned_180.png", "turned_270.png", "scanned_turned.pdf"):
        assert "truth universally acknowledged" in _flat(load_document(scans[0] / name).text), name


@needs_tesseract
def test_a_long_scan_shows_a_line_per_page_from_the_reader_worker(scans, tmp_path, capfd):
    from PIL import Image

    with Image.open(scans[0] / "bundle.tif") as tiff:
        frames = [tiff.copy()]
        tiff.seek(1)
        frames += [tiff.copy(), tiff.copy()]
    frames[0].save(tmp_path / "three.tif", save_all=True, append_images=frames[1:])
    reader = BoundedReader(ReadLimits())
    try:
        document = reader.load(tmp_path / "three.tif", 100_000)
    finally:
        reader.close()
    assert document.ocr_pages == [1, 2, 3] and document.text.count("\f") == 2
    err = capfd.readouterr().err
    assert all(f"three.tif: OCR page {n}/3" in err for n in (1, 2, 3)), err


def test_with_ocr_off_images_are_skipped_with_the_reason_and_a_mixed_pdf_keeps_its_text_page(tmp_path, scans):
    home = tmp_path / "home"
    done = _cli(home, "ask", "--json", str(scans[0]), "deliberately", LONGQA_OCR="off")
    result = json.loads(done.stdout)
    skipped = {Path(line.split(": ", 1)[0]).name: line for line in result["skipped"]}
    assert set(skipped) == {s.name for s in scans[1]} - {"mixed.pdf"}, skipped
    assert all("OCR is switched off (LONGQA_OCR=off)" in line for line in skipped.values()), skipped
    assert "scanned.pdf" in skipped and "no extractable text" in skipped["scanned.pdf"]
    assert any("deliberately" in e["text"] for e in result["evidence"])
    assert "page(s) 2 are scans with no text layer, not read: OCR is switched off" in done.stderr, done.stderr


def test_without_tesseract_an_image_is_refused_saying_how_to_install_it(tmp_path, scans, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no tesseract on it
    configure(OcrLimits())
    with pytest.raises(DocumentError, match="Tesseract is not installed .*apt-get install tesseract-ocr"):
        load_document(scans[0] / "letter.png")


def test_a_page_cap_refuses_a_long_scan_and_a_broken_image_is_refused_with_its_reason(tmp_path, scans):
    configure(OcrLimits(max_pages=1))
    try:
        if shutil.which("tesseract"):
            with pytest.raises(DocumentError, match="2 pages to read by OCR, more than 1"):
                load_document(scans[0] / "bundle.tif")
        (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot an image")
        with pytest.raises(DocumentError, match="not a readable image"):
            load_document(tmp_path / "broken.png")
    finally:
        configure(OcrLimits())


def test_a_passage_is_located_by_the_form_feeds_before_it():
    text = "one\n\n\f\n\ntwo\n\n\f\n\nthree"
    assert page_span(text, 0, 3) == "1" and page_span(text, text.index("two"), len(text)) == "2-3"
    assert page_span("no pages here", 0, 5) == ""
    image = Document(doc_id="x", source="a.png", text="words", paragraphs=[], ocr_pages=[1])
    assert location(image, 0, 5) == {"ocr": True}


@needs_tesseract
def test_a_page_past_its_time_fails_its_file_with_the_reason(scans):
    configure(OcrLimits(page_timeout_s=0.01))
    try:
        with pytest.raises(DocumentError, match=r"OCR of page 1 took longer than 0.01 s \(LONGQA_OCR_PAGE_TIMEOUT_S\)"):
            load_document(scans[0] / "letter.png")
    finally:
        configure(OcrLimits())


@needs_tesseract
def test_a_scanned_page_past_its_time_costs_that_page_and_the_text_page_is_kept(scans):
    configure(OcrLimits(page_timeout_s=0.01))
    try:
        document = load_document(scans[0] / "mixed.pdf")
    finally:
        configure(OcrLimits())
    assert "deliberately" in document.text and "incredulity" not in document.text
    assert document.warnings == ["OCR of page 2 took longer than 0.01 s (LONGQA_OCR_PAGE_TIMEOUT_S)"]
