"""`longqa index` and `longqa search`, run in-process with LONGQA_HOME in a temporary directory."""

from __future__ import annotations

import re

import pytest

from longqa.cli import main
from longqa.retrieval.loaders import load_document

from .conftest import RARE_CODE, harbor_text

INDEX_LINE = re.compile(
    r"^(?P<path>.+): (?P<state>built|embedded|cached) g=(?P<g>\d+): (?P<chunks>\d+) chunks, "
    r"(?P<tokens>[\d,]+) tokens, (?P<words>[\d,]+) words, (?P<vectors>[\d,]+) vectors embedded, "
    r"(?P<seconds>[\d.]+) s "
    r"\(doc (?P<doc>[0-9a-f]{12})\)$"
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


def index_lines(out: str) -> list[re.Match]:
    lines = [INDEX_LINE.match(line) for line in out.splitlines() if line.strip()]
    assert lines and all(lines), out
    return lines


def test_index_prints_counts_and_then_says_cached(report, capsys, embedder, isolated_longqa_home):
    assert main(["index", str(report)]) == 0
    [built] = index_lines(capsys.readouterr().out)
    assert built["path"] == str(report) and built["state"] == "built" and built["g"] == "150"
    document = load_document(report)
    assert built["doc"] == document.doc_id[:12]
    assert int(built["chunks"]) >= 2 and int(built["tokens"].replace(",", "")) > 300
    assert int(built["words"].replace(",", "")) == document.n_words
    assert (isolated_longqa_home / "index" / document.doc_id / "g150" / "manifest.json").exists()

    calls = embedder.calls
    assert main(["index", str(report)]) == 0
    [cached] = index_lines(capsys.readouterr().out)
    assert cached["state"] == "cached" and cached["vectors"] == "0"
    assert int(built["vectors"]) >= int(built["chunks"])
    assert (cached["chunks"], cached["tokens"]) == (built["chunks"], built["tokens"])
    assert embedder.calls == calls


def test_index_several_granularities(report, capsys):
    assert main(["index", str(report), "-g", "40", "64"]) == 0
    lines = index_lines(capsys.readouterr().out)
    assert [(m["state"], m["g"]) for m in lines] == [("built", "40"), ("built", "64")]
    assert int(lines[0]["chunks"]) > int(lines[1]["chunks"])


def test_home_option_overrides_the_environment(report, capsys, tmp_path, isolated_longqa_home):
    home = tmp_path / "elsewhere"
    assert main(["--home", str(home), "index", str(report), "-g", "40"]) == 0
    assert index_lines(capsys.readouterr().out)[0]["state"] == "built"
    assert (home / "index").is_dir()
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
        (["-g", "4"], "granularity must be at least 8"),
    ],
)
def test_bad_numbers_are_a_usage_error(report, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        main(["search", str(report), "storm", *args])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


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
    def interrupt(texts, progress=None):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(embedder, "embed", interrupt)
        assert main(["index", str(report), "-g", "40"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert main(["index", str(report), "-g", "40"]) == 0
    # the chunks were written before embedding began: this run only embeds, and says so
    [line] = index_lines(capsys.readouterr().out)
    assert line["state"] == "embedded" and int(line["vectors"]) >= int(line["chunks"]) > 0


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
