"""Hostile input and faults, as a hostile user and a misbehaving server produce them: every case
gets a clear error naming the input and the reason (CLI: non-zero exit, no traceback; graph:
`status: error` with the message), or a correct result. Generated cases are seeded and bounded.

Each bullet of the reliability issue's "Why" is a case here; the server-side ones (locked and
mistyped context keys, error messages without the documents root, concurrent runs citing only their
own documents) are in tests/test_server_sdk.py."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from longqa.contracts.settings import RunContext, Settings, SettingsError
from longqa.graph.graph import graph
from longqa.graph.index_graph import graph as index_graph
from longqa.llm.parsing import MAX_PARSE_CHARS, parse_bool, parse_dict
from longqa.retrieval import DocumentError
from longqa.retrieval.read.loaders import document_from_text, load_document
from longqa.retrieval.search.context import Passage, recover_tables
from longqa.retrieval.tokens import wordpiece_counter

from .openai_stub import OpenAIStub

LIGHTHOUSE = (
    "The Brannock lighthouse stands on a granite reef two miles off the northern cape. It was first lit in 1871.\n\n"
    "In 1904 the oil lamp was replaced by a paraffin vapour burner, which tripled the range of the light.\n"
)
QUESTION = "When was the oil lamp replaced?"
SEED = 20261123
STUB = "openai:stub-model"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile-home")


def run(home: Path, payload: dict, **context) -> dict:
    out = graph.invoke(payload, context={"home": str(home), "strategy": "rag", **context})
    json.dumps(out, default=str)  # whatever happened, the output serialises (a server sends it as JSON)
    return out


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "longqa.cli", *args], capture_output=True, text=True, timeout=300, env=environment
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done


# -- tracebacks that were: now named errors --------------------------------------------------------


def test_a_symlink_loop_is_a_named_error(tmp_path, home):
    loop = tmp_path / "loop.txt"
    loop.symlink_to(tmp_path / "loop.txt")
    with pytest.raises(DocumentError, match=r"loop\.txt: cannot be (resolved|read)"):
        load_document(loop)
    out = run(home, {"question": QUESTION, "documents": [str(loop)]})
    assert out["status"] == "error" and "loop.txt" in out["error"] and out["error"].startswith("input: ")
    done = cli("--home", str(home), "ask", str(loop), QUESTION)
    assert done.returncode == 1 and "loop.txt: cannot be resolved (symlink loop" in done.stdout + done.stderr


def test_a_link_out_of_a_walked_folder_is_not_followed(tmp_path, home):
    """Seen: a link named notes.txt in the folder, to a secret file elsewhere, was indexed and searchable. A link
    that stays inside the folder is read; a file named directly is read wherever it leads."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "creds.txt").write_text("The vault code is PLOVER-7731.\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "lighthouse.md").write_text(LIGHTHOUSE)
    (folder / "notes.txt").symlink_to(outside / "creds.txt")
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "same.md").symlink_to(folder / "lighthouse.md")
    done = cli("--home", str(home), "index", str(folder))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    for name in ("notes.txt", "passwd.txt"):
        assert f"{name}: a link leading out of the folder (not followed)" in said, said
    assert "same.md: a link" not in said  # a link inside the folder is read
    searched = cli("--home", str(home), "search", str(folder), "vault code", "--mode", "bm25")
    assert searched.returncode == 0 and "PLOVER" not in searched.stdout + searched.stderr
    named = cli("--home", str(home), "search", str(folder / "notes.txt"), "vault code", "--mode", "bm25")
    assert "PLOVER-7731" in named.stdout, named.stdout + named.stderr


def test_a_pdf_whose_stream_length_refers_to_itself_is_a_named_unreadable_pdf(tmp_path):
    """Seen: pypdf meets a /Length reference loop as an AttributeError, which fell through to the worker's
    catch-all as "cannot be read (AttributeError)"."""
    text = b"BT /F1 12 Tf 72 700 Td (The loop file names Orm Talby.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length 6 0 R >>\nstream\n" + text + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"7 0 R",
        b"6 0 R",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path = tmp_path / "length_loop.pdf"
    path.write_bytes(bytes(out))
    with pytest.raises(DocumentError, match=r"length_loop\.pdf: unreadable PDF \(AttributeError"):
        load_document(path)


def test_an_unreadable_file_is_a_named_error(tmp_path, monkeypatch):
    """Permission denied (played by the open call: this suite may run as root, which reads anything)."""
    path = tmp_path / "locked.txt"
    path.write_text(LIGHTHOUSE)
    real_open = Path.open

    def refuse(self, *args, **kwargs):
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(DocumentError, match=r"locked\.txt: cannot be read \(Permission denied\)"):
        load_document(path)


def test_a_file_name_that_is_not_utf8_is_cited_printably(tmp_path, home):
    name = os.fsdecode(b"caf\xe9 report.txt")  # Latin-1 bytes in a file name: a surrogate escape in Python
    path = tmp_path / name
    path.write_text(LIGHTHOUSE)
    out = run(home, {"question": QUESTION, "documents": [str(path)]})
    assert out["status"] == "evidence-only", out.get("error")
    assert {Path(c["source"]).name for c in out["citations"]} == {"caf\ufffd report.txt"}


def test_a_pdf_decompression_bomb_is_a_named_error(tmp_path, monkeypatch):
    from pypdf.errors import LimitReachedError

    path = tmp_path / "bomb.pdf"
    path.write_bytes(b"%PDF-1.4\n%bomb\n")

    def explode(*args, **kwargs):
        raise LimitReachedError("Limit reached while decompressing: 75000001 > 75000000")

    monkeypatch.setattr("pypdf.PdfReader", explode)
    with pytest.raises(DocumentError, match=r"bomb\.pdf: unreadable PDF \(LimitReachedError"):
        load_document(path)


@pytest.mark.parametrize(
    "variable,value,message",
    [
        ("LONGQA_MAX_WORDS", "abc", "LONGQA_MAX_WORDS='abc': expected a whole number"),
        ("LONGQA_CONTEXT_WINDOW", "abc", "LONGQA_CONTEXT_WINDOW='abc': expected a whole number"),
        ("CHROMA_PORT", "abc", "CHROMA_PORT='abc': expected a whole number"),
        ("LONGQA_STRATEGY", "bogus", "LONGQA_STRATEGY='bogus': expected one of rag"),
        ("LONGQA_TIMEOUT_S", "-5", "LONGQA_TIMEOUT_S='-5': must be at least"),
    ],
)
def test_a_bad_environment_value_names_the_variable(tmp_path, monkeypatch, variable, value, message):
    doc = tmp_path / "doc.txt"
    doc.write_text(LIGHTHOUSE)
    done = cli("--home", str(tmp_path / "home"), "ask", str(doc), QUESTION, env={variable: value})
    assert done.returncode == 2 and message in done.stderr
    monkeypatch.setenv(variable, value)
    out = graph.invoke({"question": QUESTION, "texts": [LIGHTHOUSE]})  # no context: the environment's settings
    assert out["status"] == "error" and message in out["error"]


@pytest.mark.parametrize(
    "value,message",
    [
        ("lots", "LONGQA_NODE_THREADS='lots': expected a whole number"),
        ("-1", "LONGQA_NODE_THREADS='-1': must be between 0 and 1024"),
        ("5000", "LONGQA_NODE_THREADS='5000': must be between 0 and 1024"),
    ],
)
def test_a_bad_node_thread_count_names_the_variable(monkeypatch, value, message):
    from longqa.contracts.settings import Settings

    monkeypatch.setenv("LONGQA_NODE_THREADS", value)
    with pytest.raises(SettingsError) as raised:
        Settings()
    assert str(raised.value) == message


def test_node_threads_default_and_python_default(monkeypatch):
    from longqa.contracts.deployment import DEFAULT_NODE_THREADS
    from longqa.contracts.settings import Settings

    monkeypatch.delenv("LONGQA_NODE_THREADS", raising=False)
    assert Settings().node_threads == DEFAULT_NODE_THREADS
    monkeypatch.setenv("LONGQA_NODE_THREADS", " 0 ")
    assert Settings().node_threads == 0


def test_a_question_with_lone_surrogates_and_control_characters_is_cleaned(home):
    out = run(home, {"question": "When was the \ud800oil lamp\x07 replaced?\x00", "texts": [LIGHTHOUSE]})
    assert out["status"] == "evidence-only", out.get("error")
    assert out["messages"][0].content == "When was the \ufffdoil lamp replaced?"


@pytest.mark.parametrize(
    "payload,result",
    [
        ({"texts": [123]}, "input: texts[0] must be a string (got int)"),
        ({"texts": {"a": 1}}, "input: 'texts' must be a list of strings (got dict)"),
        ({"documents": [None]}, "input: 'documents' must hold paths as strings (got NoneType)"),
        ({"question": 42, "texts": [LIGHTHOUSE]}, "input: 'question' must be a string (got int)"),
        ({"texts": LIGHTHOUSE}, None),  # one string is one document, not one per character
    ],
)
def test_inline_inputs_are_checked(home, payload, result):
    out = run(home, {"question": QUESTION, **payload})
    if result is None:
        assert out["status"] == "evidence-only" and {c["source"] for c in out["citations"]} == {"text-1"}
    else:
        assert out["status"] == "error" and out["error"] == result


# -- silent corruption that was: now decoded right or refused --------------------------------------

RUSSIAN = "Маяк на северном мысе построили в 1871 году. Смотритель прожил там тридцать один год. " * 4
CHINESE = "灯塔建于1871年，位于北角外两英里的花岗岩礁石上。守护者在那里住了三十一年。" * 4
JAPANESE = "灯台は1871年に建てられ、北の岬の沖二マイルの花崗岩の岩礁に立っている。灯台守はそこに三十一年住んだ。" * 4
FRENCH = "Le phare fut allumé en 1871 ; la lampe à huile fut remplacée en 1904 par un brûleur à pétrole. " * 4


@pytest.mark.parametrize(
    "text,encoding",
    [
        (RUSSIAN, "cp1251"),
        (RUSSIAN, "koi8_r"),
        (CHINESE, "gbk"),
        (JAPANESE, "euc_jp"),
        (FRENCH, "cp1252"),
        (FRENCH, "utf-32"),  # with its BOM; once read as UTF-16
        (RUSSIAN, "utf-16"),
    ],
)
def test_legacy_encodings_decode_right(tmp_path, text, encoding):
    path = tmp_path / "doc.txt"
    path.write_bytes(text.encode(encoding))
    assert load_document(path).text.strip() == text.strip()


def test_a_few_stray_bytes_are_refused_not_guessed(tmp_path):
    path = tmp_path / "garbled.txt"
    path.write_bytes(b"Some text \x81\x8d\x8f\x90\x9d more text")
    with pytest.raises(DocumentError, match="nor clean cp1252; too few non-ASCII bytes"):
        load_document(path)


def test_a_nul_byte_anywhere_is_refused(tmp_path):
    path = tmp_path / "late.txt"
    path.write_bytes(b"plain text " * 2000 + b"\x00" + b" more")
    with pytest.raises(DocumentError, match="NUL byte at offset 22,000"):
        load_document(path)


def test_control_characters_are_stripped_from_text():
    doc = document_from_text("Bell\x07 and escape\x1b[31m and DEL\x7f and C1\x85 kept: tab\tnewline\n", source="t")
    assert doc.text == "Bell and escape[31m and DEL and C1 kept: tab\tnewline\n"


# -- citations name the path given in this run -----------------------------------------------------


def test_a_citation_names_the_path_given_now_not_the_first_indexed(tmp_path, home):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text(LIGHTHOUSE)
    assert run(home, {"question": QUESTION, "documents": [str(first)]})["status"] == "evidence-only"
    shutil.copy(first, second)
    first.unlink()
    out = run(home, {"question": QUESTION, "documents": [str(second)]})
    assert {Path(c["source"]).name for c in out["citations"]} == {"second.txt"}
    assert all("first.txt" not in s for s in json.dumps(out, default=str).split('"source"')[1:])


# -- caps that hold by the count that matters ------------------------------------------------------


def test_an_unsplittable_word_is_counted_by_its_characters():
    counter = wordpiece_counter()
    giant = "x" * 200_000  # one "word" the vocabulary cannot split: once counted as 1 token
    assert counter.count(giant) >= 200_000 // 4
    assert counter.count_many([giant, "two words"]) == [counter.count(giant), 2]


def test_lc_never_selects_more_than_its_window_of_a_single_line_document(home):
    line = "lamp" + "z" * 60_000 + " In 1904 the oil lamp was replaced.\n\n" + LIGHTHOUSE
    out = run(home, {"question": QUESTION, "texts": [line]}, strategy="lc", context_window=2000)
    counter = wordpiece_counter()
    assert out["status"] == "evidence-only"
    assert sum(counter.count(e["text"]) for e in out["evidence"]) <= 2000


def test_a_recovered_table_stays_inside_the_budget():
    rows = "\n".join(f"| row {i} | {i * 7} |" for i in range(3000))
    doc = document_from_text(f"Intro paragraph.\n\n| name | value |\n|---|---|\n{rows}\n\nOutro.", source="t")
    table = next(p for p in doc.paragraphs if p.is_table)
    start = table.start + 40
    cut = Passage(
        doc_id=doc.doc_id, source="t", start=start, end=start + 80, text=doc.text[start : start + 80], chunk_indexes=[0]
    )
    assert recover_tables(cut, doc, max_tokens=500) == cut  # a 3,000-row table is not pulled in whole
    assert recover_tables(cut, doc).end == table.end  # without a cap, it would be


# -- bounded work ----------------------------------------------------------------------------------


def test_reply_parsing_reads_a_bounded_prefix():
    hidden = "x{ " * 10_000 + '{"status": true}'  # a verdict only after MAX_PARSE_CHARS of noise
    assert len(hidden) > MAX_PARSE_CHARS
    assert parse_dict(hidden) is None and parse_bool("noise " * 5000 + "true") is None
    assert parse_dict('noise {"status": false}') == {"status": False}


@pytest.mark.parametrize("fault", [{"delay_s": 15.0}, {"trickle_s": 0.5}])
def test_a_hanging_or_trickling_server_ends_at_the_run_deadline(home, fault):
    with OpenAIStub(**fault) as stub:
        run(home, {"question": QUESTION, "texts": [LIGHTHOUSE]})  # indexed outside the timed part
        t0 = time.perf_counter()
        out = run(
            home,
            {"question": QUESTION, "texts": [LIGHTHOUSE]},
            model="openai:stub-model",
            base_url=stub.base_url,
            timeout_s=1.0 if "trickle_s" in fault else 60,
            deadline_s=5.0,  # room for the run's own steps on a loaded machine before its model call
            max_retries=2,
        )
        elapsed = time.perf_counter() - t0
    assert out["status"] == "error" and elapsed < 10
    assert "deadline" in out["error"] or "no complete reply within 1.0 s" in out["error"], out["error"]
    (record,) = out["usage"]  # the call is on the ledger, charged as a timeout
    assert record["outcome"] == "timeout" and record["estimated"] is True


def test_retries_stop_at_the_run_deadline(home):
    """Each retry gets what is left of the deadline, and none starts after it."""
    with OpenAIStub(fail_first=10**9, retry_after_ms=700) as stub:
        run(home, {"question": QUESTION, "texts": [LIGHTHOUSE]})  # indexed outside the timed part
        out = run(
            home,
            {"question": QUESTION, "texts": [LIGHTHOUSE]},
            model=STUB,
            base_url=stub.base_url,
            deadline_s=1.0,
            max_retries=5,
        )
        n_requests = len(stub.requests)
    assert out["status"] == "error" and "deadline" in out["error"], out["error"]
    assert n_requests < 6  # not every retry ran: the deadline ended them
    assert len(out["usage"]) == n_requests and all(r["outcome"] == "error" for r in out["usage"])


def test_a_caller_cannot_raise_the_limits():
    for field, value in [("max_retries", 50), ("primary_k", 100_000), ("lc_top_chunks", 10**6), ("deadline_s", 0)]:
        with pytest.raises(ValueError):
            RunContext(**{field: value})
        with pytest.raises(ValueError):
            Settings(**{field: value})


def test_an_index_run_builds_at_most_three_granularities(home):
    out = index_graph.invoke(
        {"texts": [LIGHTHOUSE], "granularities": [64, 96, 128, 150, 256, 512]}, context={"home": str(home)}
    )
    assert out["error"] == "input: at most 3 granularities per run (got 6)" and out["chunks"] == {}


# -- leftovers and lies ----------------------------------------------------------------------------


@pytest.mark.parametrize("usage", [{"prompt_tokens": -50}, {"completion_tokens": 4e12}, {"prompt_tokens": "many"}])
def test_the_ledger_takes_no_nonsense_from_the_server(home, usage):
    with OpenAIStub(reply_fn=lambda messages: "In 1904.", usage_override=usage) as stub:
        out = run(
            home, {"question": QUESTION, "texts": [LIGHTHOUSE]}, model="openai:stub-model", base_url=stub.base_url
        )
    assert out["status"] == "answered"
    assert all(isinstance(r["input_tokens"], int) and 0 <= r["input_tokens"] < 10**6 for r in out["usage"])
    assert all(r["estimated"] for r in out["usage"]) and out["totals"]["cost"] < 10**6


def test_an_empty_reply_is_a_named_error_not_error_none(home):
    with OpenAIStub(reply_fn=lambda messages: "") as stub:
        out = run(
            home, {"question": QUESTION, "texts": [LIGHTHOUSE]}, model="openai:stub-model", base_url=stub.base_url
        )
    assert out["status"] == "error" and out["error"] == "generate: the model's reply was empty"
    assert out["messages"][-1].content.startswith("Error: generate: the model's reply was empty")


def test_a_killed_builds_leftovers_are_removed_by_the_next_build(tmp_path, make_store):
    store = make_store(tmp_path / "home")
    doc = document_from_text(LIGHTHOUSE * 3, source="t")
    store.remember(doc)
    stale = store.doc_dir(doc.doc_id) / ".g96.tmp-killed"
    stale.mkdir(parents=True)
    (stale / "chunks.json").write_text("[")
    store.index(doc, 96, dense=False)
    assert not stale.exists() and list(store.doc_dir(doc.doc_id).glob(".g*.tmp-*")) == []


def test_of_two_concurrent_builds_only_the_one_that_built_says_so(tmp_path, make_store):
    doc = document_from_text(LIGHTHOUSE * 5, source="t")
    stores = [make_store(tmp_path / "shared"), make_store(tmp_path / "shared")]  # two processes' worth
    results: list = []
    threads = [threading.Thread(target=lambda s=s: results.append(s.build(doc, 96, dense=False))) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.chunked for r in results) == [False, True]


# -- generated: documents, questions, inline inputs (seeded, bounded) ------------------------------


def _random_bytes(rng: random.Random) -> bytes:
    kind = rng.choice(["noise", "text+noise", "controls", "utf16-odd", "bom-junk", "latin"])
    text = LIGHTHOUSE.encode()
    if kind == "noise":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
    if kind == "text+noise":
        at = rng.randrange(len(text))
        return text[:at] + bytes(rng.randrange(128, 256) for _ in range(rng.randrange(1, 40))) + text[at:]
    if kind == "controls":
        return bytes(rng.choice([7, 8, 27, 127, 65, 32, 10]) for _ in range(rng.randrange(1, 2000)))
    if kind == "utf16-odd":
        return b"\xff\xfe" + LIGHTHOUSE.encode("utf-16-le")[: rng.randrange(1, 200)] + b"\x00"
    if kind == "bom-junk":
        return b"\xef\xbb\xbf" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 500)))
    return LIGHTHOUSE.replace("lamp", "lampé").encode("latin-1")


def test_generated_hostile_files_load_cleanly_or_are_refused_by_name(tmp_path):
    rng = random.Random(SEED)
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(60):
        path = tmp_path / f"fuzz-{i}.txt"
        path.write_bytes(_random_bytes(rng))
        try:
            doc = load_document(path)
        except DocumentError as e:
            assert str(e).startswith(f"{path}: ") and e.reason
            outcomes["refused"] += 1
            continue
        outcomes["loaded"] += 1
        assert doc.text.strip() and not any(ord(c) < 32 and c not in "\t\n\f" for c in doc.text)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in doc.text)
        json.dumps(doc.model_dump())  # serialisable (no surrogates, no bytes)
    assert outcomes["loaded"] and outcomes["refused"]  # the generator reaches both outcomes


def test_generated_hostile_questions_and_inputs_never_crash_the_graph(home):
    rng = random.Random(SEED + 1)
    alphabet = ["a", " ", "?", "\x00", "\x1b", "\ud83d", "\udc00", "é", "灯", "\u202e", "\n", "'", '"', "{", "}"]
    statuses = set()
    for _ in range(25):
        question = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        texts = rng.choice([[LIGHTHOUSE], [LIGHTHOUSE, ""], [" \n "], LIGHTHOUSE, [question or "x"]])
        out = run(home, {"question": question, "texts": texts})
        statuses.add(out["status"])
        assert out["status"] in ("evidence-only", "error")
        if out["status"] == "error":
            assert out["error"].startswith("input: ") and len(out["error"]) < 400
        else:
            assert not any(0xD800 <= ord(c) <= 0xDFFF for c in out["messages"][0].content)
    assert statuses == {"evidence-only", "error"}


def test_inline_texts_are_kept_only_as_long_as_the_setting_says(tmp_path):
    home = tmp_path / "home"
    first = run(home, {"question": QUESTION, "texts": [LIGHTHOUSE]})
    (doc_id,) = {c["doc_id"] for c in first["citations"]}
    doc_dir = home / "index" / doc_id
    assert (doc_dir / "document.json").exists()
    (doc_dir / "inline-used-at").write_text(str(time.time() - 3600))  # last used an hour ago
    run(home, {"question": QUESTION, "texts": ["Another text about harbours and their cranes."]}, inline_keep_s=7200)
    assert doc_dir.exists()  # within the setting: kept
    run(home, {"question": QUESTION, "texts": ["Another text about harbours and their cranes."]}, inline_keep_s=60)
    assert doc_dir.exists()  # a question over an input already indexed is a reader: it collects nothing
    run(home, {"question": QUESTION, "texts": ["A third text, about tugboats."]}, inline_keep_s=60)
    assert doc_dir.exists()  # a question over new input writes it, but never runs garbage collection
    index_graph.invoke({"texts": ["A fourth text, about pilots."]}, context={"home": str(home), "inline_keep_s": 60})
    assert not doc_dir.exists()  # past it, at the next index run: its text, chunks and vectors are gone
    again = run(home, {"question": QUESTION, "texts": [LIGHTHOUSE]})  # and it is simply indexed again when sent
    assert again["status"] == "evidence-only" and (doc_dir / "document.json").exists()
