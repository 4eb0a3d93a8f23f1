"""The deployment as a client sees it: `langgraph dev` serving langgraph.json, driven through
`langgraph_sdk` over HTTP on 127.0.0.1.

The server runs once for the module from this venv's `langgraph` script, in the repository root,
with its own LONGQA_HOME and a documents root holding the generated test documents (referred to
by relative name), LONGQA_MODEL unset (each run picks `model="scripted"` in its context; that
model is an offline script, not an LLM) and LONGQA_SERVER=1 from langgraph.json, so the
deployment's locked settings apply. Threads the tests create are deleted before the server stops,
so the dev server's persisted state (.langgraph_api/) does not grow.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from .openai_stub import OpenAIStub
from .servers import langgraph_dev

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
RUN_TIMEOUT_S = 120.0
CONCURRENT_RUNS = 16  # over the 8 vault documents: two runs per document, at once

NODES = (
    "prepare",
    "retrieve_primary",
    "analyze",
    "organize",
    "split_question",
    "retrieve",
    "reason_step",
    "process_context",
    "extract",
    "cot",
    "filter",
    "generate",
    "self_route",
    "long_context",
    "respond",
)
ROUTER_TARGETS = {
    "prepare": {"retrieve_primary", "organize", "respond"},
    "organize": {"retrieve", "split_question", "long_context"},
    "split_question": {"retrieve"},
    "retrieve": {"reason_step", "process_context"},
    "reason_step": {"retrieve", "process_context"},
    "process_context": {"extract", "cot", "generate", "respond"},
    "cot": {"filter", "generate"},
    "self_route": {"long_context", "respond"},
}

# -- documents -------------------------------------------------------------------------------

ATLAS = "atlas.md"
ATLAS_FACTS = [
    "The observatory on Mount Tessaly was founded by the astronomer Orla Venndt in 1911.",
    "The chief cartographer of the Salt Registry is Bastien Okafor.",
    "The night ferry Gullwing carries exactly 214 passengers.",
    "The granite quarry at Brennvik closed in 1987 after the flood.",
    "The Verrin Bridge spans 842 metres across the estuary.",
    "The lighthouse keeper of Port Corvel is Amelie Kortsen.",
]
OBSERVATORY_Q = "Who founded the observatory on Mount Tessaly?"
FERRY_Q = "How many passengers does the night ferry Gullwing carry?"
KEEPER_Q = "Who is the lighthouse keeper of Port Corvel?"

VAULTS = ["Amber", "Birch", "Cobalt", "Dune", "Ember", "Fjord", "Garnet", "Heron"]
CODES = [
    "KESTREL-4127",
    "MARLIN-5830",
    "OSPREY-6291",
    "PLOVER-7053",
    "RAVEN-8164",
    "SWIFT-9372",
    "TERN-1048",
    "WREN-2569",
]

INDEXED = "ledger.md"
INDEXED_FACT = "The harbour ledger was bound by the bookbinder Tomasz Quell in Ravenholt."
INDEXED_Q = "Which bookbinder bound the harbour ledger?"
COLLECTION = "ledgers"

SECRET = "secret.txt"  # beside the documents root, not in it
SECRET_WORD = "NEVER-SERVE-THIS-7781"

_SUBJECTS = [
    "The council",
    "The harbour office",
    "A survey team",
    "The planning board",
    "An inspector",
    "The works department",
    "The tourism bureau",
    "A citizens panel",
    "The water board",
    "The ward committee",
]
_VERBS = [
    "reviewed",
    "approved",
    "postponed",
    "discussed",
    "inspected",
    "funded",
    "audited",
    "repainted",
    "mapped",
    "rescheduled",
]
_OBJECTS = [
    "the drainage scheme",
    "the school roof",
    "the cycle lanes",
    "the market hall",
    "the tram depot",
    "the allotment gardens",
    "the river steps",
    "the bus shelters",
    "the library annex",
    "the sports ground",
    "the fish auction",
]
_TAILS = [
    "in the eastern ward",
    "before the winter recess",
    "after a long debate",
    "with local volunteers",
    "within the agreed budget",
    "during the spring session",
    "without any objections",
    "at the request of residents",
]


def document_text(title: str, facts: list[str], sections: int, seed: int) -> str:
    """Deterministic filler (no content word shared with the questions) with the facts planted in
    separate sections."""
    rng = random.Random(seed)
    pending = list(facts)
    step = max(1, sections // max(1, len(facts)))
    blocks = [f"# {title}"]
    for i in range(sections):
        sentences = [
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_TAILS)}."
            for _ in range(12)
        ]
        if i % step == step - 1 and pending:
            sentences.insert(rng.randrange(2, 10), pending.pop(0))
        blocks.append(f"## Section {i + 1}\n\n" + " ".join(sentences))
    return "\n\n".join(blocks) + "\n"


def vault_name(i: int) -> str:
    return f"vault-{i + 1}.md"


def vault_question(i: int) -> str:
    return f"What is the code word of the {VAULTS[i]} vault?"


def write_documents(docs: Path) -> None:
    docs.mkdir(parents=True, exist_ok=True)
    (docs / ATLAS).write_text(document_text("Salt Registry yearbook", ATLAS_FACTS, sections=24, seed=5), "utf-8")
    for i, (vault, code) in enumerate(zip(VAULTS, CODES, strict=True)):
        fact = f"The code word of the {vault} vault is {code}."
        (docs / vault_name(i)).write_text(
            document_text(f"{vault} vault register", [fact], sections=4, seed=100 + i), "utf-8"
        )
    (docs / INDEXED).write_text(document_text("Harbour ledger notes", [INDEXED_FACT], sections=4, seed=42), "utf-8")
    (docs.parent / SECRET).write_text(f"The deployment secret is {SECRET_WORD}.\n", "utf-8")


# -- the server ------------------------------------------------------------------------------


@dataclass
class Server:
    url: str
    pid: int
    log: Path
    docs: Path
    tmp: Path
    threads: list[str] = field(default_factory=list)
    failing_threads: set[str] = field(default_factory=set)  # runs expected to fail (logged as errors)

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log.read_text("utf-8", errors="replace")[-chars:]
        except OSError as e:
            return f"(no server log: {e})"


def _server_env(home: Path, docs: Path, model_url: str) -> dict[str, str]:
    # no LONGQA_/CHROMA_ settings and no provider keys from the caller's shell: the deployment's are below
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LONGQA_", "CHROMA_", "OPENAI_"))
        and not k.endswith("_API_KEY")
        and k != "PYTEST_CURRENT_TEST"
    }
    env.update(
        {
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGSMITH_TRACING": "false",
            "ANONYMIZED_TELEMETRY": "False",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "LONGQA_TOKENIZER": "wordpiece",
            "LONGQA_HOME": str(home),
            "LONGQA_DOCUMENTS_ROOT": str(docs),
            # the deployment's endpoint: the OpenAI-compatible stub (a run picks `openai:stub-model`)
            "LONGQA_BASE_URL": model_url,
            "OPENAI_API_KEY": "stub-key",
            # the models a run's context may name (the scripted one and the stub's: offline test models)
            "LONGQA_MODELS": "scripted,openai:stub-model",
            # a caller may raise its question budget to this (a LongRAG run with all its perspectives)
            "LONGQA_CEILINGS": '{"question_budget": 20000}',
        }
    )
    return env


@pytest.fixture(scope="module")
def model_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, model_stub: OpenAIStub) -> Iterator[Server]:
    pytest.importorskip("langgraph_sdk")
    langgraph = Path(sys.executable).parent / "langgraph"
    if not langgraph.exists():
        pytest.skip(f"{langgraph} not found (pip install 'langgraph-cli[inmem]')")
    tmp = tmp_path_factory.mktemp("langgraph-dev")
    docs, home, log = tmp / "docs", tmp / "home", tmp / "server.log"
    write_documents(docs)
    extra = ("--config", "langgraph.json", "--n-jobs-per-worker", str(CONCURRENT_RUNS))
    env = _server_env(home, docs, model_stub.base_url)
    with langgraph_dev(langgraph, env, log, REPO, *extra) as dev:
        running = Server(url=dev.url, pid=dev.proc.pid, log=log, docs=docs, tmp=tmp)
        try:
            yield running
        finally:
            if dev.proc.poll() is None and running.threads:
                try:
                    from langgraph_sdk import get_sync_client

                    client = get_sync_client(url=dev.url, timeout=10)
                    for thread_id in running.threads:
                        client.threads.delete(thread_id)
                except Exception as e:  # cleanup only: never hide the test's own result
                    print(f"could not delete the test threads: {e}", file=sys.stderr)


@pytest.fixture(scope="module")
def client(server: Server):
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, timeout=RUN_TIMEOUT_S)


@pytest.fixture
def new_thread(client, server: Server):
    """Factory: a new server thread, deleted at the end of the module."""

    def make() -> str:
        thread_id = client.threads.create()["thread_id"]
        server.threads.append(thread_id)
        return thread_id

    return make


def ask(client, thread_id: str | None, question: str, documents: list[str] | None = None, **context) -> dict:
    payload: dict = {"question": question}
    if documents is not None:
        payload["documents"] = documents
    return client.runs.wait(
        thread_id, "longqa", input=payload, context={"model": "scripted", **context}, raise_error=True
    )


def sources(out: dict) -> set[str]:
    return {Path(c["source"]).name for c in out.get("citations") or []}


# -- (a) assistants, (b) the graph -------------------------------------------------------------


def test_both_graphs_are_served(client):
    assistants = client.assistants.search(limit=50)
    graphs = {a["graph_id"] for a in assistants}
    assert {"longqa", "longqa-index"} <= graphs, assistants
    for graph_id in ("longqa", "longqa-index"):
        found = client.assistants.search(graph_id=graph_id, limit=10)
        assert found and all(a["graph_id"] == graph_id for a in found)


def test_graph_endpoint_has_every_node_and_router_edge(client):
    assistant = client.assistants.search(graph_id="longqa", limit=1)[0]
    drawn = client.assistants.get_graph(assistant["assistant_id"])
    nodes = {n["id"] for n in drawn["nodes"]}
    assert set(NODES) <= nodes, set(NODES) - nodes
    edges = {(e["source"], e["target"]) for e in drawn["edges"]}
    missing = {(source, target) for source, targets in ROUTER_TARGETS.items() for target in targets} - edges
    assert not missing, f"router targets not drawn as edges: {sorted(missing)}"
    assert {
        ("__start__", "prepare"),
        ("respond", "__end__"),
        ("filter", "generate"),
        ("generate", "self_route"),
    } <= edges

    index_graph = client.assistants.get_graph(
        client.assistants.search(graph_id="longqa-index", limit=1)[0]["assistant_id"]
    )
    assert {n["id"] for n in index_graph["nodes"]} >= {"index_documents"}


# -- (c) a run to completion, (d) streamed updates ------------------------------------------


def test_run_answers_with_citations_model_label_and_usage(client, new_thread):
    out = ask(client, new_thread(), OBSERVATORY_Q, [ATLAS])
    assert out["status"] == "answered", out.get("error")
    assert "Orla Venndt" in out["answer"]
    assert out["citations"] and sources(out) == {ATLAS}
    assert any("Orla Venndt" in c["text"] for c in out["citations"])
    assert "scripted" in out["model"]
    assert out["usage"], "no usage records"
    for record in out["usage"]:
        assert {"node", "model", "input_tokens", "output_tokens", "seconds", "estimated"} <= record.keys()
        assert record["model"] == "scripted" and record["node"] in out["route"]
    assert out["totals"]["calls"] == len(out["usage"])
    assert out["totals"]["cost"] == out["totals"]["input_tokens"] + 4 * out["totals"]["output_tokens"]
    assert out["route"][0] == "prepare" and out["route"][-1] == "respond"


def test_stream_updates_arrive_in_graph_order(client, new_thread):
    order: list[str] = []
    events = Counter()
    for part in client.runs.stream(
        new_thread(),
        "longqa",
        input={"question": FERRY_Q, "documents": [ATLAS]},
        context={"model": "scripted"},
        stream_mode="updates",
    ):
        events[part.event] += 1
        assert part.event != "error", part.data
        if part.event == "updates":
            order.extend(part.data.keys())
    assert events["updates"] >= 8, events
    assert order[0] == "prepare" and order[-1] == "respond", order
    assert order.count("prepare") == 1 and order.count("respond") == 1
    # the default (adaptive-precise) route's spine, in order
    spine = [
        "prepare",
        "retrieve_primary",
        "analyze",
        "organize",
        "retrieve",
        "process_context",
        "generate",
        "self_route",
        "respond",
    ]
    positions = [order.index(node) for node in spine]
    assert positions == sorted(positions), order
    assert order.index("organize") < min(i for i, node in enumerate(order) if node == "retrieve")


# -- (e) concurrent runs do not mix ----------------------------------------------------------


def test_concurrent_runs_stay_apart(server: Server, new_thread):
    from langgraph_sdk import get_client

    threads = [new_thread() for _ in range(CONCURRENT_RUNS)]

    async def run_all() -> list[dict]:
        aclient = get_client(url=server.url, timeout=RUN_TIMEOUT_S)
        return await asyncio.gather(
            *(
                aclient.runs.wait(
                    threads[i],
                    "longqa",
                    input={"question": vault_question(i % 8), "documents": [vault_name(i % 8)]},
                    # the scripted analyzer reply gives every run the same route (and an analyzer call)
                    context={"model": "scripted", "analyzer": "llm"},
                    raise_error=True,
                )
                for i in range(CONCURRENT_RUNS)
            )
        )

    outs = asyncio.run(run_all())
    ledgers = []
    for run, out in enumerate(outs):
        i = run % len(VAULTS)  # the document this run asked about
        own, others = CODES[i], [c for j, c in enumerate(CODES) if j != i]
        assert out["status"] == "answered", (i, out.get("error"))
        assert own in out["answer"], (i, out["answer"])
        assert sources(out) == {vault_name(i)}, (i, sources(out))
        text = out["answer"] + " ".join(c["text"] for c in out["citations"] + out["evidence"])
        assert not [c for c in others if c in text], (i, text)
        assert all(e["query"] == vault_question(i) for e in out["evidence"])
        assert out["messages"][-1]["type"] == "ai" and own in out["messages"][-1]["content"]
        # the question joins its own thread as a human turn, and nothing of another run's does
        assert [m["type"] for m in out["messages"]] == ["human", "ai"]
        assert out["messages"][0]["content"] == vault_question(i)
        # this run's own usage: every record from a node of its route, one generate call, totals agree
        nodes = Counter(r["node"] for r in out["usage"])
        assert nodes["generate"] == 1 and nodes["analyze"] == 1, nodes
        assert all(count <= out["route"].count(node) for node, count in nodes.items()), (nodes, out["route"])
        assert out["totals"]["calls"] == len(out["usage"])
        ledgers.append(sorted(nodes.items()))
    # the same kind of question on documents of the same shape: the same calls, none borrowed
    assert all(ledger == ledgers[0] for ledger in ledgers), ledgers


def test_a_model_over_the_wire_is_awaited_by_the_server(client, new_thread, model_stub):
    """The server runs the graph with ainvoke: every model node awaits its call to the deployment's
    OpenAI-compatible endpoint on the event loop, under the server's blocking-call detection (a
    blocking call would fail the run, and show in the log test below)."""
    model_stub.reset()
    # the question budget binds the preset on a server: raised within the ceiling so every perspective runs
    out = ask(
        client,
        new_thread(),
        OBSERVATORY_Q,
        [ATLAS],
        model="openai:stub-model",
        strategy="longrag",
        question_budget=20000,
    )
    assert out["status"] == "answered", out.get("error")
    nodes = Counter(r["node"] for r in out["usage"])
    assert {"cot", "extract", "filter", "generate"} <= set(nodes), nodes
    assert len(model_stub.requests) == len(out["usage"]) == out["totals"]["calls"]
    assert not any(r["estimated"] for r in out["usage"])  # the server's own usage, over the wire
    assert "stub-model" in out["model"]


# -- (f) run-time settings, and the locked ones ----------------------------------------------


def test_run_context_chooses_the_strategy(client, new_thread):
    rag = ask(client, new_thread(), KEEPER_Q, [ATLAS], strategy="rag")
    default = ask(client, new_thread(), KEEPER_Q, [ATLAS])
    assert rag["status"] == default["status"] == "answered"
    assert rag["plan"]["strategy"] == "rag" and rag["plan"]["granularity"] == 512
    assert "analyze" not in rag["route"] and "retrieve_primary" not in rag["route"]
    assert default["plan"]["strategy"] == "adaptive-precise"
    assert "analyze" in default["route"] and default["analysis"]
    # the default analyzer runs in the server process without an LLM call
    assert default["analysis"]["backend"] == "local-trained"
    assert "analyze" not in [r["node"] for r in default["usage"]]
    assert "Amelie Kortsen" in rag["answer"] and "Amelie Kortsen" in default["answer"]


@pytest.mark.parametrize("path", ["/etc/hostname", f"../{SECRET}", "{tmp}/" + SECRET])
def test_locked_documents_root_refuses_outside_paths(client, server: Server, new_thread, path):
    path = path.format(tmp=server.tmp)
    out = ask(client, new_thread(), "What is the deployment secret?", [path])
    assert out["status"] == "error"
    assert "outside the allowed documents root" in out["error"], out["error"]
    assert str(server.docs) not in out["error"] and str(server.tmp) not in out["error"].replace(path, "")
    assert not out["citations"] and not out["evidence"] and not out.get("answer")
    assert SECRET_WORD not in str(out)


def run_error(client, server: Server, thread_id: str, **context) -> str:
    """The error a run's context gets from the server (the run fails before any node runs)."""
    server.failing_threads.add(thread_id)
    try:
        out = client.runs.wait(
            thread_id,
            "longqa",
            input={"question": FERRY_Q, "documents": [ATLAS]},
            context={"model": "scripted", **context},
            raise_error=False,
        )
    except Exception as e:  # refused before the run: the HTTP error's body says why
        response = getattr(e, "response", None)
        return f"{e} {response.status_code} {response.text}" if response is not None else str(e)
    return str(out)


@pytest.mark.parametrize("name", ["home", "documents_root", "base_url", "api_key_env", "chroma_host", "max_words"])
def test_a_locked_setting_in_the_context_is_refused_by_name(client, server: Server, new_thread, name):
    elsewhere = str(server.tmp / "caller-chosen")
    error = run_error(client, server, new_thread(), **{name: elsewhere if name != "max_words" else 10})
    assert "422" in error and f"setting '{name}' is fixed by the deployment" in error, error
    assert not (server.tmp / "caller-chosen").exists()


def test_a_mistyped_context_key_is_an_error_naming_the_nearest(client, server: Server, new_thread):
    error = run_error(client, server, new_thread(), modle="scripted")
    assert "422" in error and "unknown setting 'modle'; did you mean 'model'?" in error, error


# -- (g) chat input ----------------------------------------------------------------------------


def test_chat_messages_in_and_out(client, new_thread):
    thread_id = new_thread()
    out = client.runs.wait(
        thread_id,
        "longqa",
        context={"model": "scripted"},
        raise_error=True,
        input={"messages": [{"role": "user", "content": OBSERVATORY_Q}], "documents": [ATLAS]},
    )
    assert out["status"] == "answered"
    assert [m["type"] for m in out["messages"]] == ["human", "ai"]
    final = out["messages"][-1]["content"]
    assert "Orla Venndt" in final and "\n\nSources:\n[E" in final and ATLAS in final

    # a follow-up on the same thread: the earlier exchange is kept, this turn's output is its own
    follow = client.runs.wait(
        thread_id,
        "longqa",
        context={"model": "scripted"},
        raise_error=True,
        input={"messages": [{"role": "user", "content": KEEPER_Q}]},
    )
    assert follow["status"] == "answered" and "Amelie Kortsen" in follow["answer"]
    assert [m["type"] for m in follow["messages"]] == ["human", "ai", "human", "ai"]
    assert "Sources:" in follow["messages"][-1]["content"]
    assert follow["route"].count("prepare") == 1
    assert all(e["query"].startswith(OBSERVATORY_Q) for e in follow["evidence"])
    state = client.threads.get_state(thread_id)["values"]
    assert state["history"][0] == f"User: {OBSERVATORY_Q}"


# -- (h) the index graph, then a collection ------------------------------------------------


def test_index_graph_then_question_on_the_collection(client, new_thread):
    indexed = client.runs.wait(
        None,
        "longqa-index",
        input={"documents": [INDEXED], "collection": COLLECTION, "granularities": [150, 512]},
        context={"model": "scripted"},
        raise_error=True,
    )
    assert indexed["error"] is None and indexed["collection"] == COLLECTION
    assert len(indexed["doc_ids"]) == 1
    assert set(indexed["chunks"]) == {"150", "512"} and indexed["version"] >= 1
    assert all(count > 0 for count in indexed["chunks"].values())
    assert indexed["skipped"] == [] and set(indexed["changes"]) == {"added", "changed", "removed"}

    out = client.runs.wait(
        new_thread(),
        "longqa",
        input={"question": INDEXED_Q, "collection": COLLECTION},
        context={"model": "scripted"},
        raise_error=True,
    )
    assert out["status"] == "answered", out.get("error")
    assert "Tomasz Quell" in out["answer"]
    assert sources(out) == {INDEXED}
    assert {c["doc_id"] for c in out["citations"]} == set(indexed["doc_ids"])


def test_unknown_collection_is_an_input_error(client):
    out = client.runs.wait(
        None,
        "longqa",
        input={"question": INDEXED_Q, "collection": "no-such-collection"},
        context={"model": "scripted"},
        raise_error=True,
    )
    assert out["status"] == "error" and out["error"].startswith("input:")


def test_index_graph_refuses_outside_paths(client, server: Server):
    out = client.runs.wait(
        None, "longqa-index", input={"documents": [str(server.tmp / SECRET)], "collection": "stolen"}, raise_error=True
    )
    assert out["error"] and "documents root" in out["error"]
    assert out["doc_ids"] == [] and out["collection"] is None


# -- what Studio and SDK clients read: schemas, drawn branches, progress, follow-ups, names -------

QUESTION_INPUT = {"question", "messages", "documents", "include", "exclude", "texts", "collection", "strategy"}
QUESTION_OUTPUT = {
    "answer",
    "status",
    "citations",
    "evidence",
    "shown",
    "plan",
    "analysis",
    "route",
    "usage",
    "totals",
    "model",
    "error",
    "skipped",
    "trace",
    "messages",
    "long_context_selection",
    "grounding",
    "reasked",
    "calculation",
}
INDEX_INPUT = {"documents", "include", "exclude", "texts", "collection", "granularities"}
INDEX_OUTPUT = {"doc_ids", "collection", "chunks", "version", "changes", "skipped", "error"}
LOCKED = {
    "home",
    "chroma_host",
    "chroma_port",
    "documents_root",
    "base_url",
    "api_key_env",
    "max_words",
    "postgres_uri",
}


def _assistant(client, graph_id: str) -> str:
    return client.assistants.search(graph_id=graph_id, limit=1)[0]["assistant_id"]


def test_published_schemas_are_the_callers(client, server: Server):
    """What Studio's form and an SDK client see: the caller's fields, on every supported Python."""
    schemas = client.assistants.get_schemas(_assistant(client, "longqa"))
    assert set(schemas["input_schema"]["properties"]) == QUESTION_INPUT
    assert set(schemas["output_schema"]["properties"]) == QUESTION_OUTPUT
    context = set(schemas["context_schema"]["properties"])
    assert {"model", "strategy", "timeout_s", "max_answer_tokens", "evidence_budget"} <= context
    assert not context & LOCKED  # the deployment's settings are not offered
    index = client.assistants.get_schemas(_assistant(client, "longqa-index"))
    assert set(index["input_schema"]["properties"]) == INDEX_INPUT
    assert set(index["output_schema"]["properties"]) == INDEX_OUTPUT
    log = re.sub(r"\x1b\[[0-9;]*m", "", server.log.read_text("utf-8", errors="replace"))
    assert "Failed to get input schema" not in log and "Failed to get output schema" not in log


def test_studio_draws_labelled_branches(client):
    drawn = client.assistants.get_graph(_assistant(client, "longqa"))
    labels = {(e["source"], e.get("data")) for e in drawn["edges"] if e.get("conditional")}
    assert {
        ("organize", "direct | stepwise"),
        ("organize", "split"),
        ("organize", "long context"),
        ("retrieve", "stepwise"),
        ("reason_step", "next hop"),
        ("self_route", "fallback: long context"),
        ("process_context", "evidence only"),
    } <= labels, sorted(labels, key=str)


def test_a_follow_up_with_question_input_sees_the_first_turn(client, new_thread):
    thread_id = new_thread()
    first = ask(client, thread_id, OBSERVATORY_Q, [ATLAS])
    follow = client.runs.wait(
        thread_id, "longqa", input={"question": KEEPER_Q}, context={"model": "scripted"}, raise_error=True
    )
    assert first["status"] == follow["status"] == "answered"
    assert "Amelie Kortsen" in follow["answer"]
    assert [m["type"] for m in follow["messages"]] == ["human", "ai", "human", "ai"]
    # searched with the turn it follows, exactly as a `messages` follow-up is
    assert all(e["query"].startswith(OBSERVATORY_Q) for e in follow["evidence"])
    assert client.threads.get_state(thread_id)["values"]["history"][0] == f"User: {OBSERVATORY_Q}"


def test_indexing_progress_streams_to_an_sdk_client(client):
    events = []
    for part in client.runs.stream(
        None,
        "longqa-index",
        input={"documents": [vault_name(0)], "granularities": [512]},  # one of the server's sizes, not yet used here
        stream_mode=["custom", "values"],
    ):
        if part.event == "custom":
            events.append(part.data)
    embedding = [e for e in events if e.get("step") == "embedding"]
    assert embedding, events
    assert embedding[-1]["done"] == embedding[-1]["total"] > 0
    assert re.fullmatch(r"index: embedding \d+/\d+ chunks of vault-1\.md \(g=512\)", embedding[-1]["message"])


def test_citations_name_documents_relative_to_the_root(client, new_thread):
    out = ask(client, new_thread(), OBSERVATORY_Q, [ATLAS])
    assert out["citations"] and {c["source"] for c in out["citations"]} == {ATLAS}  # not the server's path
    assert all(s["source"] == ATLAS for s in out["shown"])


@pytest.mark.parametrize(
    "payload,error",
    [
        ({"texts": [123]}, "texts[0] must be a string (got int)"),
        ({"documents": ["atlas.md", 7]}, "documents[1] must be a string (got int)"),
        ({"documents": {"atlas.md": 1}}, "'documents' must be a list of strings (got dict)"),
    ],
)
def test_bad_inline_input_is_a_named_422_over_the_wire(client, new_thread, payload, error):
    """A run input of the wrong shape is refused before the run (longqa/http/requests.py, issue 45)."""
    with pytest.raises(httpx.HTTPStatusError) as refused:
        client.runs.wait(new_thread(), "longqa", input={"question": FERRY_Q, **payload}, context={"model": "scripted"})
    assert refused.value.response.status_code == 422 and error in refused.value.response.text


def test_one_string_of_texts_is_one_document_over_the_wire(client, new_thread):
    text = "The night ferry Gullwing carries exactly 214 passengers. It sails at dusk."
    out = client.runs.wait(
        new_thread(),
        "longqa",
        input={"question": FERRY_Q, "texts": text},
        context={"model": "scripted"},
        raise_error=True,
    )
    assert out["status"] == "answered" and {c["source"] for c in out["citations"]} == {"text-1"}


# -- last: nothing went wrong quietly ----------------------------------------------------------


def test_server_log_has_no_unexpected_errors(server: Server):
    """A run that fails and is retried by the server can still end well for its caller: the log
    must show no failed or retried run other than the ones a test provoked."""
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", server.log.read_text("utf-8", errors="replace"))
    assert "longqa: 64 threads for graph nodes" in plain  # longqa's pool, not Python's 6 on 2 cores
    errors = [
        line
        for line in plain.splitlines()
        if re.search(r"\[(error|critical)\s*\]|will retry", line)
        and not any(f"thread_id={t}" in line for t in server.failing_threads)
    ]
    assert not errors, "\n".join(line[:400] for line in errors)


def test_readme_sdk_snippet_runs_against_the_server(server: Server, capsys):
    """The README's SDK snippet, executed as written (server URL and document swapped in)."""
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("## Use it from code (SDK)", 1)[1]
    snippet = section.split("```python", 1)[1].split("```", 1)[0]
    snippet = (
        snippet.replace("http://127.0.0.1:8123", server.url)
        .replace("harbor_annual_report.md", "atlas.md")
        .replace("Which shipyard built the dredger Marrowdeep?", OBSERVATORY_Q)
    )
    exec(compile(snippet, "README.md (SDK snippet)", "exec"), {})
    printed = capsys.readouterr().out
    assert "atlas.md" in printed  # no model on the server: evidence-only, with the cited source


def test_sdk_client_example_streams_and_answers(server: Server, capsys, monkeypatch):
    from examples import sdk_client

    monkeypatch.setenv("LONGQA_RUN_CONTEXT", '{"model": "scripted"}')
    assert sdk_client.main([server.url, "atlas.md", KEEPER_Q]) == 0
    captured = capsys.readouterr()
    assert "status: answered" in captured.out and "atlas.md" in captured.out
    assert "ran: prepare" in captured.err and "ran: respond" in captured.err
