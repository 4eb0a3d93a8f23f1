"""`longqa index FOLDER` as a user runs it, with this checkout and with an earlier commit, side by side.

    python bench/build_against.py [--against 57d7b45] [--docs 300] [--paragraphs 7] [--rounds 3] [--office]

The folder holds `--docs` .txt documents of `--paragraphs` distinct HotpotQA and MuSiQue paragraphs
each (~80 words a paragraph, from ../shared/data; the corpus of `library_scale.py`), or with
`--office` `--docs` files of each type `bench/corpus.py` generates (Word, PowerPoint, Excel, HTML,
ODT, EPUB, Markdown, CSV, TSV: read in reader processes, not in the index's own). Each round builds
it from an empty index home once with each code, in alternating order, each build its own
`longqa index FOLDER -q` process: imports, reading, chunking, embedding, Chroma, BM25 and the
manifest, all counted. The earlier commit runs from a temporary git worktree on this checkout's
virtual environment (its source folders mapped to `longqa.*` as its pyproject.toml maps them), so
both use the same libraries. Where the current code starts its home's warm server as an index
begins (issue #32), that server runs during the build as it does for a user, and is stopped after it.

Reported per code: wall seconds per round, words/s (median), the speed against the earlier commit
in the same round, peak RSS of the index process. The default commit, 57d7b45, is the code issue #32
was filed against ("today" in its third target). No LLM is involved.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import REPO, finish, longqa_command, machine, md_table, measured_process, offline_env  # noqa: E402
from bench.library_scale import corpus  # noqa: E402

BEFORE_32 = "57d7b45"


def write_folder(folder: Path, n_docs: int, per_doc: int) -> int:
    """`n_docs` .txt files of `per_doc` distinct shared paragraphs each (`library_scale.corpus`); the
    words written."""
    folder.mkdir(parents=True)
    texts, _ = corpus(n_docs, per_doc)
    for d, text in enumerate(texts):
        (folder / f"doc{d:05d}.txt").write_text(text, "utf-8")
    return sum(len(text.split()) for text in texts)


def write_office_folder(folder: Path, per_type: int) -> int:
    """`per_type` generated files of each type `bench/corpus.py` writes; the words of their text."""
    from bench.corpus import build_corpus

    return sum(len(truth.text.split()) for _, _, truth in build_corpus(folder, per_type=per_type))


def package_view(checkout: Path, into: Path) -> Path:
    """A folder holding `longqa` as the checkout's pyproject.toml maps it (each source folder a
    subpackage), made of symbolic links: put it first on PYTHONPATH to import that checkout."""
    mapping = tomllib.loads((checkout / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-dir"]
    root = into / "longqa"
    root.mkdir(parents=True)
    for item in (checkout / mapping["longqa"]).iterdir():
        (root / item.name).symlink_to(item)
    for package, source in mapping.items():
        if package != "longqa":
            (root / package.removeprefix("longqa.")).symlink_to(checkout / source)
    return into


def build(folder: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one `longqa index FOLDER -q` process, the installed script as a
    user runs it (PYTHONPATH picks the code); raises if it fails."""
    argv = [*longqa_command(), "index", str(folder), "-q"]
    code, wall, rss = measured_process(argv, cwd=folder.parent, env=env, stdout=subprocess.DEVNULL)
    if code != 0:
        raise SystemExit(f"longqa index failed ({code}) with {env.get('PYTHONPATH') or 'this checkout'}")
    return wall, rss


def stop_warm_server(env: dict[str, str], cwd: Path) -> None:
    """Stop the home's warm server, if this code has one (the earlier commit has none)."""
    subprocess.run(
        [sys.executable, "-m", "longqa.cli", "warm", "stop"], cwd=cwd, env=env, capture_output=True, check=False
    )


def imported_from(env: dict[str, str], cwd: Path) -> str:
    """Where `longqa.retrieval` is imported from (`cwd` outside any checkout: `python -c` puts it first)."""
    out = subprocess.run(
        [sys.executable, "-c", "import longqa.retrieval, os; print(os.path.realpath(longqa.retrieval.__file__))"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--against", default=BEFORE_32, help=f"the earlier commit (default {BEFORE_32}, before issue #32)")
    p.add_argument("--docs", type=int, default=300, help="documents in the folder")
    p.add_argument("--paragraphs", type=int, default=7, help="paragraphs per document")
    p.add_argument("--rounds", type=int, default=3, help="builds with each code, alternating")
    p.add_argument("--office", action="store_true", help="a folder of generated Office, HTML and EPUB files")
    args = p.parse_args()
    offline_env()
    info = {"machine": machine(), "args": vars(args)}
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    work = Path(tempfile.mkdtemp(prefix="longqa-build-against-"))
    checkout = work / "checkout"
    subprocess.run(["git", "worktree", "add", "--detach", str(checkout), args.against], cwd=REPO, check=True)
    try:
        if args.office:
            words = write_office_folder(work / "folder", args.docs)
        else:
            words = write_folder(work / "folder", args.docs, args.paragraphs)
        view = package_view(checkout, work / "view")
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LONGQA_HOME")}
        codes = {f"this checkout ({head.strip()})": {}, f"earlier commit ({args.against})": {"PYTHONPATH": str(view)}}
        for name, extra in codes.items():
            where = imported_from({**base, **extra}, work)
            expected = checkout if extra else REPO
            if not where.startswith(str(expected.resolve())):
                raise SystemExit(f"{name} imports longqa from {where}, not {expected}")
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
        loads = []
        for r in range(args.rounds):
            order = list(codes) if r % 2 == 0 else list(reversed(codes))
            for name in order:
                home = work / f"home-{len(loads)}"
                env = {**base, **codes[name], "LONGQA_HOME": str(home)}
                wall, rss = build(work / "folder", env)
                stop_warm_server(env, work)
                shutil.rmtree(home, ignore_errors=True)
                runs[name].append((wall, rss))
                loads.append(round(os.getloadavg()[0], 2))
                print(
                    f"round {r + 1}: {name}: {wall:.1f} s, {words / wall:,.0f} words/s, peak {rss:,.0f} MiB", flush=True
                )
        earlier = runs[f"earlier commit ({args.against})"]
        rows = []
        for name, timings in runs.items():
            walls = [w for w, _ in timings]
            ratios = [e / w for (e, _), w in zip(earlier, walls, strict=True)]
            rows.append(
                [
                    name,
                    " / ".join(f"{w:.1f}" for w in walls),
                    f"{words / statistics.median(walls):,.0f}",
                    f"{statistics.median(ratios):.2f}x ({' / '.join(f'{x:.2f}' for x in ratios)})",
                    f"{max(r for _, r in timings):,.0f}",
                ]
            )
        files = sum(1 for f in (work / "folder").rglob("*") if f.is_file())
        print(f"\n### `longqa index` of {files} files ({words:,} words), {args.rounds} rounds alternating\n")
        print(
            md_table(
                ["code", "build s (each round)", "words/s (median)", "speed vs earlier, same round", "peak RSS MiB"],
                rows,
            )
        )
        print(f"\nload average after each build: {loads}")
        info.update(words=words, runs=runs, loads=loads)
        finish("build_against", info)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(checkout)], cwd=REPO, check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
