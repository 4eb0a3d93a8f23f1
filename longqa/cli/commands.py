"""`longqa` command line: index documents, search them, ask questions, evaluate strategies. The
`longqa` entry point (`longqa/cli/entry.py`) offers `ask` to the warm server first; this module is the
in-process CLI that both it and the warm server's workers run."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from longqa.cli.arguments import (
    GRANULARITY_HELP,
    add_model_arguments,
    add_set_argument,
    granularity,
    index_granularities,
    positive_float,
    positive_int,
    query,
    question_text,
    weights,
)
from longqa.cli.build_cli import add_index_together_parser
from longqa.cli.console import EmbeddingProgress, LibraryProgress, configure_logging, excerpt
from longqa.cli.keys_cli import add_keys_parser
from longqa.cli.reembed_cli import add_reembed_parser
from longqa.cli.shown_skips import not_shown_before
from longqa.cli.shown_skips import record as record_shown_skips
from longqa.contracts.settings import STRATEGIES, Settings, SettingsError, check_names
from longqa.evals.cli import add_eval_parser
from longqa.retrieval import DocumentError
from longqa.retrieval.index.embed.embedder_errors import EmbedderMismatch, EmbedderUnavailable
from longqa.retrieval.index.library.manifest import name_problem
from longqa.retrieval.read.folders import left_out_summary, skip_summary
from longqa.services.inputs import InputError, Opened, index_library, open_library
from longqa.services.stores import searcher_for

DESCRIPTION = "`longqa` command line: index documents, search them, ask questions, evaluate strategies."


def add_scope_arguments(p: argparse.ArgumentParser, collection: bool = True) -> None:
    """--include / --exclude patterns for folders, and (ask, search) --collection."""
    if collection:
        p.add_argument(
            "--collection",
            help="a library indexed with `longqa index --collection NAME`; with paths: only those of it",
        )
    p.add_argument(
        "--include", action="append", metavar="GLOB", help="in folders, only files matching (e.g. '*.pdf'; repeatable)"
    )
    p.add_argument(
        "--exclude", action="append", metavar="GLOB", help="in folders, skip files matching (e.g. 'drafts/**')"
    )


def scope_of(args: argparse.Namespace) -> dict:
    """`--collection`, `--include` and `--exclude`, as the question graph takes them (an empty --collection is an
    error, not the default library)."""
    if args.collection is not None and (problem := name_problem(args.collection)):
        raise InputError(f"--collection: {problem}")
    return {"collection": args.collection, "include": args.include or [], "exclude": args.exclude or []}


def _index_settings(args: argparse.Namespace) -> Settings:
    """Settings from `--set` (e.g. read_timeout_s, read_memory_mb, max_file_mb) and `--home`."""
    values = dict(args.overrides)
    check_names(values)
    return Settings(**{**values, **({"home": args.home} if args.home else {})})


def cmd_index(args: argparse.Namespace) -> int:
    """`longqa index`: index the paths as one library and print what was added, changed, removed and skipped (with
    `-q`: the summary line alone), and a count of every file seen."""
    settings = _index_settings(args)
    args.granularity = index_granularities(args.granularity)
    t0 = time.perf_counter()
    with LibraryProgress(not args.quiet) as progress:
        opened = index_library({"documents": args.paths, **scope_of(args)}, settings, args.granularity, progress)
    seconds = time.perf_counter() - t0
    update, manifest = opened.update, opened.library.manifest()
    if not args.quiet:
        for label, names in (("added", update.added), ("changed", update.changed), ("removed", update.removed)):
            for name in names:
                print(f"{label}: {name}")
        for s in opened.skipped:
            print(f"skipped: {s.path}: {s.reason}")
    record_shown_skips(settings.home, [f"{s.path}: {s.reason}" for s in opened.skipped])
    sizes = ", ".join(f"g={g}: {manifest.parts[g].n_chunks:,} chunks" for g in args.granularity)
    print(
        f"library {opened.library.name!r} {update.summary(skipped=len(opened.skipped))}; "
        f"{len(opened.doc_ids)} document(s), {opened.words:,} words; {sizes}; {seconds:.1f} s; {files_seen(opened)}"
    )
    return 0


def files_seen(opened: Opened) -> str:
    """'40 file(s) seen: 36 indexed, 2 skipped (2 unsupported type), 2 left out (2 hidden)': every file the input
    named or its folders hold, accounted for."""
    unreadable = len(opened.update.skipped) if opened.update is not None else 0
    walk_skipped = len(opened.skipped) - unreadable
    seen = opened.files + walk_skipped + sum(opened.left_out.values())
    line = f"{seen:,} file(s) seen: {opened.files - unreadable:,} indexed"
    if opened.skipped:
        line += ", " + skip_summary(opened.skipped)
    if opened.left_out:
        line += ", " + left_out_summary(opened.left_out)
    return line


def cmd_search(args: argparse.Namespace) -> int:
    """`longqa search`: search one library and print the ranked chunks with their scores and an excerpt."""
    settings = _index_settings(args)
    opened = open_library({"documents": args.paths, **scope_of(args)}, settings)
    searcher = searcher_for(settings, opened.library.name, opened.doc_ids)
    with EmbeddingProgress("embedding", not args.quiet) as progress:
        searcher.indexes(args.granularity, progress=progress, dense=args.mode != "bm25")
    t0 = time.perf_counter()
    results = searcher.search(
        args.query, k=args.k, granularity=args.granularity, weights=args.weights, depth=args.depth, mode=args.mode
    )
    ms = (time.perf_counter() - t0) * 1000
    print(
        f"{len(results)} chunks for {args.query!r} (mode={args.mode}, g={args.granularity}, "
        f"weights dense:bm25={args.weights[0]:g}:{args.weights[1]:g}, {ms:.0f} ms)"
    )
    for rank, r in enumerate(results, 1):
        dense = "-" if r.dense_score is None else f"{r.dense_score:.3f}"
        bm25 = "-" if r.bm25_score is None else f"{r.bm25_score:.2f}"
        source = opened.sources.get(r.chunk.doc_id, r.source)
        print(
            f"\n#{rank} score={r.score:.3f} dense={dense} bm25={bm25} "
            f"{source} chunk {r.chunk.index} chars {r.chunk.start}-{r.chunk.end} ({r.chunk.n_tokens} tok)"
        )
        print("   " + excerpt(r.chunk.text, args.query, args.width))
    return 0


def ask_settings(args: argparse.Namespace) -> Settings:
    """An ask's settings: `--set` values, then its own options (`--model`, `--strategy`, ...)."""
    overrides = {
        "model": args.model,
        "base_url": args.base_url,
        "strategy": args.strategy,
        "analyzer": args.analyzer,
        "context_window": args.context_window,
        "timeout_s": args.timeout,
        "home": args.home,
    }
    values = dict(args.overrides)
    check_names(values)
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = Settings(**values)
    if not args.paths and not args.collection:
        raise InputError("name the documents (files or folders) or a --collection to ask")
    return settings


def cmd_ask(args: argparse.Namespace) -> int:
    """`longqa ask`: answer the question over the documents or collection, rendered for a person or as JSON; 1 when
    the run ended in an error."""
    from longqa.retrieval.index.embed.embedder import preload_in_background

    preload_in_background()  # the query encoder loads while the graph's libraries import
    from longqa.cli.answer import print_json, render
    from longqa.runner.ask import run_question

    settings = ask_settings(args)
    result = run_question(
        args.paths,
        args.question,
        settings,
        thread=args.thread,
        progress=None if args.quiet else sys.stderr,
        scope=scope_of(args),
    )
    if args.json:
        print_json(result)
    elif args.quiet:  # the answer and its passages only: skips are not shown, so not recorded as shown
        render(result, question=args.question, quiet=True)
    else:
        render(result, question=args.question, new_skipped=not_shown_before(settings.home, result.get("skipped") or []))
    return 1 if result.get("status") == "error" else 0


def cmd_warm(args: argparse.Namespace) -> int:
    """`longqa warm status|stop`: report on, or stop, the warm server for this home."""
    from longqa.cli import warm_client
    from longqa.retrieval.environment import default_home

    home = args.home.expanduser() if args.home else default_home()
    reply = warm_client.status(home) if args.action == "status" else warm_client.stop(home)
    if reply is None:
        print(f"no warm server for {home}")
    elif args.action == "stop":
        print(f"warm server {reply.get('pid')} for {home} stopping")
    else:
        current = reply.get("stamp") == warm_client.current_stamp()
        fresh = "current" if current else "out of date (replaced by the next ask)"
        standby = f"standby {reply['standby']}" if reply.get("standby") else "no standby"
        running = f"{reply.get('running', 0)} question(s) running"
        print(f"warm server {reply.get('pid')} for {home}: {running}; {standby}; {fresh}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """`longqa serve`: run one HTTP replica (`--home` becomes its LONGQA_HOME)."""
    from longqa.http.serve import serve

    serve(args.host, args.port, home=args.home)
    return 0


_QUIET_HELP = "only the results (index: its one summary line), no progress, no warnings; errors still"


def _add_library_paths(p: argparse.ArgumentParser, verb: str) -> None:
    """The optional paths of a command that reads one library (search, ask)."""
    p.add_argument(
        "paths",
        nargs="*",
        help=f"files and folders to {verb} (one library; inside a folder indexed before: searched within its library)",
    )


def _add_quiet_and_settings(p: argparse.ArgumentParser, func: Callable[[argparse.Namespace], int]) -> None:
    """The last arguments of index and search, -q and --set, and the command's handler."""
    p.add_argument("-q", "--quiet", action="store_true", help=_QUIET_HELP)
    add_set_argument(p)
    p.set_defaults(func=func)


def _add_index(sub: argparse._SubParsersAction) -> None:
    """`longqa index`."""
    p = sub.add_parser(
        "index",
        help="index files and folders as one library; again: only new and changed files are embedded, "
        "removed ones leave it",
    )
    p.add_argument("paths", nargs="+", help="files and folders (walked recursively)")
    p.add_argument("-g", "--granularity", type=granularity, nargs="+", default=[150], help=GRANULARITY_HELP)
    p.add_argument(
        "--collection", help="the library's name (it then holds exactly these documents); default: named by the paths"
    )
    add_scope_arguments(p, collection=False)
    _add_quiet_and_settings(p, cmd_index)


def _add_search(sub: argparse._SubParsersAction) -> None:
    """`longqa search`."""
    p = sub.add_parser("search", help="hybrid BM25 + dense search over documents (indexes them first)")
    _add_library_paths(p, "search")
    p.add_argument("query", type=query, help="the search query")
    add_scope_arguments(p)
    p.add_argument("-k", "--k", type=positive_int, default=5, help="chunks to return (default 5)")
    p.add_argument("-g", "--granularity", type=granularity, default=150, help=GRANULARITY_HELP + " (default 150)")
    p.add_argument("--mode", choices=["hybrid", "dense", "bm25"], default="hybrid", help="retriever (default hybrid)")
    p.add_argument(
        "--weights",
        type=weights,
        default=(1.0, 1.0),
        help="fusion weights DENSE:BM25 (default 1:1; OkraLong uses 3:2 or 2:3)",
    )
    p.add_argument("--depth", type=positive_int, default=20, help="each retriever's top-N before fusion (default 20)")
    p.add_argument("--width", type=positive_int, default=300, help="characters of each chunk to print")
    _add_quiet_and_settings(p, cmd_search)


def _add_ask(sub: argparse._SubParsersAction) -> None:
    """`longqa ask`."""
    p = sub.add_parser("ask", help="answer a question over documents (streams the graph's progress)")
    _add_library_paths(p, "read")
    p.add_argument("question", type=question_text, help="the question")
    add_scope_arguments(p)
    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=None,
        help="plan preset (default: $LONGQA_STRATEGY or adaptive-precise)",
    )
    add_model_arguments(
        p,
        model_help="chat model, e.g. openai:gpt-4o-mini (default: $LONGQA_MODEL; "
        "unset = evidence only; 'scripted' = offline test model)",
        base_url_help="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="per-call model timeout (default: $LONGQA_TIMEOUT_S or 60); a timed-out call is not retried",
    )
    add_set_argument(p)
    p.add_argument(
        "--thread",
        default=None,
        help="keep a conversation thread (in PostgreSQL with LONGQA_POSTGRES_URI, else SQLite under the home)",
    )
    p.add_argument("--json", action="store_true", help="print the whole output as JSON")
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the answer and its passages (no progress, no notes, no skipped files, no usage table, no "
        "warnings from reading files; errors still)",
    )
    p.add_argument(
        "--no-warm",
        action="store_true",
        help="answer in this process, not through the warm server (also LONGQA_WARM=0; README, Command line)",
    )
    p.set_defaults(func=cmd_ask)


def _add_warm(sub: argparse._SubParsersAction) -> None:
    """`longqa warm`."""
    p = sub.add_parser(
        "warm",
        help="the warm server `longqa ask` starts on demand and reuses (one per user and --home; "
        "exits after LONGQA_WARM_IDLE_S, default 600 s, without a question)",
    )
    p.add_argument("action", choices=["status", "stop"], help="status: is one running; stop: ask it to exit")
    p.set_defaults(func=cmd_warm)


def _add_serve(sub: argparse._SubParsersAction) -> None:
    """`longqa serve`."""
    p = sub.add_parser(
        "serve",
        help="run one replica: an HTTP app (POST /ask, POST /index) over the shared Chroma server and "
        "PostgreSQL named by the environment (README, Deployment); callers send API keys (`longqa keys`), "
        "and without keys it listens on a loopback address only (README, Security)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8123, help="port to listen on (default 8123)")
    p.set_defaults(func=cmd_serve)


def build_parser() -> argparse.ArgumentParser:
    """The `longqa` parser: global options and every subcommand, each naming its handler in `func`."""
    parser = argparse.ArgumentParser(prog="longqa", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress and fallbacks")
    parser.add_argument(
        "--home", type=Path, default=None, help="index directory (default: $LONGQA_HOME or ~/.cache/longqa)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_index, _add_search, _add_ask, _add_warm, _add_serve):
        add(sub)
    add_keys_parser(sub)  # longqa keys add / list / remove
    add_reembed_parser(sub)  # longqa reembed COLLECTION
    add_index_together_parser(sub)  # longqa index-together: one of many workers building one library
    add_eval_parser(sub)  # longqa eval, longqa convert
    return parser


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one `longqa` command; bad input, settings or documents exit 2 with one line on stderr, an interruption
    130. `parser`: one `build_parser()` made ahead (the warm server's, ~15 ms a question; each question runs in a
    forked copy of it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = (parser or build_parser()).parse_args(argv)
    configure_logging(args.verbose, getattr(args, "quiet", False))
    try:
        return args.func(args)
    except (DocumentError, SettingsError, InputError, EmbedderMismatch, EmbedderUnavailable) as e:
        print(f"longqa: error: {e}", file=sys.stderr)
        return 2
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'settings'}: {err['msg']}" for err in e.errors())
        print(f"longqa: error: invalid setting: {problems}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("longqa: interrupted (partial index discarded; it will be rebuilt next time)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
