"""bench/grounding_kept.py on known runs: answerable kept (and right replies declined) and planted unanswerable
declined per run and set, the model and commit the records name, and each item whose outcome differs listed with
the reply judged and how."""

from __future__ import annotations

import json
from pathlib import Path

from bench.grounding_kept import main


def _run(
    tmp_path: Path, name: str, data: Path, outcomes: list[tuple[str, str, str | None]], reasked: dict | None = None
) -> str:
    """A longqa eval folder: one default record per item (status, judged reply, grounding method)."""
    folder = tmp_path / name
    folder.mkdir()
    records = [
        {
            "id": f"q{i}",
            "dataset": "tatqa",
            "strategy": "adaptive-precise",
            "model": "qwen-1.5b",
            "commit": f"c0ffee{name[0]}",
            "status": status,
            "answer": reply if status == "answered" else None if status == "error" else "unanswerable",
            "judged_answer": reply,
            "grounding": {"answered": "supported", "error": None}.get(status, "unsupported"),
            "grounding_method": method,
            "reasked": (reasked or {}).get(i),
        }
        for i, (status, reply, method) in enumerate(outcomes)
    ]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    per_question = [{"dataset": "tatqa", "id": r["id"], "strategy": r["strategy"]} for r in records]
    report = {"datasets": {"tatqa": {"items": len(records), "files": [str(data)]}}, "per_question": per_question}
    (folder / "report.json").write_text(json.dumps(report), "utf-8")
    return str(folder)


def test_kept_and_declined_per_run_and_the_items_that_changed(tmp_path: Path, capsys) -> None:
    data = tmp_path / "items.jsonl"
    items = [
        {"_id": "q0", "input": "How many global variables does DB2 support?", "answers": ["9"]},
        {"_id": "q1", "input": "What was the revenue in 2019?", "answers": ["5 million"]},
        {"_id": "q2", "input": "Who founded the observatory?", "answers": ["unanswerable"], "unanswerable": True},
        {"_id": "q3", "input": "When did the ferry sail?", "answers": ["unanswerable"], "unanswerable": True},
        {"_id": "q4", "input": "How long is the bridge?", "answers": ["2 km"]},
        {"_id": "q5", "input": "Are all tweets in English?", "answers": ["Unanswerable"]},  # its authors' gold
    ]
    data.write_text("".join(json.dumps(i) + "\n" for i in items), "utf-8")
    before = _run(
        tmp_path,
        "before",
        data,
        [("unanswerable", "9", "lexical"), ("answered", "5 million", "lexical"), ("unanswerable", "Ada", "lexical")]
        + [("unanswerable", "1903", "lexical"), ("error", None, None)]  # an error kept nothing
        + [("unanswerable", "No", "subject")],
    )
    after = _run(
        tmp_path,
        "after",
        data,
        [("answered", "9", "lexical"), ("answered", "5 million", "lexical"), ("unanswerable", "Ada", "lexical")]
        + [("answered", "1903", "lexical"), ("answered", "2 km", "lexical"), ("answered", "No", "lexical")],
        reasked={0: "How many global variables?", 2: "Passage-2"},
    )
    argv = ["--run", f"before={before}", "--run", f"after={after}", "--pair", "before-after", "--asked-again", "after"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # a gold "Unanswerable" is declined rightly: on the unanswerable side, not an answerable question lost
    assert "| tatqa | before | qwen-1.5b | c0ffeeb | 6 | 33.3 (1/3) | 1 | 1 | 100.0 (3/3) |" in out
    assert "| tatqa | after | qwen-1.5b | c0ffeea | 6 | 100.0 (3/3) | 0 | 0 | 33.3 (1/3) |" in out
    assert "Items whose outcome differs, before → after: 4" in out
    assert "| tatqa | unanswerable by its gold | Are all tweets in English? | No | unanswerable: unsupported" in out
    assert "| tatqa | answerable | How long is the bridge? |  | error: not checked | 2 km |" in out
    assert "| tatqa | answerable | How many global variables does DB2 support? | 9 | unanswerable: unsupported" in out
    assert "| tatqa | planted unanswerable | When did the ferry sail? | 1903 |" in out
    assert "Who founded the observatory? | Ada" not in out  # declined by both: not a change
    # the items asked again: the earlier reply, the one after, how it ended, the final answer's F1
    assert "Items where the generator was asked again, after: 2" in out
    asked = "| tatqa | answerable | How many global variables does DB2 support? | How many global variables? | 9 |"
    assert asked in out
    assert "| Passage-2 | Ada | unanswerable: unsupported (lexical) | – |" in out


def test_a_run_that_is_not_an_eval_folder_is_named(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(SystemExit, match="expected NAME=DIR"):
        main(["--run", f"after={tmp_path / 'missing'}"])


def test_a_right_reply_is_close_to_a_gold_or_opens_with_its_yes_or_no() -> None:
    from bench.grounding_kept import right_reply

    assert right_reply("No, Arabic is not one of the 11 languages in CoVost.", ["No"])
    assert right_reply("Yes.", ["yes"]) and right_reply("5 million dollars", ["5 million"])
    assert not right_reply("Yes, it is one of them.", ["No"])
    assert not right_reply("Nothing is said", ["No"])  # "Nothing" is not "No"
    assert not right_reply("Austria", ["Norway"])
