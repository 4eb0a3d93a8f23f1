"""`longqa eval` and `longqa convert` (added to longqa's parser by `add_eval_parser`).

longqa convert hotpotqa --n 20 --out data/hotpotqa20.jsonl      # shared data -> LongBench jsonl
longqa eval data/hotpotqa20.jsonl --strategies rag lc self-route --model none --out runs/h20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from longqa.cli.arguments import add_model_arguments, add_set_argument, positive_int

DEFAULT_OUT = Path("evals/runs/default")


def add_eval_parser(subparsers: Any) -> None:
    """Add `longqa eval` and `longqa convert` to longqa's subcommands."""
    _add_eval(subparsers)
    _add_convert(subparsers)


def _add_eval(subparsers: Any) -> None:
    """`longqa eval`."""
    from longqa.contracts.settings import STRATEGIES

    p = subparsers.add_parser(
        "eval",
        help="evaluate strategies on LongBench jsonl datasets (resumable)",
        description="Run strategies over LongBench jsonl files; write report.md, report.json "
        "and plot.png in --out. Rerunning the same command resumes.",
    )
    p.add_argument("datasets", nargs="+", type=Path, help="LongBench jsonl files (see `longqa convert`)")
    p.add_argument(
        "--strategies",
        nargs="+",
        choices=[*STRATEGIES, "all"],
        default=["all"],
        help="strategies to run (default: all)",
    )
    add_model_arguments(
        p,
        model_help="chat model (default $LONGQA_MODEL); 'none' = retrieval-only, "
        "no LLM; 'scripted' = offline test model (not a quality measurement)",
        base_url_help="OpenAI-compatible endpoint",
    )
    add_set_argument(p)
    p.add_argument("--n", type=positive_int, default=None, help="first N valid items of each file")
    p.add_argument("--concurrency", type=positive_int, default=2, help="questions run at once (default 2)")
    p.add_argument(
        "--home",
        dest="eval_home",
        type=Path,
        default=None,
        metavar="DIR",
        help="index directory (default: longqa's --home, else $LONGQA_HOME); keep it to reuse indexes",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument(
        "--oracle",
        action="store_true",
        help="decomposition oracle: gold queries drive the split and step-wise workflows (MuSiQue, HotpotQA "
        "comparison); scores retrieval only, an upper bound, never a quality number (default strategy: adaptive)",
    )
    p.add_argument("--retry-errors", action="store_true", help="rerun cached runs whose status is 'error'")
    p.add_argument("--report-only", action="store_true", help="report from the cache without running anything")
    p.add_argument("--no-plot", action="store_true", help="skip plot.png")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)


def _add_convert(subparsers: Any) -> None:
    """`longqa convert`."""
    from .converters import DATASETS

    c = subparsers.add_parser("convert", help="convert the shared QA data (../shared/data) to LongBench jsonl")
    c.add_argument("dataset", choices=DATASETS)
    c.add_argument("--out", type=Path, required=True, help="the jsonl file to write")
    c.add_argument("--n", type=positive_int, default=None, help="items (questions) to keep, seeded sample")
    c.add_argument("--seed", type=int, default=0, help="sampling and distractor seed (default 0)")
    c.add_argument("--split", choices=["a", "b"], default="a", help="hotpotqa_<split>.jsonl (default a)")
    c.add_argument(
        "--words",
        type=positive_int,
        default=None,
        help="target context words (HotpotQA 9,000 and MuSiQue 11,000 by default)",
    )
    c.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="shared data directory (default $LONGQA_SHARED_DATA or ../shared/data)",
    )
    c.add_argument("--file", type=Path, default=None, help="TAT-QA / papers source file (instead of --data-dir)")
    c.add_argument(
        "--unanswerable",
        action="store_true",
        help="ask each question over another item's document (one without its answer): gold 'unanswerable'",
    )
    c.set_defaults(func=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    """`longqa convert`: write a dataset of the shared QA data as LongBench jsonl; 2 on unreadable data."""
    from .converters import convert
    from .longbench import write_jsonl

    options: dict[str, Any] = {}
    if args.dataset == "hotpotqa":
        options["split"] = args.split
    if args.words and args.dataset in ("hotpotqa", "musique"):
        options["target_words"] = args.words
    if args.file and args.dataset in ("tatqa", "papers"):
        options["path"] = args.file
    try:
        records = convert(args.dataset, n=args.n, seed=args.seed, data_dir=args.data_dir, **options)
    except (OSError, ValueError, KeyError) as e:
        print(f"longqa convert: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if args.unanswerable:
        from .converters import unanswerable

        records = unanswerable(records)
    n = write_jsonl(records, args.out)
    words = [r["length"] for r in records]
    mean = sum(words) / len(words) if words else 0
    print(f"{args.out}: {n} {args.dataset} records, {mean:,.0f} context words on average")
    return 0


def settings_from_args(args: argparse.Namespace):
    """The run's Settings from `--set`, the model options and the index home (`--home`, else longqa's)."""
    from longqa.contracts.settings import Settings, UnknownSetting, check_names

    values: dict[str, Any] = dict(args.overrides)
    try:
        check_names(values)
    except UnknownSetting as e:
        raise SystemExit(f"longqa eval: {e}") from None
    if args.model is not None:
        values["model"] = None if args.model.lower() in ("none", "") else args.model
    for name in ("base_url", "analyzer", "context_window"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    home = args.eval_home or getattr(args, "home", None)
    if home is not None:
        values["home"] = home
    return Settings(**values)


def _read_datasets(args: argparse.Namespace) -> tuple[list, list, dict[str, list[str]]] | None:
    """The items of every dataset file (an item repeating an earlier file's dataset/_id skipped), the bad
    lines, and each dataset's files; None (after an error message) when a file cannot be read."""
    from .longbench import read_jsonl

    items, bad, files = [], [], {}
    seen: set[tuple[str, str]] = set()
    for path in args.datasets:
        try:
            file_items, file_bad = read_jsonl(path, limit=args.n)
        except OSError as e:
            print(f"longqa eval: error: cannot read {path}: {e}", file=sys.stderr)
            return None
        for b in file_bad:
            print(f"longqa eval: {b}", file=sys.stderr)
        kept = [i for i in file_items if (i.dataset, i.id) not in seen]
        if len(kept) < len(file_items):
            print(
                f"longqa eval: {path}: {len(file_items) - len(kept)} item(s) repeat an earlier file's "
                "dataset/_id — skipped",
                file=sys.stderr,
            )
        seen |= {(i.dataset, i.id) for i in kept}
        for i in kept:
            files.setdefault(i.dataset, [])
            if str(path) not in files[i.dataset]:
                files[i.dataset].append(str(path))
        print(f"longqa eval: {path}: {len(kept)} item(s) read, {len(file_bad)} bad line(s) skipped", file=sys.stderr)
        items += kept
        bad += file_bad
    return items, bad, files


def _announce(args: argparse.Namespace, settings: Any) -> None:
    """Say on stderr when the numbers are not a quality measurement (oracle, scripted model, no model)."""
    from .oracle import ORACLE_TITLE
    from .titles import RETRIEVAL_TITLE, SCRIPTED_TITLE

    if args.oracle:
        print(f"longqa eval: {ORACLE_TITLE}", file=sys.stderr)
    elif settings.is_scripted:
        print(f"longqa eval: {SCRIPTED_TITLE}", file=sys.stderr)
    elif not settings.has_llm:
        print(f"longqa eval: {RETRIEVAL_TITLE}", file=sys.stderr)


def _report(
    args: argparse.Namespace,
    items: list,
    strategies: list[str],
    settings: Any,
    result: Any,
    bad: list,
    files: dict[str, list[str]],
) -> None:
    """Write report.md, report.json and the plot, print the markdown, and say on stderr what was written."""
    from .report import build_report, write_report
    from .tables import markdown

    for failure in result.failures:
        print(f"longqa eval: failed (not cached): {failure}", file=sys.stderr)
    report = build_report(
        items, strategies, settings, result, bad, files, concurrency=args.concurrency, oracle=args.oracle
    )
    paths = write_report(report, args.out, make_plot=not args.no_plot)
    print(markdown(report))
    if report.get("plot_note"):
        print(f"longqa eval: {report['plot_note']}", file=sys.stderr)
    missing = result.planned - len(result.records)
    print(
        f"longqa eval: wrote {', '.join(str(p) for p in paths.values())}"
        + (f"; {missing} run(s) missing from the report" if missing else ""),
        file=sys.stderr,
    )


def cmd_eval(args: argparse.Namespace) -> int:
    """`longqa eval`: run (or resume) the strategies over the datasets and write the report; 1 when a run
    failed in the harness, 2 on bad input, 130 when interrupted."""
    from longqa.contracts.settings import STRATEGIES

    from .runner import run_eval

    strategies = list(STRATEGIES) if "all" in args.strategies else list(dict.fromkeys(args.strategies))
    settings = settings_from_args(args)
    if args.oracle:
        if settings.has_llm:
            print("longqa eval: error: --oracle replaces the model; run it with --model none", file=sys.stderr)
            return 2
        if "all" in args.strategies:
            strategies = ["adaptive"]
    read = _read_datasets(args)
    if read is None:
        return 2
    items, bad, files = read
    if not items:
        print("longqa eval: error: no valid items to evaluate", file=sys.stderr)
        return 2
    _announce(args, settings)
    try:
        result = run_eval(
            items,
            strategies,
            settings,
            args.out,
            concurrency=args.concurrency,
            progress=not args.no_progress,
            retry_errors=args.retry_errors,
            execute=not args.report_only,
            oracle=args.oracle,
        )
    except KeyboardInterrupt:
        print(
            f"longqa eval: interrupted; finished runs are saved in {args.out / 'results.jsonl'} — run the same "
            "command again to continue where it stopped",
            file=sys.stderr,
        )
        return 130
    _report(args, items, strategies, settings, result, bad, files)
    return 1 if result.failures else 0
