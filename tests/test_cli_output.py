"""What `longqa index` and `longqa ask` print for a person (issue 30, part 4; issue 47, parts 3-4): progress
bars only on a terminal, a file's library warnings named by the file first (no module name) and quiet under -q,
one summary line that accounts for every file seen (hidden ones and those patterns leave out included), passages
shown around the sentence that answers with where they are, no filler, only new skips, `ask -q` printing the
answer and its passages alone, and a subfolder of an indexed folder searched within that folder's library.
Drives the real CLI in a subprocess."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from longqa.cli.console import PlainCounter, Throttle

ENV = {**os.environ, "LONGQA_MODEL": "", "TERM": "xterm"}
ANSWER = "The grain ship Aurora docked at berth four after the pilot boarded her at dawn."


def _broken_xref_pdf(path: Path) -> Path:
    """A PDF whose cross-reference offsets are all off by three bytes: pypdf reads it, warning."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    c.drawString(72, 720, "The harbor pilot boarded the timber ship at dawn near the north quay.")
    c.save()
    data = path.read_bytes()
    at = data.index(b"xref")
    tail = re.sub(rb"(\d{10}) 00000 n", lambda m: b"%010d 00000 n" % (int(m.group(1)) + 3), data[at:])
    path.write_bytes(data[:at] + tail)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli-output") / "docs"
    (root / "sub").mkdir(parents=True)
    filler = " ".join(f"Sentence {i} is about the port's many other matters and its long history." for i in range(8))
    (root / "sub" / "ships.md").write_text(f"{filler} {ANSWER} {filler}\n", "utf-8")  # one paragraph, one chunk
    (root / "sub" / "ibm.md").write_text("IBM.\n", "utf-8")
    (root / "cargo.txt").write_text("Cargo volumes rose by a fifth in the second quarter, led by grain.\n", "utf-8")
    (root / "notes.xyz").write_text("an unsupported file\n", "utf-8")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a PDF\n")
    _broken_xref_pdf(root / "warned.pdf")
    (root / ".draft.md").write_text("a hidden file\n", "utf-8")
    (root / ".cache").mkdir()
    (root / ".cache" / "old.md").write_text("in a hidden folder\n", "utf-8")
    return root


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "longqa.cli", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )


def test_index_to_a_pipe_prints_plain_lines_warnings_named_by_file_and_one_skip_count(tmp_path, folder):
    done = _cli(tmp_path / "home", "index", str(folder))
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "\x1b[" not in done.stderr  # no bar redraws in a log
    assert re.search(r"^reading: \d+/\d+ files$", done.stderr, re.M), done.stderr
    warnings = [line for line in done.stderr.splitlines() if "Ignoring wrong pointing object" in line]
    assert warnings and all(line.startswith(f"{folder / 'warned.pdf'}: ") for line in warnings), done.stderr
    assert "longqa." not in done.stderr and "WARNING" not in done.stderr  # no module name, no level shouted
    assert len(warnings) == 1  # one line per kind of warning, with a count
    summary = next(line for line in done.stdout.splitlines() if line.startswith("library "))
    counted = re.search(r"(\d+) skipped \(", done.stdout)
    assert counted and f", {counted.group(1)} skipped;" in summary, done.stdout
    assert counted.group(1) == "2"  # notes.xyz (unsupported) and broken.pdf (unreadable)
    assert f"added: {folder / 'cargo.txt'}" in done.stdout and f"skipped: {folder / 'notes.xyz'}" in done.stdout


def test_quiet_index_prints_its_summary_line_alone_and_counts_every_file(tmp_path, folder):
    done = _cli(tmp_path / "home", "index", "-q", str(folder))
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert len(done.stdout.splitlines()) == 1 and done.stdout.startswith("library "), done.stdout
    # 5 files read or tried, notes.xyz skipped at the walk, a hidden file and a hidden folder left out
    assert (
        "8 file(s) seen: 4 indexed, 2 skipped (1 unreadable PDF, 1 unsupported type), "
        "2 left out (1 hidden, 1 hidden folder(s))"
    ) in done.stdout, done.stdout


def test_the_summary_counts_what_the_patterns_leave_out(tmp_path, folder):
    done = _cli(tmp_path / "home", "index", "-q", "--exclude", "*.pdf", "--exclude", "sub/**", str(folder))
    assert done.returncode == 0, done.stderr
    assert (
        "8 file(s) seen: 1 indexed, 1 skipped (1 unsupported type), "
        "6 left out (4 excluded, 1 hidden, 1 hidden folder(s))" in done.stdout
    ), done.stdout


def test_index_on_a_terminal_draws_bars(tmp_path, folder):
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a bar needs a width
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "longqa.cli", "--home", str(tmp_path / "home"), "index", str(folder)],
            stdout=subprocess.PIPE,
            stderr=follower,
            env=ENV,
        )
        os.close(follower)
        seen = b""
        while True:
            ready, _, _ = select.select([leader], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(120) == 0
    finally:
        os.close(leader)
    assert b"\r" in seen and b"reading" in seen, seen[:500]


def test_plain_counter_prints_its_first_and_last_lines_and_skips_the_rest_within_its_interval(capsys):
    throttle = Throttle()
    first = PlainCounter(100, "reading", "file", sys.stderr, throttle)
    for _ in range(100):
        first.update()
    per_document = PlainCounter(10, "embedding a.md", "vector", sys.stderr, throttle, final=False)
    per_document.n = 10
    per_document.refresh()
    per_document.close()
    assert capsys.readouterr().err.splitlines() == ["reading: 1/100 files", "reading: 100/100 files"]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, folder) -> Path:
    home = tmp_path_factory.mktemp("cli-output-home")
    done = _cli(home, "index", "-q", str(folder))
    assert done.returncode == 0, done.stderr
    return home


def _libraries(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "libraries").iterdir())


def test_ask_shows_the_passage_around_its_best_match_and_no_skip_index_already_reported(indexed, folder):
    done = _cli(indexed, "ask", "-q", str(folder), "Which ship docked at berth four?")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if "ships.md" in line)
    assert ANSWER in line and "…" in line, line  # the answer's sentence, not the passage's first 320 characters
    # -q: the evidence alone; no note of the missing model, no skips, no usage
    assert done.stdout.splitlines()[0] == "Evidence:", done.stdout
    assert "No LLM" not in done.stdout and "skipped" not in done.stdout.lower(), done.stdout
    plain = _cli(indexed, "ask", str(folder), "Which ship docked at berth four?")
    assert "No LLM configured" in plain.stdout
    assert "Skipped" not in plain.stdout and "(2 file(s) skipped as before; --json lists all)" in plain.stdout
    (folder / "later.xyz").write_text("a file added after indexing\n", "utf-8")
    try:
        again = _cli(indexed, "ask", str(folder), "Which ship docked at berth four?")
        third = _cli(indexed, "ask", str(folder), "Which ship docked at berth four?")
    finally:
        (folder / "later.xyz").unlink()
    assert f"Skipped 1 new file(s): {folder / 'later.xyz'}: unsupported type (.xyz)" in again.stdout, again.stdout
    assert "Skipped" not in third.stdout and "(3 file(s) skipped as before" in third.stdout, third.stdout
    assert len(json.loads(_cli(indexed, "ask", "-q", "--json", str(folder), "Which ship?").stdout)["skipped"]) == 2


def test_asking_over_a_subfolder_searches_the_folders_library(indexed, folder):
    before = _libraries(indexed)
    done = _cli(indexed, "ask", "-q", "--json", str(folder / "sub"), "Which ship docked at berth four?")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert _libraries(indexed) == before  # no library of its own
    sources = {c["source"] for c in result["citations"]}
    assert sources and all(s.startswith(str(folder / "sub")) for s in sources), sources
    assert result["skipped"] == []  # the folder's skips are outside the subfolder
    one_file = _cli(indexed, "ask", "-q", "--json", str(folder / "cargo.txt"), "How much did cargo volumes rise?")
    assert {c["source"] for c in json.loads(one_file.stdout)["citations"]} == {str(folder / "cargo.txt")}
    assert _libraries(indexed) == before


def test_a_subfolder_with_other_patterns_or_no_indexed_parent_gets_a_library_of_its_own(tmp_path, indexed, folder):
    before = _libraries(indexed)
    done = _cli(indexed, "ask", "-q", "--json", "--include", "*.md", str(folder / "sub"), "Which ship?")
    assert done.returncode == 0, done.stderr
    assert len(_libraries(indexed)) == len(before) + 1


def test_an_ask_that_fails_writes_its_error_on_stderr_not_as_the_answer(tmp_path):
    """Seen: `ask` over an empty folder printed `Error: input: no readable documents` on stdout, where a script
    reads the answer."""
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _cli(tmp_path / "home", "ask", str(empty), "Who keeps the lighthouse?", "-q")
    assert done.returncode == 1 and done.stdout == ""
    assert "Error: input: no readable documents" in done.stderr


def test_filler_passages_are_not_shown_unless_cited():
    from longqa.cli.answer import render

    passage = {"source": "a.md", "start": 0, "end": 60, "text": "The grain ship Aurora docked at berth four."}
    filler = {"source": "b.md", "start": 0, "end": 4, "text": "IBM."}
    result = {"status": "evidence-only", "citations": [{**passage, "id": "E1"}, {**filler, "id": "E2"}], "skipped": []}
    out = io.StringIO()
    render(result, out, question="Which ship docked?")
    assert "[E1] a.md" in out.getvalue() and "IBM." not in out.getvalue()
    assert "(1 passage(s) of fewer than 4 words not shown; --json lists all)" in out.getvalue()
    cited = {**result, "status": "answered", "answer": "IBM [E2] owns the Aurora [E1].", "model": "m"}
    out = io.StringIO()
    render(cited, out, question="Who owns the ship?")
    assert "[E2] b.md chars 0-4: IBM." in out.getvalue()


def test_an_excerpt_is_the_whole_of_a_short_passage_and_the_start_when_nothing_matches():
    from longqa.cli.console import excerpt

    long = " ".join(f"Sentence {i} says nothing much." for i in range(60))
    assert excerpt("A short  passage.", "anything") == "A short passage."
    shown = excerpt(long, "Which vessel?", width=100)
    assert shown.startswith("Sentence 0 says") and shown.endswith("…") and len(shown) <= 101
    assert excerpt(long + " The vessel sank.", "Which vessel sank?", width=100).startswith("…")


def test_an_excerpt_shows_the_answer_in_the_middle_of_a_long_passage():
    from longqa.cli.console import excerpt

    before = " ".join(f"Fasteners of kind {i} are listed in the parts catalogue." for i in range(30))
    after = " ".join(f"Section {i} describes other parts of the assembly." for i in range(30))
    passage = f"{before} Wing-type nuts are made of anodized aluminium alloy 6061 and are tightened by hand. {after}"
    assert len(passage) > 3000
    question = "What are the wing-type nuts made of?"
    shown = excerpt(passage, question, answer="They are made of anodized aluminium alloy 6061 [E1].")
    assert "anodized aluminium alloy 6061" in shown and shown.startswith("…") and shown.endswith("…"), shown
    # without an answer, the question's best sentence is the window's middle
    assert "Wing-type nuts are made of anodized aluminium" in excerpt(passage, question)


def test_an_excerpt_shows_the_answer_at_the_end_of_a_passage():
    from longqa.cli.console import excerpt

    verse = " ".join(
        f"Verse {i}: he marched all day across the plain, and when the night came he sought no roof, nor any "
        "shelter from the wind, and lay down beside the road,"
        for i in range(6)
    )
    passage = f"{verse} The earth for his pillow, his curtain the skies."
    question = "What did the soldier sleep on, and what covered him?"
    shown = excerpt(passage, question, answer="The earth was his pillow [E2].")
    assert shown.endswith("The earth for his pillow, his curtain the skies."), shown
    assert "The earth for his pillow" in excerpt(passage, "What was his pillow?")
    # an answer that names nothing in the passage leaves the question to choose
    assert "pillow" in excerpt(passage, "What was his pillow?", answer="unanswerable")


def test_each_passage_is_shown_with_where_it_is_around_the_answer():
    from longqa.cli.answer import render

    filler = " ".join(f"Paragraph {i} covers the harbour's general history and trade." for i in range(20))
    text = f"{filler} The pilot boarded the Aurora at dawn. {filler}"
    cited = {"id": "E1", "source": "harbor.pdf", "start": 10, "end": 10 + len(text), "text": text}
    result = {
        "status": "answered",
        "answer": "At dawn [E1].",
        "model": "m",
        "citations": [{**cited, "page": "3", "section": "2.1 Arrivals"}],
        "skipped": ["x.xyz: unsupported type (.xyz)"],
        "usage": [],
    }
    out = io.StringIO()
    render(result, out, question="When did the pilot board the Aurora?", quiet=True)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["Answer [m]: At dawn [E1].", "Sources:"], lines
    assert lines[2].startswith('  [E1] harbor.pdf page 3 § "2.1 Arrivals" chars 10-'), lines[2]
    assert "boarded the Aurora at dawn" in lines[2]
    assert len(lines) == 3  # quiet: no skipped files, no usage
    out = io.StringIO()
    render(result, out, question="When did the pilot board the Aurora?")
    assert "Skipped 1 file(s): x.xyz" in out.getvalue()
