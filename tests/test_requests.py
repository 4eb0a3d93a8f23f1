"""The request models both servers validate bodies with (longqa/http/requests.py, longqa/http/run_inputs.py), and
the graph's own second line for input that reached it another way (services/inputs.py): a body of the
wrong shape is refused naming the field, never read as something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.http.requests import AskRequest, IndexInput, QuestionInput, RequestError, parsed, paths_of
from longqa.http.run_inputs import run_payloads, state_payloads, webhook_refusal
from longqa.services.inputs import InputError, _paths, allowed_path


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"documents": {"b/secret.md": 1}}, "'documents' must be a list of strings (got dict)"),
        ({"documents": [["b"]]}, "documents[0] must be a string (got list)"),
        ({"documents": ["a\x00"]}, "documents[0] holds a NUL character"),
        ({"documents": ["beta/\ud800.md"]}, "documents[0] holds a lone surrogate that no file name holds (\\ud800)"),
        ({"documents": [""]}, "documents[0] is empty"),
        ({"collection": ["a"]}, "'collection' must be a name (got list)"),
        ({"collection": "../b"}, "collection name '../b' starts with '.'"),
        ({"thread_id": 7}, "'thread_id' must be a string (got int)"),
        ({"y" * 500: 1}, "unknown field '" + "y" * 80 + "' in the body"),
    ],
)
def test_a_body_of_the_wrong_shape_is_refused_naming_the_field(body: dict, says: str) -> None:
    with pytest.raises(RequestError) as refused:
        parsed(AskRequest, {"question": "q", **body})
    assert says in str(refused.value) and len(str(refused.value)) < 300


def test_one_string_is_one_path_and_the_rest_passes_as_sent() -> None:
    assert parsed(AskRequest, {"question": "q", "documents": "a.md", "texts": "t"}) == {
        "question": "q",
        "documents": ["a.md"],
        "texts": ["t"],
    }
    assert paths_of(None) == [] and paths_of(["a", "b"]) == ["a", "b"]
    with pytest.raises(RequestError):
        paths_of({"a": 1})


def test_a_commands_update_and_a_threads_state_are_inputs_too() -> None:
    payloads = run_payloads("ask", {"question": "q"}, {"update": [["documents", ["b/x.md"]]]})
    assert payloads == [{"question": "q"}, {"documents": ["b/x.md"]}]
    with pytest.raises(RequestError, match="command.goto"):
        run_payloads("ask", None, {"goto": "retrieve"})
    with pytest.raises(RequestError, match="must be a list of strings"):
        run_payloads("index", {"documents": {"b": 1}}, None)
    assert state_payloads(False, {"values": {"documents": ["b/x.md"]}}) == [{"documents": ["b/x.md"]}]
    steps = {"supersteps": [{"updates": [{"values": {"collection": "b-lib"}}]}]}
    assert state_payloads(True, steps) == [{"collection": "b-lib"}]
    assert parsed(QuestionInput, None) == {}
    assert parsed(IndexInput, {"granularities": [150]}) == {"granularities": [150]}


def test_webhooks_are_off_unless_the_operator_names_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LONGQA_WEBHOOK_HOSTS", raising=False)
    assert "webhooks are off" in (webhook_refusal("https://hooks.example.com/x") or "")
    monkeypatch.setenv("LONGQA_WEBHOOK_HOSTS", "hooks.example.com")
    assert webhook_refusal("https://hooks.example.com/x") is None
    assert "not one this server's operator allows" in (webhook_refusal("https://10.0.0.1/x") or "")


def test_the_graph_refuses_an_object_of_documents_and_a_nul(tmp_path: Path) -> None:
    settings = Settings(server=True, documents_root=tmp_path)
    with pytest.raises(InputError, match="'documents' must be a list of paths"):
        _paths({"documents": {"b/secret.md": 1}})
    with pytest.raises(InputError, match="holds a NUL character"):
        allowed_path("a\x00b.md", settings)
    with pytest.raises(InputError, match="outside the allowed documents root"):
        allowed_path("../x.md", settings)
