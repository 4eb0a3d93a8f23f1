"""`longqa serve`'s application in process (Starlette's test client): what a hostile or careless
caller gets, and a conversation kept by the checkpointer the replica owns. The same app over real
engines and in separate processes is the scale_out tier (tests/test_scale_out.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.test_agent_embedding import CARTOGRAPHER_Q, FACTS, OBSERVATORY_Q, document_text


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from longqa.http.serve import build_app
    from longqa.runner.threads import close_checkpointers

    root = tmp_path / "root"
    root.mkdir()
    (root / "yearbook.md").write_text(document_text(list(FACTS.values())), "utf-8")
    monkeypatch.delenv("LONGQA_SERVER", raising=False)  # build_app serves as a server without it
    monkeypatch.setenv("LONGQA_DOCUMENTS_ROOT", str(root))
    monkeypatch.setenv("LONGQA_MODEL", "scripted")
    monkeypatch.setenv("LONGQA_QUESTION_BUDGET", "0")  # the deployment sets no budget: a caller's 0 is allowed
    monkeypatch.setenv("LONGQA_KEYS_FILE", str(tmp_path / "no-keys.json"))
    # no keys: the server serves this machine's own callers (a loopback address naming a loopback host)
    with TestClient(build_app(), base_url="http://127.0.0.1:8123", client=("127.0.0.1", 50000)) as c:
        yield c
    close_checkpointers()


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        (b"[1, 2]", 400, "must be a JSON object"),
        (b'{"questoin": "x"}', 422, "unknown field(s) 'questoin'"),
        (b'{"question": "x", "context": {"home": "/etc"}}', 422, "home"),
        (b'{"question": "x", "context": {"postgres_uri": "postgresql://evil"}}', 422, "postgres_uri"),
        (b'{"question": "x", "context": {"modle": "scripted"}}', 422, "model"),
        (b'{"question": "x", "context": "fast"}', 422, "context: must be an object of run settings"),
        (b'{"question": "   "}', 422, "'question' must be a non-empty string"),
        (b'{"question": "x", "thread_id": 7}', 422, "'thread_id' must be a string"),
    ],
)
def test_a_bad_request_gets_a_specific_error(client: TestClient, body: bytes, status: int, says: str) -> None:
    r = client.post("/ask", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert says in r.json()["error"], r.json()


def test_bad_documents_end_the_run_with_an_error_in_its_output(client: TestClient) -> None:
    out = client.post("/ask", json={"question": OBSERVATORY_Q, "documents": ["../../etc/passwd"]}).json()
    assert out["status"] == "error" and "outside the allowed documents root" in out["error"]
    out = client.post("/index", json={"collection": "bad name!", "documents": ["yearbook.md"]}).json()
    assert "collection name" in out["error"]
    assert "no documents" in client.post("/index", json={"collection": "ok", "documents": []}).json()["error"]


def test_index_then_a_conversation_on_the_replica(client: TestClient) -> None:
    assert client.get("/health").json()["ok"] is True
    out = client.post("/index", json={"collection": "years", "documents": ["yearbook.md"]}).json()
    assert out["version"] == 1 and out["changes"]["added"] == ["yearbook.md"], out
    # one generate call a turn (as the CLI's thread test): the thread is the subject, through the caller's context
    turn = {"collection": "years", "thread_id": "t", "context": {"analyzer": "llm", "question_budget": 0}}
    first = client.post("/ask", json={"question": OBSERVATORY_Q, **turn}).json()
    assert first["status"] == "answered" and "Orla Venndt" in first["answer"]
    assert {c["source"] for c in first["citations"]} == {"yearbook.md"}
    second = client.post("/ask", json={"question": CARTOGRAPHER_Q, **turn}).json()
    assert second["status"] == "answered" and "Bastien Okafor" in second["answer"]
    assert all(e["query"].startswith(OBSERVATORY_Q) for e in second["evidence"])  # the first turn was kept
    lone = client.post("/ask", json={"question": CARTOGRAPHER_Q, **turn, "thread_id": None}).json()
    assert all(e["query"] == CARTOGRAPHER_Q for e in lone["evidence"])  # no thread: nothing carried


def test_a_replica_fault_is_a_json_500_naming_it(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from longqa.runner import threads

    def database_down(settings):
        raise ConnectionError("connection to 127.0.0.1:5432 refused")

    monkeypatch.setattr(threads, "thread_checkpointer", database_down)
    r = client.post("/ask", json={"question": OBSERVATORY_Q, "documents": ["yearbook.md"], "thread_id": "t"})
    assert r.status_code == 500
    assert r.json() == {"error": "ConnectionError: connection to 127.0.0.1:5432 refused"}


@pytest.mark.parametrize(
    ("base_url", "client_host"),
    [
        ("http://127.0.0.1:8123", "203.0.113.7"),  # another machine
        ("http://rebound.example:8123", "127.0.0.1"),  # a page whose domain now resolves to 127.0.0.1
    ],
)
def test_without_keys_only_this_machine_is_served(
    client: TestClient, base_url: str, client_host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from longqa.http.serve import build_app

    with TestClient(build_app(), base_url=base_url, client=(client_host, 50000)) as other:
        r = other.post("/ask", json={"question": OBSERVATORY_Q, "documents": ["yearbook.md"]})
    assert r.status_code == 401 and "longqa keys add" in r.json()["error"], r.text
    assert client.post("/ask", json={"question": OBSERVATORY_Q, "documents": ["yearbook.md"]}).status_code == 200
