"""A question on a server over a folder inside one the operator indexed as a library (the documents
root, say) never walks that whole ancestor for the caller (services/inputs.py, issue 45): a key reads
only what it named, so when a file it names is new to the ancestor's library, the paths it named get a
library of their own, walked with the key's link check, and the ancestor's library is left as it was
(its refresh would read every file and link under it, another tenant's included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from longqa.contracts.settings import Settings
from longqa.services.inputs import index_library, open_library

G = 150
SECRET = "The vault code of the Skerrow bank is Amber Nine, kept by tenant B alone."


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "own.md").write_text("# Crane\n\nThe harbour crane was repainted green in May.\n", "utf-8")
    (root / "b" / "secret.md").write_text(SECRET + "\n", "utf-8")
    (root / "a" / "link.md").symlink_to("../b/secret.md")  # A's folder, B's file
    return root


def test_a_keys_question_never_refreshes_the_ancestors_library(root, isolated_longqa_home):
    operator = Settings(home=isolated_longqa_home, documents_root=root)
    ancestor = index_library({"documents": [str(root)]}, operator, [G])  # the operator's library of the whole root
    version = ancestor.library.manifest().version
    (root / "a" / "new.md").write_text("# Ferry\n\nThe ferry Alba sails at nine from pier four.\n", "utf-8")
    server = Settings(home=isolated_longqa_home, documents_root=root, server=True)
    asked = open_library({"documents": [str(root / "a")]}, server)  # a key granted a/ asks: new.md is new to the root's
    assert asked.library.name != ancestor.library.name
    assert ancestor.library.manifest().version == version, "the root's library was refreshed for the key"
    reasons = [f"{s.path}: {s.reason}" for s in asked.skipped]
    assert "a/link.md: a link leading out of the folder (not followed)" in reasons, reasons
    held = asked.library.manifest().documents
    assert len(asked.doc_ids) == 2 and len(held) == 2, sorted(held)  # own.md and new.md, never the linked secret


def test_off_a_server_the_ancestors_library_is_still_brought_up_to_date(root, isolated_longqa_home):
    operator = Settings(home=isolated_longqa_home, documents_root=root)
    ancestor = index_library({"documents": [str(root)]}, operator, [G])
    version = ancestor.library.manifest().version
    (root / "a" / "new.md").write_text("# Ferry\n\nThe ferry Alba sails at nine from pier four.\n", "utf-8")
    asked = open_library({"documents": [str(root / "a")]}, operator)  # the CLI: the operator's own files
    assert asked.library.name == ancestor.library.name and ancestor.library.manifest().version > version


def test_a_relative_path_on_a_server_is_found_in_the_roots_library_whatever_the_working_folder(
    root, isolated_longqa_home, tmp_path, monkeypatch
):
    operator = Settings(home=isolated_longqa_home, documents_root=root)
    ancestor = index_library({"documents": [str(root)]}, operator, [G])
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "a").mkdir(parents=True)  # a folder of the same name under the server's working folder
    monkeypatch.chdir(elsewhere)
    server = Settings(home=isolated_longqa_home, documents_root=root, server=True)
    asked = open_library({"documents": ["a/own.md"]}, server)  # as a client names it: relative to the root
    assert asked.library.name == ancestor.library.name  # searched within the root's library, not indexed again
    assert len(asked.doc_ids) == 1
