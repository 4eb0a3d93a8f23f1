"""`longqa keys add / list / remove`: the operator's commands for a server's API keys (longqa/http/keys.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from longqa.http.keys import GRANTS, add_key, keys_file, read_keys, remove_key


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected comma-separated names")
    return names


def _grants(text: str) -> list[str]:
    grants = _names(text)
    unknown = [g for g in grants if g not in GRANTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown grant(s) {', '.join(unknown)}; grants: {', '.join(GRANTS)}")
    return grants


def cmd_add(args: argparse.Namespace) -> int:
    """`longqa keys add`: create a key, print it once on stdout and what it may do on stderr."""
    record, key = add_key(args.file or keys_file(), args.tenant, args.grant, args.collections, args.documents)
    print(key)
    print(
        f"key {record.id} for tenant {record.tenant!r}: {', '.join(record.grants)} on "
        f"{', '.join(record.collections) or 'no collection'}; files: {', '.join(record.documents) or 'none'} "
        "(shown once: only its hash is stored)",
        file=sys.stderr,
    )
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """`longqa keys list`: each key's id, tenant, grants, collections and documents (never a secret)."""
    path = args.file or keys_file()
    keys = read_keys(path).keys
    print(f"{len(keys)} key(s) in {path}")
    for k in keys:
        collections, documents = ",".join(k.collections) or "-", ",".join(k.documents) or "-"
        grants = ",".join(k.grants)
        print(f"{k.id}  tenant={k.tenant}  grants={grants}  collections={collections}  documents={documents}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """`longqa keys remove`: revoke a key by its id."""
    removed = remove_key(args.file or keys_file(), args.id)
    print(f"removed key {removed.id} of tenant {removed.tenant!r}")
    return 0


def add_keys_parser(subparsers: Any) -> None:
    """Add `longqa keys add / list / remove` to longqa's subcommands."""
    p = subparsers.add_parser(
        "keys",
        help="manage the API keys of `longqa serve` and the LangGraph server (stored hashed)",
        description="API keys name a tenant and what it may do (ask, index, admin) on which collections. "
        "Servers reread the file when it changes.",
    )
    p.add_argument("--file", type=Path, help="the keys file (default: LONGQA_KEYS_FILE, else LONGQA_HOME/keys.json)")
    sub = p.add_subparsers(dest="keys_command", required=True)
    add = sub.add_parser("add", help="create a key and print it once")
    add.add_argument("--tenant", required=True, help="who holds it; threads it starts are the tenant's")
    add.add_argument("--grant", required=True, type=_grants, help=f"comma-separated: {', '.join(GRANTS)}")
    add.add_argument(
        "--collections", type=_names, default=[], help="comma-separated collection names it may use ('*': any)"
    )
    add.add_argument(
        "--documents",
        type=_names,
        default=[],
        help="comma-separated folders or files under LONGQA_DOCUMENTS_ROOT it may read ('*': all; default none)",
    )
    add.set_defaults(func=cmd_add)
    sub.add_parser("list", help="list the keys (never the keys themselves)").set_defaults(func=cmd_list)
    rm = sub.add_parser("remove", help="revoke a key by its id")
    rm.add_argument("id", help="the key's id (`longqa keys list`)")
    rm.set_defaults(func=cmd_remove)
