"""`longqa index` and `longqa search`, run in-process with LONGQA_HOME in a temporary directory."""

from __future__ import annotations

import json
import re

import pytest

from longqa.cli import main
from longqa.cli.commands import main as in_process
from longqa.retrieval.read.loaders import load_document

from .conftest import RARE_CODE, harbor_text

SUMMARY = re.compile(
    r"^library '(?P<library>[\w.-]+)' version (?P<version>\d+): (?P<added>\d+) added, (?P<changed>\d+) changed, "
    r"(?P<removed>\d+) removed, (?P<unchanged>\d+) unchanged(, (?P<skipped>\d+) skipped)?; "
    r"(?P<vectors>[\d,]+) vectors embedded; (?P<documents>\d+) document\(s\), (?P<words>[\d,]+) words; "
    r"(?P<sizes>(g=\d+: [\d,]+ chunks(, )?)+); (?P<seconds>[\d.]+) s; "
    r"(?P<seen>[\d,]+) file\(s\) seen: (?P<indexed>[\d,]+) indexed(, (?P<why>.+))?$"
)
RESULT_LINE = re.compile(
    r"^#(?P<rank>\d+) score=(?P<score>[\d.]+) dense=(?P<dense>-|-?[\d.]+) "
    r"bm25=(?P<bm25>-|[\d.]+) (?P<source>.+) chunk (?P<chunk>\d+) "
    r"chars (?P<start>\d+)-(?P<end>\d+) \((?P<tokens>\d+) tok\)$"
)


@pytest.fixture
def report(tmp_path):
    path = tmp_path / "harbor report.md"
    path.write_text(harbor_text(8), encoding="utf-8")
    return path


def index_output(out: str) -> tuple[list[str], re.Match]:
    """(the per-document lines, the summary line) of `longqa index`."""
    lines = [line for line in out.splitlines() if line.strip()]
    summary = SUMMARY.match(lines[-1])
    assert summary, out
    return lines[:-1], summary


def chunks_at(summary: re.Match) -> dict[str, int]:
    return {g: int(n.replace(",", "")) for g, n in re.findall(r"g=(\d+): ([\d,]+) chunks", summary["sizes"])}


def test_index_prints_what_changed_and_then_that_nothing_did(report, capsys, embedder, isolated_longqa_home):
    assert main(["index", str(report)]) == 0
    lines, built = index_output(capsys.readouterr().out)
    assert lines == [f"added: {report}"]
    document = load_document(report)
    assert (built["version"], built["added"], built["documents"]) == ("1", "1", "1")
    assert int(built["words"].replace(",", "")) == document.n_words
    assert chunks_at(built)["150"] >= 2 and int(built["vectors"].replace(",", "")) >= chunks_at(built)["150"]
    assert (isolated_longqa_home / "index" / document.doc_id / "g150" / "manifest.json").exists()
    assert (isolated_longqa_home / "libraries" / built["library"] / "manifest.json").exists()

    calls = embedder.calls
    assert main(["index", str(report)]) == 0
    lines, cached = index_output(capsys.readouterr().out)
    assert lines == [] and (cached["version"], cached["unchanged"], cached["vectors"]) == ("1", "1", "0")
    assert cached["library"] == built["library"] and chunks_at(cached) == chunks_at(built)
    assert embedder.calls == calls


def test_quiet_index_prints_its_summary_alone(report, capsys):
    assert main(["index", "-q", str(report)]) == 0
    out = capsys.readouterr().out
    lines, summary = index_output(out)
    assert lines == [] and (summary["seen"], summary["indexed"], summary["why"]) == ("1", "1", None), out


def _asked(capsys, *args: str) -> str:
    """What an in-process `longqa ask` wrote to stderr (its progress and trace), its answer block checked."""
    assert in_process(["ask", "--no-warm", *args]) == 0
    captured = capsys.readouterr()
    assert "Evidence:" in captured.out, captured.out
    return captured.err


def test_asking_one_file_of_an_indexed_folder_reads_and_searches_that_file_only(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LONGQA_MODEL", "")
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(4):
        (folder / f"other{i}.md").write_text(harbor_text(2) + f"\n\nOther file {i} mentions cargo too.\n", "utf-8")
    cargo = folder / "cargo.md"
    cargo.write_text("Cargo volumes rose by a fifth in the second quarter, led by grain.\n", "utf-8")
    assert main(["index", "-q", str(folder)]) == 0
    capsys.readouterr()
    err = _asked(capsys, str(cargo), "How much did cargo volumes rise?")
    assert not re.search(r"read \d+/\d+ files", err) and "1 document(s)" in err, err  # unchanged: stats only
    (folder / "other0.md").write_text("Changed since it was indexed: more cargo.\n", "utf-8")
    cargo.write_text("Cargo volumes rose by a third in the second quarter, led by grain.\n", "utf-8")
    err = _asked(capsys, str(cargo), "How much did cargo volumes rise?")
    assert "prepare: read 1/1 files" in err and "read 5/5" not in err, err  # the changed other file is not read
    assert "1 document(s)" in err and "1 changed" in err, err
    assert in_process(["ask", "--no-warm", "-q", "--json", str(cargo), "How much did cargo volumes rise?"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {c["source"] for c in result["evidence"]} == {str(cargo)}
    assert any("a third" in c["text"] for c in result["evidence"])  # the file as it is now


def test_index_several_granularities(report, capsys):
    assert main(["index", str(report), "-g", "40", "64"]) == 0
    _, summary = index_output(capsys.readouterr().out)
    sizes = chunks_at(summary)
    assert list(sizes) == ["40", "64"] and sizes["40"] > sizes["64"]


def test_an_index_run_builds_at_most_three_distinct_granularities(report, capsys):
    """Seen: `-g 100 200 300 400` built four (the servers refuse a fourth), `-g 150 150` printed g=150 twice and
    `-g 100000000` was taken."""
    assert main(["index", str(report), "-g", "40", "64", "80", "96"]) == 2
    assert "at most 3 granularities per index run (got 4: 40, 64, 80, 96)" in capsys.readouterr().err
    assert main(["index", str(report), "-g", "40", "40", "40", "40"]) == 0
    _, summary = index_output(capsys.readouterr().out)
    assert list(chunks_at(summary)) == ["40"]
    with pytest.raises(SystemExit):
        main(["index", str(report), "-g", "100000000"])
    assert "granularity must be 8 to 4,096 tokens (got 100,000,000)" in capsys.readouterr().err


def test_home_option_overrides_the_environment(report, capsys, tmp_path, isolated_longqa_home):
    home = tmp_path / "elsewhere"
    assert main(["--home", str(home), "index", str(report), "-g", "40"]) == 0
    assert index_output(capsys.readouterr().out)[1]["added"] == "1"
    assert (home / "index").is_dir() and (home / "libraries").is_dir()
    assert not (isolated_longqa_home / "index").exists()


def test_search_prints_ranked_chunks_with_scores_and_offsets(report, capsys):
    argv = ["search", str(report), f"{RARE_CODE} harbor", "--k", "2", "--mode", "bm25", "--weights", "3:2", "-g", "40"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert header.startswith(f"2 chunks for '{RARE_CODE} harbor' (mode=bm25, g=40, weights dense:bm25=3:2, ")
    results = [m for m in map(RESULT_LINE.match, out.splitlines()) if m]
    assert [m["rank"] for m in results] == ["1", "2"]
    scores = [float(m["score"]) for m in results]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0
    assert all(m["dense"] == "-" and float(m["bm25"]) > 0 for m in results)  # bm25 mode
    text = load_document(report).text
    top = text[int(results[0]["start"]) : int(results[0]["end"])]
    assert RARE_CODE in top
    assert results[0]["source"] == str(report.resolve())
    assert "   " + " ".join(top.split())[:300] in out.splitlines()


def test_search_hybrid_prints_both_scores(report, capsys):
    assert main(["search", str(report), "Which storm closed the harbor?", "-k", "3", "-g", "40", "--width", "40"]) == 0
    out = capsys.readouterr().out
    results = [m for m in map(RESULT_LINE.match, out.splitlines()) if m]
    assert len(results) == 3
    assert "mode=hybrid" in out.splitlines()[0] and "dense:bm25=1:1" in out.splitlines()[0]
    assert any(m["dense"] != "-" and m["bm25"] != "-" for m in results)
    snippets = [line for line in out.splitlines() if line.startswith("   ")]
    assert len(snippets) == 3 and all(len(s) <= 3 + 40 for s in snippets)


@pytest.mark.parametrize("weights", ["3-2", "a:b", "1:2:3", "0:0", "-1:2", "nan:1"])
def test_bad_weights_are_a_usage_error(report, capsys, weights):
    with pytest.raises(SystemExit) as e:
        main(["search", str(report), "storm", f"--weights={weights}"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--weights" in err and "weights must" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--k", "0"], "must be at least 1"),
        (["--depth", "-2"], "must be at least 1"),
        (["--k", "two"], "expected a whole number"),
        (["-g", "4"], "granularity must be 8 to 4,096 tokens"),
        (["--set", "timeout_s=nan"], "timeout_s: must be a finite number (got 'nan')"),
        (["--set", "context_window=-inf"], "context_window: must be a finite number"),
        (["--width", "-5"], "must be at least 1 (got -5)"),
    ],
)
def test_bad_numbers_are_a_usage_error(report, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        main(["search", str(report), "storm", *args])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "says"),
    [("", "--collection: a collection name cannot be empty"), ("a" * 300, "is 300 characters; at most 128")],
)
def test_a_bad_collection_name_says_what_is_wrong_with_it(report, capsys, name, says):
    """Seen: `--collection ""` was ignored (the default library searched) and a 300-character name was refused for
    its letters and echoed whole."""
    assert main(["search", str(report), "storm", "--collection", name]) == 2
    err = capsys.readouterr().err
    assert says in err and "a" * 100 not in err


def test_an_empty_question_is_a_usage_error(report, capsys):
    with pytest.raises(SystemExit) as e:
        main(["ask", "--no-warm", str(report), "   "])
    assert e.value.code == 2 and "the question is empty" in capsys.readouterr().err


def test_empty_query_is_a_usage_error(report, capsys):
    with pytest.raises(SystemExit) as e:
        main(["search", str(report), "   "])
    assert e.value.code == 2
    assert "the query is empty" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["index"], ["search"]])
def test_missing_file_is_a_clear_error(tmp_path, capsys, command):
    missing = tmp_path / "nowhere.md"
    extra = ["some query"] if command == ["search"] else []
    assert main([*command, str(missing), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"longqa: error: {missing.resolve()}: file not found"
    assert "Traceback" not in captured.err and captured.out == ""


def test_unreadable_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "data.txt"
    path.write_bytes(b"\x00\x01\x02binary")
    assert main(["index", str(path)]) == 2
    assert "binary file" in capsys.readouterr().err


def test_interrupted_index_exits_130_and_rebuilds_next_time(report, capsys, embedder, monkeypatch):
    def interrupt(texts, progress=None, pool=False):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(embedder, "embed", interrupt)
        assert main(["index", str(report), "-g", "40"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert main(["index", str(report), "-g", "40"]) == 0
    # the interrupted run published nothing: this one adds the document, embedding every vector
    lines, summary = index_output(capsys.readouterr().out)
    assert lines == [f"added: {report}"] and summary["version"] == "1"
    assert int(summary["vectors"]) >= chunks_at(summary)["40"] > 0


@pytest.mark.parametrize(
    "command, options",
    [
        ("index", ["--granularity"]),
        ("search", ["--k", "--mode", "--weights", "--depth", "--granularity"]),
    ],
)
def test_help(capsys, command, options):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: longqa {command}")
    for option in options:
        assert option in out
