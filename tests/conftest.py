"""Shared fixtures.

Retrieval fixtures (documents, the embedder, stores) are generic: every test gets LONGQA_HOME
pointing at its own temporary directory, so no test ever reads or writes the user's cache, and
token counting is pinned to the bundled word-piece tokenizer, so nothing tries the network.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# set before any test module imports retrieval (default_counter() is cached on first use):
# tiktoken would try to download its encoding; the MiniLM word-piece tokenizer is bundled
os.environ.setdefault("LONGQA_TOKENIZER", "wordpiece")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# `longqa ask` run as a command would start a warm server (longqa/warm/server.py) that outlives the
# test; tests/test_warm.py turns it on where it tests it
os.environ.setdefault("LONGQA_WARM", "0")
# the embedder's ONNX export (retrieval/index/embed/onnx_export.py) is made once per machine, outside the user's cache
os.environ.setdefault("LONGQA_ONNX_DIR", str(Path(tempfile.gettempdir()) / f"longqa-test-onnx-{os.getuid()}"))

# -- generated text --------------------------------------------------------------------------

HARBOR_TOPICS = [
    (
        "cargo",
        "The northern terminal handled record cargo volumes this year. Container traffic grew "
        "by nine percent while bulk grain shipments stayed flat. Cranes worked around the clock "
        "during the autumn peak.",
    ),
    (
        "weather",
        "A severe winter storm closed the harbor entrance for three days in February. Pilots "
        "refused to board ships in the high swell. The breakwater lost several armour blocks.",
    ),
    (
        "finance",
        "Operating revenue reached forty million euros. The authority repaid part of its bank "
        "loan and kept a cash reserve for the dredging programme. Port dues rose by two percent.",
    ),
    (
        "staff",
        "The authority employed three hundred people at the end of the year. A new training "
        "centre for crane operators opened in June. Safety incidents fell to the lowest level on record.",
    ),
    (
        "environment",
        "Shore power connections let docked ferries switch off their diesel engines. "
        "Water quality samples met every limit set by the regulator. Seagrass beds near the "
        "marina were replanted by volunteers.",
    ),
    (
        "dredging",
        "Dredging deepened the main channel to sixteen metres. The work removed two million "
        "cubic metres of silt. Larger vessels can now enter at any tide.",
    ),
]

RARE_CODE = "ZX-4471"


def harbor_text(paragraphs: int = 12, with_table: bool = True, with_code: bool = True) -> str:
    """A small generated report: topical prose paragraphs, a pipe table and one rare code."""
    blocks = ["# Harbor annual report"]
    for i in range(paragraphs):
        topic, body = HARBOR_TOPICS[i % len(HARBOR_TOPICS)]
        blocks.append(f"Section {i + 1} covers {topic}. {body}")
        if with_table and i == 3:
            blocks.append(
                "| Terminal | Tons | Ships |\n|---|---|---|\n| North | 1200 | 14 |\n"
                "| South | 900 | 11 |\n| East | 640 | 9 |\n| Total | 2740 | 34 |"
            )
        if with_code and i == 7:
            blocks.append(
                f"Maintenance ticket {RARE_CODE} tracks the faulty mooring winch on berth seven. "
                "The spare part arrives next month."
            )
    return "\n\n".join(blocks) + "\n"


@pytest.fixture
def harbor_document_text() -> str:
    return harbor_text()


# -- isolation -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def isolated_longqa_home(tmp_path_factory, monkeypatch) -> Path:
    """LONGQA_HOME for this test: a fresh temporary directory (never the user's cache)."""
    home = tmp_path_factory.mktemp("longqa-home")
    monkeypatch.setenv("LONGQA_HOME", str(home))
    return home


# -- the embedder and stores -----------------------------------------------------------------


@pytest.fixture(scope="session")
def embedder():
    """The process-wide all-MiniLM-L6-v2 embedder (bundled, offline; loaded once per session)."""
    from longqa.retrieval.index.embed.embedder import get_embedder

    return get_embedder()


@pytest.fixture(scope="session")
def wordpiece():
    from longqa.retrieval.tokens import wordpiece_counter

    return wordpiece_counter()


@pytest.fixture
def make_store(embedder, isolated_longqa_home):
    """Factory: a new IndexStore over a home directory (default: this test's LONGQA_HOME)."""
    from longqa.retrieval.index.config import IndexSettings
    from longqa.retrieval.index.store import IndexStore

    def make(home: Path | None = None, **settings):
        return IndexStore(IndexSettings(home=home or isolated_longqa_home, **settings), embedder=embedder)

    return make


@pytest.fixture(scope="session")
def harbor_index(tmp_path_factory, embedder):
    """One document indexed once for the session at granularity 40 (search tests share it):
    returns (store, document)."""
    from longqa.retrieval.index.config import IndexSettings
    from longqa.retrieval.index.store import IndexStore
    from longqa.retrieval.read.loaders import document_from_text

    home = tmp_path_factory.mktemp("harbor-index")
    store = IndexStore(IndexSettings(home=home), embedder=embedder)
    document = document_from_text(harbor_text(), source="harbor.md")
    store.index(document, 40)
    return store, document


# -- the workflow graph (tests/test_graph_*.py) ----------------------------------------------
# One LONGQA home and one generated report for the whole session, so the report is embedded
# once per granularity however many runs use it. The graph itself reads `home` from the run's
# context, so the per-test LONGQA_HOME above does not split its indexes.

REPORT_FACTS = {
    "keeper": "The lighthouse keeper of Port Verrin is Amelie Kortsen.",
    "birthplace": "Amelie Kortsen was born in the mountain village of Haldane.",
    "verrin_bridge": "The Verrin Bridge spans 842 metres across the estuary.",
    "osterby_bridge": "The Osterby Bridge spans 615 metres across the canal.",
    "code": "The ferry signal code is QX-9182.",
    "quarry": "The granite quarry at Brennvik closed in 1987 after the flood.",
}

_FILLER_SUBJECTS = [
    "The council",
    "The harbour office",
    "A survey team",
    "The planning board",
    "The ward committee",
    "An inspector",
    "The works department",
    "The tourism bureau",
    "A citizens panel",
    "The water board",
]
_FILLER_VERBS = [
    "reviewed",
    "approved",
    "postponed",
    "discussed",
    "inspected",
    "funded",
    "audited",
    "mapped",
    "repainted",
    "rescheduled",
]
_FILLER_OBJECTS = [
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
    "the night buses",
]
_FILLER_TAILS = [
    "in the eastern ward",
    "before the winter recess",
    "after a long debate",
    "with local volunteers",
    "within the agreed budget",
    "at the request of residents",
    "during the spring session",
    "for the third time",
    "without any objections",
    "ahead of the summer fair",
]

REPORT_TABLE = (
    "| Terminal | Revenue (k EUR) | Vessels |\n|---|---|---|\n| North | 1200 | 14 |\n"
    "| South | 900 | 11 |\n| East | 640 | 9 |\n| Total | 2740 | 34 |"
)


def report_text(sections: int = 16) -> str:
    """A generated municipal report of about 2,000 words: filler sentences (deterministic) with
    the planted facts of REPORT_FACTS in separate sections and a pipe table with a Total row."""
    import random

    rng = random.Random(7)
    facts = list(REPORT_FACTS.values())
    blocks = ["# Port Verrin municipal report"]
    for i in range(sections):
        blocks.append(f"## Section {i + 1}")
        for j in range(2):
            sentences = [
                f"{rng.choice(_FILLER_SUBJECTS)} {rng.choice(_FILLER_VERBS)} {rng.choice(_FILLER_OBJECTS)} "
                f"{rng.choice(_FILLER_TAILS)}."
                for _ in range(6)
            ]
            if i % 2 == 1 and j == 0 and facts:
                sentences.insert(3, facts.pop(0))
            blocks.append(" ".join(sentences))
        if i == 9:
            blocks.append("Terminal revenue for the year, by terminal:\n\n" + REPORT_TABLE)
    return "\n\n".join(blocks) + "\n"


@pytest.fixture(scope="session")
def graph_home(tmp_path_factory) -> Path:
    """The LONGQA home shared by every graph run of the session (indexes are reused)."""
    return tmp_path_factory.mktemp("graph-home")


@pytest.fixture(scope="session")
def report() -> str:
    return report_text()


@pytest.fixture(scope="session")
def report_path(graph_home, report) -> Path:
    path = graph_home.parent / "docs" / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report, "utf-8")
    return path


@pytest.fixture
def scripted():
    """Factory: a fresh ScriptedChatModel registered under a new name ('scripted:<test>-<n>', which the
    graph labels as scripted); returns (name, model). The same instance serves every call of the run,
    so `model.calls` and `model.max_in_flight` can be asserted."""
    import itertools

    from longqa.llm.models import _REGISTRY, register_model
    from longqa.llm.scripted import ScriptedChatModel

    counter = itertools.count(1)
    names: list[str] = []

    def make(replies: dict | None = None, model=None, **fields):
        instance = model if model is not None else ScriptedChatModel(replies=replies or {}, **fields)
        name = f"scripted:test-{id(names)}-{next(counter)}"
        register_model(name, lambda: instance)
        names.append(name)
        return name, instance

    yield make
    for name in names:
        _REGISTRY.pop(name, None)


@pytest.fixture
def run_graph(graph_home, report):
    """Run the compiled graph on `report` (unless the input names its own documents) with the
    session's home; keyword arguments are Settings fields (strategy defaults to adaptive-precise)."""
    from longqa.graph.graph import graph as compiled

    def run(
        question: str | None = None,
        *,
        model: str | None = "scripted",
        inputs: dict | None = None,
        graph=None,
        config: dict | None = None,
        **settings,
    ) -> dict:
        state = dict(inputs) if inputs is not None else {"texts": [report]}
        if question is not None:
            state["question"] = question
        context = {
            "model": model,
            "home": str(graph_home),
            "strategy": "adaptive-precise",
            "analyzer": "auto",
            # the graph tests walk OkraLong's step-wise route for multi-bridge questions; the default
            # (one retrieval with bridge expansion) has its own tests in test_graph_routes.py
            "multi_bridge": "stepwise",
            **settings,
        }
        return (graph or compiled).invoke(state, config, context=context)

    return run


def pytest_terminal_summary(terminalreporter) -> None:
    """The real-model tier's servers: which build and flags each used, and why (scripts/local_model.sh)."""
    import sys

    module = sys.modules.get("tests.test_real_model")
    for line in getattr(module, "SERVED", []):
        terminalreporter.write_line(f"real-model tier: {line}")
