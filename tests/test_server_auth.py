"""The LangGraph server with keys: `langgraph dev` serving langgraph.json (its `auth` entry is
longqa/http/auth.py) on a free port of 127.0.0.1, driven through `langgraph_sdk` by two tenants with keys
made by `longqa keys add`. Tenant B can neither read, search, change, delete nor run on tenant A's
thread, nor name A's collection or files; every run's context stays under the deployment's
ceilings (422 naming the field). Answers come from the scripted model (an offline test model, not a
language model)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.openai_stub import OpenAIStub
from tests.servers import add_key, langgraph_dev
from tests.test_server_sdk import (
    ATLAS,
    CODES,
    INDEXED,
    OBSERVATORY_Q,
    REPO,
    _server_env,
    vault_name,
    write_documents,
)

pytestmark = pytest.mark.integration


@dataclass
class KeyedServer:
    url: str
    log: Path
    alice: str  # ask + index on alice-lib; reads atlas.md, ledger.md and notes/ (where a link points at vault-1.md)
    bob: str  # ask only, on bob-lib; reads vault-1.md
    reader: str  # tenant alice too, a narrower key: ask on alice-lib, reads atlas.md only
    docs: Path

    def client(self, key: str | None):
        from langgraph_sdk import get_sync_client

        return get_sync_client(url=self.url, api_key=key, timeout=120)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    pytest.importorskip("langgraph_sdk")
    langgraph = Path(sys.executable).parent / "langgraph"
    tmp = tmp_path_factory.mktemp("langgraph-auth")
    docs, log = tmp / "docs", tmp / "server.log"
    write_documents(docs)
    (docs / "notes").mkdir()
    (docs / "notes" / "own.md").write_text("# Notes\n\nThe harbour crane was repainted green in May.\n", "utf-8")
    (docs / "notes" / "link.md").symlink_to(f"../{vault_name(0)}")  # alice's folder, bob's file
    with OpenAIStub() as stub:
        env = _server_env(tmp / "home", docs, stub.base_url)
        env.update({"LONGQA_KEYS_FILE": str(tmp / "keys.json"), "LONGQA_MODELS": "scripted"})
        env.pop("LANGGRAPH_API_KEY", None)
        env.pop("LANGSMITH_API_KEY", None)
        env.pop("LONGQA_CEILINGS", None)  # the deployment's own ceilings (the SDK tier raises the question budget's)
        alice = add_key(env, "--tenant", "alice", "--grant", "ask,index", "--collections", "alice-lib", "--documents",
                     f"{ATLAS},{INDEXED},notes")  # fmt: skip
        reader = add_key(env, "--tenant", "alice", "--grant", "ask", "--collections", "alice-lib", "--documents", ATLAS)
        bob = add_key(
            env, "--tenant", "bob", "--grant", "ask", "--collections", "bob-lib", "--documents", vault_name(0)
        )
        with langgraph_dev(langgraph, env, log, REPO, "--config", "langgraph.json") as dev:
            yield KeyedServer(dev.url, log, alice, bob, reader, docs)


def refused(call: Callable[[], object]) -> tuple[int, str]:
    """The HTTP status and body an SDK call is refused with."""
    try:
        result = call()
    except httpx.HTTPStatusError as e:
        return e.response.status_code, e.response.text
    pytest.fail(f"not refused: {result!r}"[:500])


def ask(client, thread_id: str | None, documents: list[str] | None = None, **context) -> dict:
    payload: dict = {"question": OBSERVATORY_Q}
    if documents is not None:
        payload["documents"] = documents
    return client.runs.wait(thread_id, "longqa", input=payload, context={"model": "scripted", **context})


def test_every_request_needs_a_key(keyed: KeyedServer) -> None:
    for key, says in [(None, "an API key is required"), ("lqa_000000000000_" + "x" * 43, "not valid")]:
        status, text = refused(lambda key=key: keyed.client(key).threads.create())
        assert status == 401 and says in text, (status, text)
        status, text = refused(lambda key=key: keyed.client(key).assistants.search())
        assert status == 401, (status, text)
    r = httpx.post(f"{keyed.url}/runs/wait", json={"assistant_id": "longqa", "input": {"question": "x"}}, timeout=30)
    assert r.status_code == 401


def test_a_tenant_cannot_reach_another_tenants_thread(keyed: KeyedServer) -> None:
    alice, bob = keyed.client(keyed.alice), keyed.client(keyed.bob)
    thread = alice.threads.create()["thread_id"]
    out = ask(alice, thread, [ATLAS])
    assert out["status"] == "answered" and "Orla Venndt" in out["answer"], out.get("error")

    for call in [
        lambda: bob.threads.get(thread),
        lambda: bob.threads.get_state(thread),
        lambda: bob.threads.get_history(thread),
        lambda: bob.threads.update(thread, metadata={"owner": "bob"}),
        lambda: bob.threads.delete(thread),
        lambda: bob.runs.list(thread),
        lambda: bob.runs.wait(thread, "longqa", input={"question": "What did alice ask?"}),
    ]:
        status, text = refused(call)
        assert status == 404, (status, text)
        assert "Orla" not in text and OBSERVATORY_Q not in text
    assert thread not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    status, _ = refused(lambda: bob.threads.create(thread_id=thread, if_exists="do_nothing"))
    assert status == 409  # the id is taken; the thread is not handed over

    # alice's thread is intact and still hers
    assert thread in {t["thread_id"] for t in alice.threads.search(limit=100)}
    state = alice.threads.get_state(thread)["values"]
    assert [m["content"] for m in state["messages"]][0] == OBSERVATORY_Q and "Orla Venndt" in state["answer"]
    assert alice.threads.get(thread)["metadata"]["owner"] == "alice"
    alice.threads.delete(thread)


def test_a_run_keeps_to_its_keys_grants(keyed: KeyedServer) -> None:
    alice, bob = keyed.client(keyed.alice), keyed.client(keyed.bob)
    status, text = refused(lambda: ask(bob, None, [ATLAS]))
    assert status == 403 and "may not read 'atlas.md'" in text, text
    status, text = refused(lambda: ask(bob, None, ["../secret.txt"]))
    assert status == 403 and "may not read" in text, text
    status, text = refused(
        lambda: bob.runs.wait(None, "longqa", input={"question": OBSERVATORY_Q, "collection": "alice-lib"})
    )
    assert status == 403 and "may not ask on collection 'alice-lib'" in text, text
    index = {"documents": [vault_name(0)], "collection": "bob-lib"}
    status, text = refused(lambda: bob.runs.wait(None, "longqa-index", input=index))
    assert status == 403 and "may not index" in text, text
    indexed = alice.runs.wait(None, "longqa-index", input={"documents": [INDEXED], "collection": "alice-lib"})
    assert indexed["error"] is None and indexed["collection"] == "alice-lib"
    out = bob.runs.wait(None, "longqa", input={"question": "What is the code word?", "documents": [vault_name(0)]})
    assert out["status"] != "error", out.get("error")  # bob's own file: evidence-only (no model named)


def test_a_key_that_may_not_index_reads_a_collection_as_it_was_indexed(keyed: KeyedServer) -> None:
    """A run setting that would chunk the collection another way is refused to a key without the index grant
    (services/reading_scope.py), on this server as on `longqa serve`."""
    alice, reader = keyed.client(keyed.alice), keyed.client(keyed.reader)
    indexed = alice.runs.wait(None, "longqa-index", input={"documents": [INDEXED], "collection": "alice-lib"})
    assert indexed["error"] is None
    question = {"question": OBSERVATORY_Q, "collection": "alice-lib"}
    out = reader.runs.wait(None, "longqa", input=question, context={"model": "scripted", "chunking": "sentence"})
    assert out["status"] == "error" and "this key may not index" in out["error"], out.get("error")
    out = reader.runs.wait(None, "longqa", input=question, context={"model": "scripted"})
    assert out["status"] != "error", out.get("error")  # as it was indexed: read


@pytest.mark.parametrize(
    ("context", "says"),
    [
        ({"question_budget": 0}, "question_budget: 0 (no limit) is not allowed on this server; at most 2270"),
        ({"context_window": 10_000_000}, "context_window: at most 32768 on this server"),
        ({"deadline_s": 86_400}, "deadline_s: at most 900 on this server"),
        ({"primary_k": -1}, "primary_k: Input should be greater than or equal to 1"),
        ({"timeout_s": "abc"}, "timeout_s: Input should be a valid number"),
        ({"strategy": "bogus"}, "strategy: Input should be"),
        ({"model": "openai:gpt-4o"}, "model: 'openai:gpt-4o' is not offered by this server"),
    ],
)
def test_a_run_context_over_a_ceiling_or_invalid_is_a_422(keyed: KeyedServer, context: dict, says: str) -> None:
    alice = keyed.client(keyed.alice)
    status, text = refused(lambda: ask(alice, None, [ATLAS], **context))
    assert status == 422 and says in text, (status, text)
    assert "errors.pydantic.dev" not in text


def test_settings_in_config_configurable_meet_the_same_ceilings(keyed: KeyedServer) -> None:
    alice = keyed.client(keyed.alice)
    payload = {"question": OBSERVATORY_Q, "documents": [ATLAS]}
    config = {"configurable": {"model": "scripted", "question_budget": 0}}
    status, text = refused(lambda: alice.runs.wait(None, "longqa", input=payload, config=config))
    assert status == 422 and "question_budget: 0 (no limit)" in text, text


def test_a_question_over_the_length_limit_is_refused(keyed: KeyedServer) -> None:
    alice = keyed.client(keyed.alice)
    status, text = refused(
        lambda: alice.runs.wait(None, "longqa", input={"question": "why " * 3000, "documents": [ATLAS]})
    )
    assert status == 422 and "at most 8,000" in text, text


def test_assistants_are_read_by_all_and_changed_by_admins_only(keyed: KeyedServer) -> None:
    bob = keyed.client(keyed.bob)
    assert {a["graph_id"] for a in bob.assistants.search(limit=20)} >= {"longqa", "longqa-index"}
    status, text = refused(lambda: bob.assistants.create("longqa", context={"question_budget": 0}))
    assert status == 403 and "only an admin key" in text, text
    status, _ = refused(lambda: bob.store.put_item(("bob",), "k", {"v": 1}))
    assert status == 403


# -- issue 45: strict inputs, state updates, links, narrower keys, webhooks, meta routes -------------


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"documents": {vault_name(0): 1}}, "'documents' must be a list of strings (got dict)"),
        ({"documents": [[vault_name(0)]]}, "documents[0] must be a string (got list)"),
        ({"documents": [f"{ATLAS}\x00"]}, "documents[0] holds a NUL character"),
        ({"collection": ["bob-lib"]}, "'collection' must be a name (got list)"),
        ({"collection": {"bob-lib": 1}}, "'collection' must be a name (got dict)"),
        ({"collection": 3}, "'collection' must be a name (got int)"),
    ],
)
def test_a_run_input_of_the_wrong_shape_is_422(keyed: KeyedServer, fields: dict, says: str) -> None:
    alice = keyed.client(keyed.alice)
    question = {"question": OBSERVATORY_Q, **fields}
    status, text = refused(lambda: alice.runs.wait(None, "longqa", input=question, context={"model": "scripted"}))
    assert status == 422 and says in text, (status, text)
    index = {"collection": "alice-lib", **fields}
    status, text = refused(lambda: alice.runs.wait(None, "longqa-index", input=index))
    assert status == 422 and (says in text or "'collection' must be a name" in text), (status, text)
    assert CODES[0] not in text


def test_an_unknown_strategy_in_a_runs_input_is_422(keyed: KeyedServer) -> None:
    """Seen: an input's "strategy": "bogus" ran as an unknown plan, answered and ungrounded."""
    alice = keyed.client(keyed.alice)
    question = {"question": OBSERVATORY_Q, "documents": [ATLAS], "strategy": "bogus"}
    status, text = refused(lambda: alice.runs.wait(None, "longqa", input=question, context={"model": "scripted"}))
    assert status == 422 and "'strategy' must be one of rag, lc, self-route" in text, (status, text)


def test_a_thread_state_update_is_held_to_the_keys_grants(keyed: KeyedServer) -> None:
    alice = keyed.client(keyed.alice)
    thread = alice.threads.create()["thread_id"]
    assert ask(alice, thread, [ATLAS])["status"] == "answered"
    bobs = [vault_name(0)]
    for call in [
        lambda: alice.threads.update_state(thread, {"documents": bobs}),
        lambda: alice.threads.update_state(thread, {"collection": "bob-lib"}),
        lambda: alice.runs.wait(thread, "longqa", input=None, command={"update": {"documents": bobs}}),
        lambda: alice.runs.wait(thread, "longqa", input=None, command={"update": [["documents", bobs]]}),
        lambda: alice.threads.create(supersteps=[{"updates": [{"values": {"documents": bobs}, "as_node": "prepare"}]}]),
    ]:
        status, text = refused(call)
        assert status == 403 and "may not" in text, (status, text)
    for call, says in [
        (lambda: alice.threads.update_state(thread, {"documents": {vault_name(0): 1}}), "must be a list of strings"),
        (lambda: alice.runs.wait(thread, "longqa", input=None, command={"goto": "retrieve"}), "'command.goto'"),
    ]:
        status, text = refused(call)
        assert status == 422 and says in text, (status, text)
    out = alice.runs.wait(thread, "longqa", input=None, context={"model": "scripted"})  # the thread kept atlas.md
    assert CODES[0] not in str(out) and out["status"] == "answered", out.get("error")
    alice.threads.update_state(thread, {"documents": [INDEXED]})  # within its grants: accepted


def test_a_link_in_a_keys_folder_to_another_tenants_file_is_skipped(keyed: KeyedServer) -> None:
    alice = keyed.client(keyed.alice)
    question = {"question": "What is the code word of the vault?", "documents": ["notes"]}
    out = alice.runs.wait(None, "longqa", input=question, context={"model": "scripted"})
    assert "notes/link.md: a link leading out of the folder (not followed)" in out["skipped"], out["skipped"]
    assert CODES[0] not in str(out)
    indexed = alice.runs.wait(None, "longqa-index", input={"documents": ["notes"], "collection": "alice-lib"})
    assert "notes/link.md: a link leading out of the folder (not followed)" in indexed["skipped"], indexed
    assert indexed["changes"]["added"] == ["notes/own.md"] and CODES[0] not in str(indexed)
    for output in (out, indexed):  # no server path in any field, the trace included
        assert str(keyed.docs) not in str(output) and os.path.realpath(keyed.docs) not in str(output)
    # named by its absolute path (allowed: it is under the root, in alice's folder), the folder is shown
    # relative to the root in every response, the thread's state included (longqa/http/scrub.py)
    thread = alice.threads.create()["thread_id"]
    absolute = {"question": "When was the crane repainted?", "documents": [str(keyed.docs / "notes")]}
    out = alice.runs.wait(thread, "longqa", input=absolute, context={"model": "scripted"})
    state = alice.threads.get_state(thread)
    assert out["status"] == "answered" and state["values"]["documents"] == ["notes"], (out.get("error"), state)
    assert str(keyed.docs) not in str(out) + str(state) + str(alice.threads.get_history(thread))


def test_a_narrower_key_does_not_see_a_wider_keys_thread(keyed: KeyedServer) -> None:
    alice, reader = keyed.client(keyed.alice), keyed.client(keyed.reader)
    thread = alice.threads.create()["thread_id"]
    assert ask(alice, thread, [ATLAS])["status"] == "answered"
    for call in [
        lambda: reader.threads.get_state(thread),
        lambda: reader.runs.wait(thread, "longqa", input={"question": "What did I ask?"}),
        lambda: reader.threads.update(thread, metadata={"scope": "any"}),
    ]:
        status, text = refused(call)
        assert status in (403, 404) and "Orla" not in text, (status, text)
    assert thread not in {t["thread_id"] for t in reader.threads.search(limit=100)}
    own = reader.threads.create()["thread_id"]  # its own threads are its own
    assert ask(reader, own, [ATLAS])["status"] == "answered"
    assert own not in {t["thread_id"] for t in alice.threads.search(limit=100)}


def test_chunk_sizes_webhooks_and_long_names_are_bounded(keyed: KeyedServer) -> None:
    alice = keyed.client(keyed.alice)
    for sizes in ([8], [151]):
        index = {"documents": [INDEXED], "collection": "alice-lib", "granularities": sizes}
        status, text = refused(lambda index=index: alice.runs.wait(None, "longqa-index", input=index))
        assert status == 422 and "is not offered" in text, (status, text)
    question = {"question": OBSERVATORY_Q, "documents": [ATLAS]}
    said = []
    for hook in [
        "https://10.1.2.3/hook",
        "http://127.0.0.1:9/hook",
        "https://hooks.example.com/x",
        "https://8.8.8.8/x",
    ]:
        status, text = refused(lambda hook=hook: alice.runs.wait(None, "longqa", input=question, webhook=hook))
        assert status in (403, 422) and ("webhooks are off" in text or "Webhook" in text), (status, text)
        said.append(text)  # LangGraph's own checks (langgraph.json `webhooks`) may refuse first, with 422
    assert any("webhooks are off on this server" in text for text in said), said  # a public host: the operator's
    status, text = refused(lambda: ask(alice, None, [ATLAS], **{"x" * 100_000: 1}))
    assert status == 422 and "unknown setting 'xxx" in text and len(text) < 1000, (status, len(text))


@pytest.mark.parametrize("path", ["/docs", "/openapi.json", "/info", "/metrics"])
def test_the_meta_routes_are_behind_a_key(keyed: KeyedServer, path: str) -> None:
    for headers in ({}, {"x-api-key": "lqa_000000000000_" + "x" * 43}):
        r = httpx.get(keyed.url + path, headers=headers, timeout=30)
        assert r.status_code == 401, (r.status_code, r.text[:300])
        assert "openapi" not in r.text.lower() and "version" not in r.text
    r = httpx.get(keyed.url + path, headers={"x-api-key": keyed.alice}, timeout=30)  # a key, not an admin's
    assert r.status_code == (403 if path == "/metrics" else 200), (r.status_code, r.text[:300])
    assert httpx.get(keyed.url + "/ok", timeout=30).status_code == 200  # the health check stays open


def test_the_log_shows_no_server_error(keyed: KeyedServer) -> None:
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", keyed.log.read_text("utf-8", errors="replace"))
    assert "Traceback" not in plain and " 500 " not in plain, plain[-3000:]
    assert "Custom auth has no handler registered" not in plain
    _ = os  # the environment is the fixture's
