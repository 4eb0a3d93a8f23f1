"""`longqa_tool` reads only what its builder allowed and ends at its deadline (longqa/runner/agent_tool.py,
longqa/runner/tool_scope.py). An auditor's model called it with `documents=["/"]`: it walked the whole
filesystem (other users' files, OCR of a 60-page PDF), ran on at ~400 s with deadline_s=30 and left
7,773 documents in the index home; a file outside the default documents was read without complaint.

Every refusal and every bad argument is one line of tool content starting "longqa error:", never an
exception. Answers come from the scripted model (not a language model): these check the bounds."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from longqa.contracts.settings import Settings

from .test_agent_embedding import CARTOGRAPHER_Q, FACTS, document_text, not_a_server  # noqa: F401 (its autouse fixture)

SECRET = "The root password is HUNTER-2-SECRET."


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """docs/ (the tool's default documents: the yearbook and a subfolder) beside a secret it must not read,
    with links from inside docs/ to it."""
    base = tmp_path_factory.mktemp("tool-bounds")
    docs = base / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "yearbook.md").write_text(document_text(list(FACTS.values())), "utf-8")
    (docs / "sub" / "registry.md").write_text(document_text([FACTS["cartographer"]], seed=11), "utf-8")
    (base / "secret").mkdir()
    (base / "secret" / "passwords.md").write_text(f"# Secrets\n\n{SECRET}\n", "utf-8")
    (docs / "notes.md").symlink_to(base / "secret" / "passwords.md")
    (docs / "elsewhere").symlink_to(base / "secret", target_is_directory=True)
    return base


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tool-bounds-home")


def settings(home: Path, **fields) -> Settings:
    return Settings(model="scripted", home=home, strategy="rag", **fields)


def call(tool, **args):
    return tool.invoke({"type": "tool_call", "id": "call_1", "name": "ask_documents", "args": args})


def assert_refused(message, *words: str) -> None:
    assert message.content.startswith("longqa error: input: ") and "\n" not in message.content, message.content
    assert message.artifact["status"] == "error"
    assert all(w in message.content for w in words), message.content
    assert SECRET not in message.content


def test_root_and_an_outside_file_are_refused_without_walking(tree, tmp_path, monkeypatch):
    from longqa.runner import agent_tool, tool_scope

    def no_walk(*a, **k):
        raise AssertionError("walked a path the tool may not read")

    monkeypatch.setattr(tool_scope.os, "walk", no_walk)
    monkeypatch.setattr(agent_tool.graph, "stream", no_walk)  # the graph never runs: nothing read, nothing indexed
    fresh = tmp_path / "home"
    tool = agent_tool.longqa_tool(default_documents=[str(tree / "docs")], settings=settings(fresh, deadline_s=30))
    for path in ("/", str(Path(__file__).resolve()), str(tree / "secret" / "passwords.md"), "/etc"):
        t0 = time.monotonic()
        message = call(tool, question="What is the root password?", documents=[path])
        assert time.monotonic() - t0 < 2
        assert_refused(message, "outside the documents this tool may read")
    monkeypatch.setattr(agent_tool.graph, "astream", no_walk)
    request = {
        "type": "tool_call",
        "id": "call_2",
        "name": "ask_documents",
        "args": {"question": "?", "documents": "/"},
    }
    assert_refused(asyncio.run(tool.ainvoke(request)), "outside")  # the async path: the same check
    assert not fresh.exists() or not any(fresh.iterdir())


def test_escapes_by_dotdot_and_by_links_are_refused(tree, home):
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(default_documents=[str(tree / "docs")], settings=settings(home))
    docs = tree / "docs"
    for path in (
        f"{docs}/../secret/passwords.md",  # `..` out of the folder
        f"{docs}/sub/../../secret",
        str(docs / "notes.md"),  # a link in the folder to a file outside it
        str(docs / "elsewhere"),  # a link to a folder outside it
        str(docs / "elsewhere" / "passwords.md"),
    ):
        assert_refused(call(tool, question="What is the root password?", documents=[path]), "outside")


def test_paths_inside_are_answered(tree, home):
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(default_documents=[str(tree / "docs")], settings=settings(home))
    docs = tree / "docs"
    for documents in ([str(docs / "sub" / "registry.md")], str(docs / "sub"), [f"{docs}/sub/../yearbook.md"]):
        message = call(tool, question=CARTOGRAPHER_Q, documents=documents)  # one string too
        assert message.artifact["status"] == "answered", message.content
        assert "Bastien Okafor" in message.content
        assert SECRET not in message.content
    # the defaults, when the call names none; the folder's link out of it is not followed
    message = call(tool, question=CARTOGRAPHER_Q)
    assert message.artifact["status"] == "answered" and SECRET not in message.content
    assert any("notes.md" in s and "not followed" in s for s in message.artifact["skipped"])


def test_allowed_roots_widen_what_the_model_may_name(tree, home):
    """A builder's `allowed_roots`: the model may name any file in them, besides the default documents."""
    from longqa.runner.agent_tool import longqa_tool

    docs = tree / "docs"
    tool = longqa_tool([str(docs / "yearbook.md")], settings(home), allowed_roots=[docs / "sub"])
    message = call(tool, question=CARTOGRAPHER_Q, documents=[str(docs / "sub" / "registry.md")])
    assert message.artifact["status"] == "answered" and "Bastien Okafor" in message.content
    assert {c["source"] for c in message.artifact["citations"]} == {str(docs / "sub" / "registry.md")}
    assert_refused(call(tool, question=CARTOGRAPHER_Q, documents=[str(docs)]), "outside")
    # no default documents and no roots: the model may name nothing
    bare = longqa_tool(settings=settings(home))
    assert_refused(call(bare, question=CARTOGRAPHER_Q, documents=[str(docs)]), "has none")


def test_a_call_may_name_at_most_max_files(tmp_path, monkeypatch):
    from longqa.runner import agent_tool

    monkeypatch.setattr(agent_tool.graph, "stream", lambda *a, **k: pytest.fail("the graph ran"))
    big = tmp_path / "big"
    (big / "deeper").mkdir(parents=True)
    for i in range(8):
        (big / f"{i}.md").write_text("x", "utf-8")
        (big / "deeper" / f"{i}.md").write_text("x", "utf-8")
    (big / ".hidden.md").write_text("x", "utf-8")  # not walked by the graph, not counted
    tool = agent_tool.longqa_tool([str(tmp_path)], settings(tmp_path / "home"), max_files=10)
    assert_refused(call(tool, question="q?", documents=[str(big)]), "more than 10 files")
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"documents": ["x"]}, "'question' is missing"),
        ({"question": None}, "'question' must be a string (got null)"),
        ({"question": 7}, "'question' must be a string (got int)"),
        ({"question": "q?", "documents": {"a": "b"}}, "'documents' must be a list of paths"),
        ({"question": "q?", "documents": ["a.md", 3]}, "(got int at position 1)"),
    ],
)
def test_bad_arguments_are_one_line(home, args, expected):
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(["/nonexistent-default"], settings(home))
    direct = tool.invoke(args)  # called directly: the line, not a ValidationError
    assert isinstance(direct, str) and direct.startswith("longqa error: input: ") and "\n" not in direct
    assert expected in direct, direct
    message = call(tool, **args)  # from an agent: a tool message the model reads
    assert message.content == direct and message.status == "error"


def test_a_nul_in_a_path_is_a_clear_error(tree, home):
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool([str(tree / "docs")], settings(home))
    for documents in (f"{tree}/docs/a\x00b.md", [str(tree / "docs" / "yearbook.md"), "x\x00"]):
        assert_refused(call(tool, question=CARTOGRAPHER_Q, documents=documents), "NUL")


def slow_reader(monkeypatch, per_file_s: float) -> list[str]:
    """Every file read takes `per_file_s` (deterministic slow indexing); the paths read, in order."""
    from longqa.retrieval.read.loaders import load_document
    from longqa.services import inputs

    read: list[str] = []

    def reader(settings, question):
        def load(path, max_words):
            time.sleep(per_file_s)
            read.append(str(path))
            return load_document(path, max_words=max_words)

        return load

    monkeypatch.setattr(inputs, "_file_reader", reader)
    return read


def settled(read: list[str], quiet_s: float = 0.6, limit_s: float = 10.0) -> int:
    """How many files were read once reading has stopped (no new one for `quiet_s`)."""
    end, n = time.monotonic() + limit_s, -1
    while len(read) != n and time.monotonic() < end:
        n = len(read)
        time.sleep(quiet_s)
    assert len(read) == n, "the run went on reading after the tool returned"
    return n


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_the_deadline_stops_a_long_indexing(tmp_path, monkeypatch, mode):
    from longqa.runner.agent_tool import STOP_GRACE_S, longqa_tool

    many = tmp_path / "many"
    many.mkdir()
    n_files = 300
    for i in range(n_files):
        (many / f"note-{i:03}.md").write_text(f"Note {i}: the ledger entry {i} was filed.\n", "utf-8")
    read = slow_reader(monkeypatch, 0.03)  # 9 s of reading
    deadline = 1.5
    tool = longqa_tool([str(many)], settings(tmp_path / "home", deadline_s=deadline))
    request = {"type": "tool_call", "id": "call_1", "name": "ask_documents", "args": {"question": "Which entry?"}}
    t0 = time.monotonic()
    message = tool.invoke(request) if mode == "invoke" else asyncio.run(tool.ainvoke(request))
    took = time.monotonic() - t0
    assert deadline <= took < deadline + STOP_GRACE_S + 1.0, took
    assert message.content.startswith("longqa error: deadline: ") and "\n" not in message.content
    assert "deadline_s=1.5 s" in message.content and "while reading and indexing" in message.content
    assert message.artifact["status"] == "error"
    assert settled(read) < n_files  # stopped at its next check, not all files read
    assert not list((tmp_path / "home").glob("libraries/*/manifest.json"))  # no library published with a part


def test_counting_a_folder_stops_at_the_deadline(tree):
    import threading

    from longqa.runner.tool_scope import WalkStopped, count_files

    stop = threading.Event()
    # yearbook.md, sub/registry.md and the link notes.md (walked, then skipped); the link to a folder is not walked
    assert count_files([tree / "docs"], limit=100, stop=stop) == 3
    assert count_files([tree / "docs"], limit=1, stop=stop) == 2  # no further than the limit + 1
    stop.set()
    with pytest.raises(WalkStopped):
        count_files([tree / "docs"], limit=100, stop=stop)


def test_the_documents_root_is_the_scope_without_defaults(tree, home):
    """No default documents and no allowed_roots: the settings' documents root (LONGQA_DOCUMENTS_ROOT) is
    where the model may read; a relative path is under it, as the graph reads it."""
    from longqa.runner.agent_tool import longqa_tool

    tool = longqa_tool(settings=settings(home, documents_root=tree / "docs"))
    message = call(tool, question=CARTOGRAPHER_Q, documents=["sub/registry.md"])
    assert message.artifact["status"] == "answered" and "Bastien Okafor" in message.content
    assert {c["source"] for c in message.artifact["citations"]} == {"sub/registry.md"}
    for path in ("../secret/passwords.md", "notes.md", str(tree / "secret")):
        assert_refused(call(tool, question="What is the root password?", documents=[path]), "outside")
