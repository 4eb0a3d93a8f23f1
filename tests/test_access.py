"""The pieces both servers share, in process: the keys file (hashed, reread, refused when damaged),
who a request's caller is and what its grants cover, and the deployment's ceilings on a caller's
run settings (contracts/ceilings.py), including `settings_of`, which applies them to a context that
reached the graph another way (an assistant's)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from longqa.contracts.ceilings import caller_context, deployment_ceilings
from longqa.contracts.settings import InvalidSettings, SettingsError, settings_of
from longqa.http.access import LOCAL, Caller, Denied, authorize, identify, names_loopback
from longqa.http.keys import KeysError, KeyStore, add_key, read_keys, remove_key


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("LONGQA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LONGQA_SERVER", "1")


# -- keys ------------------------------------------------------------------------------------------


def test_a_key_is_stored_hashed_and_found_by_itself_only(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    record, key = add_key(path, "acme", ["ask"], ["reports"], ["annual"])
    text = path.read_text()
    secret = key.split("_", 2)[2]  # lqa_<id>_<secret>: the url-safe secret may itself hold "_"
    assert secret not in text and key not in text  # only the salted hash is kept
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    store = KeyStore(path)
    assert store.find(key) == record
    assert store.find(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert store.find("lqa_" + record.id + "_" + "x" * 43) is None
    assert store.find("Bearer " + key) is None and store.find("x" * 10_000) is None
    other, other_key = add_key(path, "globex", ["index"], ["*"])
    assert store.find(other_key) == other  # reread when the file changed
    remove_key(path, record.id)
    assert store.find(key) is None and store.find(other_key) == other


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "keys file"),
        ('{"version": 1, "keys": [{"id": "zz"}]}', "keys.0.id"),
        ('{"version": 7, "keys": []}', "version"),
    ],
)
def test_a_damaged_keys_file_is_an_error_naming_it(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "keys.json"
    path.write_text(content)
    with pytest.raises(KeysError, match=says):
        read_keys(path)


@pytest.mark.parametrize(
    ("tenant", "grants", "collections", "documents", "says"),
    [
        ("bad name", ["ask"], [], [], "tenant"),
        ("acme", [], [], [], "grants"),
        ("acme", ["ask"], ["no/slashes"], [], "not a collection name"),
        ("acme", ["ask"], [], ["../up"], "relative to the documents root"),
        ("acme", ["ask"], [], ["/etc"], "relative to the documents root"),
    ],
)
def test_a_bad_key_request_is_refused(tmp_path: Path, tenant, grants, collections, documents, says) -> None:
    with pytest.raises(KeysError, match=says):
        add_key(tmp_path / "keys.json", tenant, grants, collections, documents)
    assert not (tmp_path / "keys.json").exists()


# -- callers and grants ----------------------------------------------------------------------------


def test_who_a_caller_is(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.json")
    assert identify(store, {"host": "127.0.0.1:8123"}, "127.0.0.1") is LOCAL
    assert identify(store, {"host": "[::1]:8123"}, "::1") is LOCAL
    for headers, client in [({"host": "evil.example"}, "127.0.0.1"), ({"host": "127.0.0.1"}, "10.0.0.5"), ({}, None)]:
        with pytest.raises(Denied, match="no API keys") as e:
            identify(store, headers, client)
        assert e.value.status == 401
    _, key = add_key(store.path, "acme", ["ask"], ["reports"])
    assert identify(store, {"authorization": f"Bearer {key}"}, "10.0.0.5").tenant == "acme"
    assert identify(store, {"x-api-key": key}, "10.0.0.5").tenant == "acme"
    with pytest.raises(Denied, match="an API key is required"):  # keys exist: loopback needs one too
        identify(store, {"host": "127.0.0.1"}, "127.0.0.1")
    assert names_loopback("localhost:80") and not names_loopback("127.0.0.1.evil.example")


def test_grants_cover_collections_and_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "annual").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "annual" / "link").symlink_to(root / "other")
    caller = Caller("acme", frozenset({"ask"}), frozenset({"reports"}), ("annual",))
    authorize(caller, "ask", {"collection": "reports", "documents": ["annual/2025.md", "annual"]}, root)
    for action, payload, says in [
        ("index", {"collection": "reports"}, "may not index"),
        ("ask", {"collection": "hr"}, "may not ask on collection 'hr'"),
        ("ask", {"documents": "other/x.md"}, "may not read 'other/x.md'"),
        ("ask", {"documents": ["annual/../other/x.md"]}, "may not read"),
        ("ask", {"documents": ["annual/link/x.md"]}, "may not read"),  # a link is where it points
        ("ask", {"documents": [str(root / "other" / "x.md")]}, "may not read"),
        ("ask", {"documents": ["annualreport.md"]}, "may not read"),  # a prefix is a folder, not letters
    ]:
        with pytest.raises(Denied, match=says) as e:
            authorize(caller, action, payload, root)
        assert e.value.status == 403
    admin = Caller("ops", frozenset({"admin"}), frozenset({"*"}), ("*",))
    authorize(admin, "index", {"collection": "anything", "documents": ["other"]}, root)


# -- ceilings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("context", "says"),
    [
        ({"question_budget": 0}, "question_budget: 0 (no limit) is not allowed on this server; at most 2270"),
        ({"question_budget": 2271}, "question_budget: at most 2270"),
        ({"context_window": 10_000_000}, "context_window: at most 32768"),
        ({"deadline_s": 901}, "deadline_s: at most 900"),
        ({"deadline_s": float("nan")}, "deadline_s: must be a finite number"),
        ({"timeout_s": float("inf")}, "timeout_s: must be a finite number"),
        ({"timeout_s": "abc"}, "timeout_s: Input should be a valid number"),
        ({"question_budget": True}, "question_budget: must be a number (got true)"),  # seen: ran as a budget of 1
        ({"filter_mode": True}, "filter_mode: Input should be 'joint' or 'per-chunk'"),  # a choice, not a number
        ({"lc_top_chunks": 2000}, "lc_top_chunks: at most 200"),
        ({"contextual_granularity": 9}, "unknown setting 'contextual_granularity'"),
        ({"base_granularity": 9}, "base_granularity: one of 150, 256, 400, 512"),
        ({"model": "openai:gpt-4o"}, "model: 'openai:gpt-4o' is not offered by this server (offered: none"),
        ({"strategy": "bogus"}, "strategy: Input should be"),
        ({"postgres_uri": "postgresql://x"}, "fixed by the deployment"),
        ([1, 2], "context: must be an object"),
    ],
)
def test_a_context_over_a_ceiling_or_invalid_names_the_field(server_env, context, says: str) -> None:
    with pytest.raises(InvalidSettings) as e:
        caller_context(context)
    assert says in str(e.value) and "pydantic.dev" not in str(e.value)


def test_a_caller_may_lower_every_ceiling(server_env) -> None:
    ceilings = deployment_ceilings()
    seconds = ("timeout_s", "deadline_s")
    lowered = {name: top / 2 if name in seconds else int(top) // 2 for name, top in ceilings.highest.items()}
    lowered["context_window"] = 4096
    chosen = caller_context(lowered)
    assert chosen.model_dump(exclude_unset=True) == pytest.approx(lowered)


def test_the_operator_raises_ceilings_and_offers_models(server_env, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LONGQA_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("LONGQA_MODELS", "openai:gpt-4o, scripted")
    monkeypatch.setenv("LONGQA_CEILINGS", json.dumps({"question_budget": 0, "factoid_k": 10, "granularities": [64]}))
    chosen = caller_context({"question_budget": 0, "factoid_k": 10, "primary_granularity": 64, "model": "scripted"})
    assert chosen.question_budget == 0 and chosen.factoid_k == 10
    caller_context({"model": "openai:gpt-4o-mini"})
    caller_context({"model": None})  # evidence-only is always allowed
    monkeypatch.setenv("LONGQA_QUESTION_BUDGET", "0")  # the deployment itself sets no budget
    monkeypatch.delenv("LONGQA_CEILINGS")
    assert caller_context({"question_budget": 0}).question_budget == 0


@pytest.mark.parametrize(
    ("ceilings", "says"),
    [
        ("{oops", "expected a JSON object"),
        ("[1]", "expected a JSON object"),
        ('{"temperature": 2}', "'temperature' has no ceiling"),
        ('{"factoid_k": 1000}', "factoid_k"),
        ('{"factoid_k": 2}', "below the deployment's own value 5"),
        ('{"granularities": [3]}', "granularities must be a list of whole numbers 8-4096"),
    ],
)
def test_unusable_ceilings_stop_the_server(server_env, monkeypatch, ceilings: str, says: str) -> None:
    monkeypatch.setenv("LONGQA_CEILINGS", ceilings)
    with pytest.raises(SettingsError, match=says):
        deployment_ceilings()


def test_settings_of_applies_the_ceilings_to_any_context(server_env) -> None:
    """A context LangGraph merges from an assistant never passed the run guard: the first node
    that reads the settings refuses it (the run ends with this error)."""

    class Runtime:
        context = {"question_budget": 0}

    with pytest.raises(InvalidSettings, match="question_budget: 0"):
        settings_of(Runtime())  # type: ignore[arg-type]
    Runtime.context = {"question_budget": 500}
    assert settings_of(Runtime()).question_budget == 500  # type: ignore[arg-type]


def test_a_thread_is_shared_only_by_keys_that_read_the_same() -> None:
    """A narrower key of a tenant never finds a wider key's thread; a key that reads all finds every
    thread of its tenant, and none of another tenant's (issue 45)."""
    wide = Caller("acme", frozenset({"ask"}), frozenset({"*"}), ("*",))
    reports = Caller("acme", frozenset({"ask"}), frozenset({"lib"}), ("reports",))
    same = Caller("acme", frozenset({"ask", "index"}), frozenset({"lib"}), ("reports",))
    narrower = Caller("acme", frozenset({"ask"}), frozenset({"lib"}), ())
    other = Caller("globex", frozenset({"ask"}), frozenset({"*"}), ("*",))
    assert wide.thread_owner == "acme" and reports.thread_owner.startswith("acme/")
    assert same.owns(reports.thread_owner) and reports.owns(same.thread_owner)  # grants to act differ, not to read
    assert not narrower.owns(reports.thread_owner) and not reports.owns(narrower.thread_owner)
    assert not reports.owns(wide.thread_owner) and not narrower.owns(wide.thread_owner)
    assert wide.owns(reports.thread_owner) and wide.owns(narrower.thread_owner) and wide.owns("acme")
    assert not other.owns(wide.thread_owner) and not other.owns(reports.thread_owner)


def test_authorize_refuses_documents_of_the_wrong_shape(tmp_path: Path) -> None:
    from longqa.http.requests import RequestError

    caller = Caller("acme", frozenset({"ask"}), frozenset({"lib"}), ("a",))
    for payload in [{"documents": {"b/secret.md": 1}}, {"documents": [["b"]]}, {"collection": ["lib"]}]:
        with pytest.raises(RequestError):
            authorize(caller, "ask", payload, tmp_path)
