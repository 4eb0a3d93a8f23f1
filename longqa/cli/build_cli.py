"""`longqa index-together --collection NAME PATHS`: one worker of a library built by many (issue 49;
retrieval/index/library/library_build.py). Start the same command on as many hosts or processes as you like, each
with the shared catalog (CHROMA_HOST, LONGQA_POSTGRES_URI), the same paths (a shared volume) and the
same embedder (LONGQA_EMBEDDINGS_URL: one endpoint or a fleet); the library's next version is
published once, when every document is in."""

from __future__ import annotations

import argparse
import sys
import time

from longqa.cli.arguments import GRANULARITY_HELP, add_set_argument, granularity
from longqa.contracts.settings import Settings, check_names


def cmd_index_together(args: argparse.Namespace) -> int:
    """Work on the build until it is published; print what this worker did."""
    from longqa.retrieval.index.library.library_build import build_together
    from longqa.retrieval.index.library.manifest import file_members
    from longqa.retrieval.read.folders import collect_files
    from longqa.services.stores import store_for

    values = dict(args.overrides)
    check_names(values)
    settings = Settings(**{**values, **({"home": args.home} if args.home else {})})
    found = collect_files(args.paths, max_file_bytes=settings.max_file_bytes)
    members = file_members(found.files, settings.max_words)
    t0 = time.perf_counter()
    say = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    store = store_for(settings)
    report = build_together(store, args.collection, members, args.granularity, args.batch, say, args.lease_s)
    seconds = time.perf_counter() - t0
    who = "published by this worker" if report.published else "published by another worker"
    print(
        f"worker {report.owner}: {report.documents} document(s) added, {len(report.skipped)} skipped; "
        f"library {args.collection!r} version {report.version} {who}; {seconds:.1f} s "
        f"({report.coordination_s:.1f} s claiming, waiting and publishing)"
    )
    for line in report.skipped:
        print(f"skipped: {line}")
    return 0


def add_index_together_parser(sub: argparse._SubParsersAction) -> None:
    """`longqa index-together`."""
    p = sub.add_parser(
        "index-together",
        help="one of many workers building one library through the shared catalog (PostgreSQL row claims); "
        "the next version is published once, when every document is in",
    )
    p.add_argument("paths", nargs="+", help="files and folders (the same on every worker)")
    p.add_argument("--collection", required=True, help="the library's name")
    p.add_argument("-g", "--granularity", type=granularity, nargs="+", default=[150], help=GRANULARITY_HELP)
    p.add_argument("--batch", type=int, default=8, help="documents claimed at a time (default 8)")
    p.add_argument(
        "--lease-s", type=float, default=30.0, help="a claim not renewed this long (its worker died) is taken over"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_set_argument(p)
    p.set_defaults(func=cmd_index_together)
