"""Shared fixtures.

Retrieval fixtures (documents, the embedder, stores) are generic: every test gets LONGQA_HOME
pointing at its own temporary directory, so no test ever reads or writes the user's cache, and
token counting is pinned to the bundled word-piece tokenizer, so nothing tries the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# set before any test module imports retrieval (default_counter() is cached on first use):
# tiktoken would try to download its encoding; the MiniLM word-piece tokenizer is bundled
os.environ.setdefault("LONGQA_TOKENIZER", "wordpiece")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# -- generated text --------------------------------------------------------------------------

HARBOR_TOPICS = [
    ("cargo", "The northern terminal handled record cargo volumes this year. Container traffic grew "
              "by nine percent while bulk grain shipments stayed flat. Cranes worked around the clock "
              "during the autumn peak."),
    ("weather", "A severe winter storm closed the harbor entrance for three days in February. Pilots "
                "refused to board ships in the high swell. The breakwater lost several armour blocks."),
    ("finance", "Operating revenue reached forty million euros. The authority repaid part of its bank "
                "loan and kept a cash reserve for the dredging programme. Port dues rose by two percent."),
    ("staff", "The authority employed three hundred people at the end of the year. A new training "
              "centre for crane operators opened in June. Safety incidents fell to the lowest level on record."),
    ("environment", "Shore power connections let docked ferries switch off their diesel engines. "
                    "Water quality samples met every limit set by the regulator. Seagrass beds near the "
                    "marina were replanted by volunteers."),
    ("dredging", "Dredging deepened the main channel to sixteen metres. The work removed two million "
                 "cubic metres of silt. Larger vessels can now enter at any tide."),
]

RARE_CODE = "ZX-4471"


def harbor_text(paragraphs: int = 12, with_table: bool = True, with_code: bool = True) -> str:
    """A small generated report: topical prose paragraphs, a pipe table and one rare code."""
    blocks = ["# Harbor annual report"]
    for i in range(paragraphs):
        topic, body = HARBOR_TOPICS[i % len(HARBOR_TOPICS)]
        blocks.append(f"Section {i + 1} covers {topic}. {body}")
        if with_table and i == 3:
            blocks.append("| Terminal | Tons | Ships |\n|---|---|---|\n| North | 1200 | 14 |\n"
                          "| South | 900 | 11 |\n| East | 640 | 9 |\n| Total | 2740 | 34 |")
        if with_code and i == 7:
            blocks.append(f"Maintenance ticket {RARE_CODE} tracks the faulty mooring winch on berth seven. "
                          "The spare part arrives next month.")
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
    from retrieval.embedder import get_embedder

    return get_embedder()


@pytest.fixture(scope="session")
def wordpiece():
    from retrieval.tokens import wordpiece_counter

    return wordpiece_counter()


@pytest.fixture
def make_store(embedder, isolated_longqa_home):
    """Factory: a new IndexStore over a home directory (default: this test's LONGQA_HOME)."""
    from retrieval.config import IndexSettings
    from retrieval.store import IndexStore

    def make(home: Path | None = None, **settings):
        return IndexStore(IndexSettings(home=home or isolated_longqa_home, **settings), embedder=embedder)

    return make


@pytest.fixture(scope="session")
def harbor_index(tmp_path_factory, embedder):
    """One document indexed once for the session at granularity 40 (search tests share it):
    returns (store, document)."""
    from retrieval.config import IndexSettings
    from retrieval.loaders import document_from_text
    from retrieval.store import IndexStore

    home = tmp_path_factory.mktemp("harbor-index")
    store = IndexStore(IndexSettings(home=home), embedder=embedder)
    document = document_from_text(harbor_text(), source="harbor.md")
    store.index(document, 40)
    return store, document
