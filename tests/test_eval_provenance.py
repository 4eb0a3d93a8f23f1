"""Which code made an eval run: the commit stamped on its records (evals/provenance.py), read from a real git
checkout: clean, with changed tracked files, and outside any checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

from longqa.evals.provenance import NOT_A_CHECKOUT, code_commit


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_commit_of_a_clean_checkout_and_of_one_with_changes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "plan.py").write_text("BUDGET = 1900\n")
    _git(root, "add", "plan.py")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "first")
    head = _git(root, "rev-parse", "--short", "HEAD")
    assert code_commit.__wrapped__(root) == head
    (root / "untracked.txt").write_text("not code of the commit's\n")  # untracked files do not mark it changed
    assert code_commit.__wrapped__(root) == head
    (root / "plan.py").write_text("BUDGET = 2500\n")
    assert code_commit.__wrapped__(root) == f"{head}+changes"


def test_outside_a_checkout_the_commit_is_said_to_be_unknown(tmp_path: Path) -> None:
    assert code_commit.__wrapped__(tmp_path) == NOT_A_CHECKOUT
