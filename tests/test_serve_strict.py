"""`longqa serve` against the second round of a hostile tenant's tries (issue 45): bodies of the wrong
shape are 422 before any grant is checked (a `documents` object is not a list of its keys), a link
in a tenant's folder to another tenant's file is skipped with its reason and never read, a key
narrower than the one that started a thread does not see it, no response holds a server path, and
an index run's chunk sizes are the deployment's. The real server in its own process, two tenants
(acme, globex) with keys made by `longqa keys add`; answers from the scripted model (an offline test
model, not a language model)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from tests.openai_stub import OpenAIStub
from tests.servers import Replica, add_key, log_text
from tests.test_agent_embedding import FACTS, OBSERVATORY_Q, document_text
from tests.test_serve_access import SECRET, Keys, Server, clean_4xx

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("serve-strict")
    root = base / "root"
    (root / "acme").mkdir(parents=True)
    (root / "globex").mkdir()
    (root / "acme" / "yearbook.md").write_text(document_text(list(FACTS.values())), "utf-8")
    (root / "acme" / "link.md").symlink_to("../globex/plan.md")  # acme's folder, globex's file
    (root / "globex" / "plan.md").write_text(f"# Plan\n\nThe launch code of Globex is {SECRET}.\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_")) and k != "HOME"}
    env["HOME"] = str(base)
    stub = OpenAIStub().start()
    env.update(
        {
            "LONGQA_KEYS_FILE": str(base / "keys.json"),
            "LONGQA_DOCUMENTS_ROOT": str(root),
            "LONGQA_MODEL": "scripted",
            "OPENAI_API_KEY": "stub-key",
            "LONGQA_TOKENIZER": "wordpiece",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    grants = ["--grant", "ask,index"]
    keys = Keys(
        acme=add_key(env, "--tenant", "acme", *grants, "--collections", "acme-lib", "--documents", "acme"),
        globex=add_key(env, "--tenant", "globex", *grants, "--collections", "globex-lib", "--documents", "globex"),
        reader=add_key(env, "--tenant", "acme", "--grant", "ask", "--collections", "acme-lib"),
    )
    wide = add_key(env, "--tenant", "acme", "--grant", "ask", "--collections", "*", "--documents", "*")
    replica = Replica("strict", base / "home", env).start()
    try:
        running = Server(replica, keys, root, stub)
        running.wide = wide  # type: ignore[attr-defined]
        r = running.post("/index", {"collection": "globex-lib", "documents": ["globex"]}, keys.globex)
        assert r.status_code == 200 and r.json()["error"] is None, r.text
        yield running
    finally:
        replica.stop()
        stub.close()


def _no_path(r: httpx.Response, server: Server) -> None:
    assert str(server.root) not in r.text and str(server.replica.home) not in r.text, r.text[:800]
    assert os.path.realpath(server.root) not in r.text


@pytest.mark.parametrize("path", ["/ask", "/index"])
@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"documents": {"globex/plan.md": 1}}, "'documents' must be a list of strings (got dict)"),
        ({"documents": {"globex": 1}, "collection": "acme-lib"}, "'documents' must be a list of strings (got dict)"),
        ({"documents": [["globex/plan.md"]]}, "documents[0] must be a string (got list)"),
        ({"documents": ["acme/yearbook.md", {"globex": 1}]}, "documents[1] must be a string (got dict)"),
        ({"documents": 7}, "'documents' must be a list of strings (got int)"),
        ({"collection": ["acme-lib"]}, "'collection' must be a name (got list)"),
        ({"collection": {"globex-lib": 1}}, "'collection' must be a name (got dict)"),
        ({"collection": 5}, "'collection' must be a name (got int)"),
        ({"documents": ["acme/year\x00book.md"]}, "documents[0] holds a NUL character"),
        ({"include": [{"*.md": 1}]}, "include[0] must be a string (got dict)"),
        ({"texts": {"a": "b"}}, "'texts' must be a list of strings (got dict)"),
    ],
)
def test_a_body_of_the_wrong_shape_is_422_before_any_grant(server: Server, path: str, fields: dict, says: str) -> None:
    body = {"question": OBSERVATORY_Q, **fields} if path == "/ask" else fields
    r = server.post(path, body, server.keys.acme)
    clean_4xx(r, 422, says, server)
    assert SECRET not in r.text


def test_the_refusals_left_no_traceback_in_the_log(server: Server) -> None:
    server.post("/ask", {"question": OBSERVATORY_Q, "documents": ["acme/\x00"]}, server.keys.acme)
    log = log_text(server.replica.log)
    assert "Traceback" not in log and "embedded null byte" not in log, log[-3000:]


def test_a_huge_unknown_setting_name_is_echoed_short(server: Server) -> None:
    name = "x" * 100_000
    r = server.post("/ask", {"question": OBSERVATORY_Q, "context": {name: 1}}, server.keys.acme)
    clean_4xx(r, 422, "unknown setting 'xxxx", server)
    assert len(r.content) < 1000, len(r.content)
    r = server.post("/ask", {"question": OBSERVATORY_Q, name: 1}, server.keys.acme)
    clean_4xx(r, 422, "unknown field(s)", server)
    assert len(r.content) < 1000, len(r.content)


@pytest.mark.parametrize("sizes", [[8], [151], [150, 4096]])
def test_index_chunk_sizes_are_the_deployments(server: Server, sizes: list[int]) -> None:
    r = server.post(
        "/index", {"collection": "acme-lib", "documents": ["acme"], "granularities": sizes}, server.keys.acme
    )
    clean_4xx(r, 422, "is not offered; one of 150, 256, 400, 512 on this server", server)


def test_a_link_leaving_the_keys_folder_is_skipped_and_never_read(server: Server) -> None:
    r = server.post("/index", {"collection": "acme-lib", "documents": ["acme"]}, server.keys.acme)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["error"] is None and SECRET not in r.text, out
    assert "acme/link.md: a link leading out of the folder (not followed)" in out["skipped"], out["skipped"]
    assert out["changes"]["added"] == ["acme/yearbook.md"], out["changes"]
    _no_path(r, server)
    # a question over the folder walks it the same way; the collection does not hold the secret either
    for body in [{"documents": ["acme"]}, {"collection": "acme-lib"}]:
        r = server.post("/ask", {"question": "What is the launch code of Globex?", **body}, server.keys.acme)
        assert r.status_code == 200 and SECRET not in r.text, r.text[:500]
        _no_path(r, server)
    # named directly, the link is where it points: globex's file, refused
    r = server.post("/ask", {"question": "What is the launch code?", "documents": ["acme/link.md"]}, server.keys.acme)
    clean_4xx(r, 403, "may not read 'acme/link.md'", server)


def test_no_response_field_holds_a_server_path(server: Server) -> None:
    bodies = [
        {"question": OBSERVATORY_Q, "documents": ["acme"]},
        {"question": OBSERVATORY_Q, "documents": ["acme/missing.md"]},
        {"question": OBSERVATORY_Q, "collection": "acme-lib", "context": {"strategy": "rag"}},
    ]
    for body in bodies:
        r = server.post("/ask", body, server.keys.acme)
        assert r.status_code == 200, r.text
        _no_path(r, server)
        assert r.json()["trace"], r.json()


def test_a_narrower_key_does_not_see_a_wider_keys_thread(server: Server) -> None:
    acme, reader, wide = server.keys.acme, server.keys.reader, server.wide  # type: ignore[attr-defined]
    turn = {"collection": "acme-lib", "thread_id": "acme-strict-1"}
    first = server.post("/ask", {"question": OBSERVATORY_Q, "documents": ["acme/yearbook.md"], **turn}, acme).json()
    assert first["status"] == "answered" and "Orla Venndt" in first["answer"], first
    # the reader key (no documents) neither continues nor reads it: the thread read a file it may not
    r = server.post("/ask", {"question": "What did I ask before?", **turn}, reader)
    clean_4xx(r, 404, "no thread 'acme-strict-1'", server)
    assert "Orla" not in r.text and OBSERVATORY_Q not in r.text
    # a key of the tenant that reads all does
    out = server.post("/ask", {"question": OBSERVATORY_Q, **turn}, wide).json()
    assert out["status"] == "answered", out
    # the reader's own thread is its own; the wider acme key does not take it over either
    own = {"collection": "acme-lib", "thread_id": "reader-strict-1"}
    assert server.post("/ask", {"question": OBSERVATORY_Q, **own}, reader).json()["status"] == "answered"
    clean_4xx(server.post("/ask", {"question": "x", **own}, acme), 404, "no thread", server)
