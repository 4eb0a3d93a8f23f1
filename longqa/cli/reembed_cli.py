"""`longqa reembed COLLECTION`: embed a library again with this deployment's embedder (issue 49).

Every chunk size is rebuilt into new collections and published once, by the catalog's compare-and-set,
as any update is: until then every replica's questions read the current version (those configured
with the old embedder keep answering; after the publish they refuse, naming this command). Resumable:
each slice of documents is saved as soon as it is embedded (this host's cache) and the new
collection keeps what it holds, so a run started again after a kill embeds only what is left."""

from __future__ import annotations

import argparse
import time

from longqa.cli.arguments import add_set_argument
from longqa.cli.console import LibraryProgress
from longqa.contracts.settings import Settings, check_names
from longqa.services.inputs import InputError


def cmd_reembed(args: argparse.Namespace) -> int:
    """Re-embed the named library and print what was embedded into which version."""
    from longqa.services.stores import library_for, store_for

    values = dict(args.overrides)
    check_names(values)
    settings = Settings(**{**values, **({"home": args.home} if args.home else {})})
    store = store_for(settings)
    library = library_for(store, args.collection)
    if not library.exists():
        raise InputError(f"no library named {args.collection!r} in this deployment's catalog")
    before = library.manifest().embedder
    t0 = time.perf_counter()
    with LibraryProgress(not args.quiet) as progress:
        update = library.update(None, reembed=True, progress=progress)
    after = library.manifest().embedder
    was = before.label() if before else "no recorded embedder"
    now = after.label() if after else "no dense part"
    print(
        f"library {args.collection!r} re-embedded: {was} -> {now}; version {update.version}, "
        f"{update.embedded:,} vectors embedded; {time.perf_counter() - t0:.1f} s"
    )
    return 0


def add_reembed_parser(sub: argparse._SubParsersAction) -> None:
    """`longqa reembed`."""
    p = sub.add_parser(
        "reembed",
        help="embed a library again with this deployment's embedder (LONGQA_EMBEDDINGS_URL, ...) into a new version; "
        "resumable; questions read the current version until the new one is published",
    )
    p.add_argument("collection", help="the library's name (`longqa index --collection NAME`)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_set_argument(p)
    p.set_defaults(func=cmd_reembed)
