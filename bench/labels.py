"""Questions that name a label ("What is the caption of Figure 7?", "What is Section 4.2 about?",
"What is the caption of Listing 1?"): where the chunk that defines the label ranks, and whether the
graph's evidence (no model) holds it, with the label boost on and off (`label_links`).

The corpus: the TraceMonkey paper (bench/corpus/pdf/tracemonkey.pdf, pdf.js's test file: its figure
captions and numbered section headings), markitdown's test PDF beside it, and a generated guide in which
twelve paragraphs about lists surround one "Listing 1:" caption (the issue's case). The questions are
made from the documents as read: one per caption line ("Figure N." / "Listing N:") and one per numbered
heading line ("4.2 Blacklisting with Nesting"); the truth is that line's own offset, so a label found
only where it is mentioned ("Figure 7 shows ...") does not count.

    python bench/labels.py --home /tmp/labels-home
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import REPO, finish, machine, md_table, offline_env  # noqa: E402

PDFS = [REPO / "bench/corpus/pdf/tracemonkey.pdf", REPO / "bench/corpus/pdf/markitdown-test.pdf"]
CAPTION = re.compile(r"(?m)^[ \t]*(?P<kind>Figure|Table|Listing)[ \t]+(?P<number>\d+)[.:]")
HEADING = re.compile(r"(?m)^[ \t]*(?P<number>\d+\.\d+)\.?[ \t]+(?P<title>[A-Z][^\n]{2,60})$")
RANK_DEPTH = 60


def guide() -> str:
    """Twelve paragraphs about lists around one "Listing 1:" caption."""
    about = [
        f"Lists, part 1 of {n}: a list keeps its items in order, and listing them one per line makes long "
        "lists easy to read; nested lists indent their items, and a list of lists is listed the same way."
        for n in range(1, 13)
    ]
    caption = (
        "Listing 1: The parser's entry point reads the configuration file and returns the settings object "
        "that the scheduler consumes."
    )
    return "\n\n".join([*about[:7], caption, *about[7:]])


def questions(documents: list) -> list[dict[str, Any]]:
    """(question, document, the defining line's offset and its first words) for every caption and numbered
    heading of the documents."""
    out = []
    for document in documents:
        for m in CAPTION.finditer(document.text):
            question = f"What is the caption of {m['kind']} {m['number']}?"
            out.append({"question": question, "doc_id": document.doc_id, "at": m.start("kind")})
        for m in HEADING.finditer(document.text):
            question = f"What is Section {m['number']} about?"
            out.append({"question": question, "doc_id": document.doc_id, "at": m.start("number")})
    for q in out:
        document = next(d for d in documents if d.doc_id == q["doc_id"])
        q["line"] = " ".join(document.text[q["at"] :].split("\n", 1)[0].split())[:40]
    return [q for i, q in enumerate(out) if q["question"] not in {p["question"] for p in out[:i]}]


def rank_of(results: list, q: dict[str, Any]) -> int | None:
    """1-based rank of the first chunk that holds the defining line, None beyond the depth."""
    for rank, r in enumerate(results, 1):
        if r.chunk.doc_id == q["doc_id"] and r.chunk.start <= q["at"] < r.chunk.end:
            return rank
    return None


def measure(folder: Path, home: Path, granularity: int) -> dict[str, dict[str, list]]:
    from longqa.graph.graph import graph
    from longqa.retrieval import IndexSettings, IndexStore
    from longqa.retrieval.read.loaders import load_document
    from longqa.retrieval.search.search import Searcher

    documents = [load_document(p) for p in sorted(folder.iterdir())]
    store = IndexStore(IndexSettings(home=home / "search"))
    searcher = Searcher(store, documents)
    rows: dict[str, dict[str, list]] = {}
    asked = questions(documents)
    for on in (False, True):
        row = rows[f"label_links={str(on).lower()}"] = {"rank": [], "evidence": [], "words": []}
        for q in asked:
            results = searcher.search(q["question"], k=RANK_DEPTH, granularity=granularity, labels=on)
            row["rank"].append(rank_of(results, q))
            context = {"model": None, "home": str(home / "graph"), "label_links": on}
            final = graph.invoke({"question": q["question"], "documents": [str(folder)]}, context=context)
            texts = [" ".join(e["text"].split()) for e in final.get("evidence") or []]
            row["evidence"].append(any(q["line"] in t for t in texts))
            row["words"].append(sum(len(t.split()) for t in texts))
            print(f"{q['question']!r} label_links={on}: rank {row['rank'][-1]}", file=sys.stderr, flush=True)
    return {"questions": [q["question"] for q in asked], **rows}


def table(rows: dict[str, Any]) -> str:
    lines = []
    for name, row in rows.items():
        if name == "questions":
            continue
        ranks = [r if r is not None else RANK_DEPTH + 1 for r in row["rank"]]
        n = len(ranks)
        lines.append(
            [
                name,
                n,
                f"{100 * sum(r == 1 for r in ranks) / n:.1f}",
                f"{100 * sum(r <= 5 for r in ranks) / n:.1f}",
                statistics.median(ranks),
                f"{100 * sum(row['evidence']) / n:.1f}",
                round(statistics.mean(row["words"])),
            ]
        )
    head = ["search", "questions", "defining chunk 1st %", "in top 5 %", "median rank", "in evidence %", "words"]
    return md_table(head, lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--home", type=Path, required=True, help="index directory")
    p.add_argument("--granularity", type=int, default=150)
    args = p.parse_args(argv)
    offline_env()
    info: dict[str, Any] = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "labels"
        folder.mkdir()
        for pdf in PDFS:
            (folder / pdf.name).write_bytes(pdf.read_bytes())
        (folder / "lists-guide.md").write_text(guide(), "utf-8")
        rows = measure(folder, args.home, args.granularity)
    info["rows"] = rows
    per_question = [
        [q, *(rows[k]["rank"][i] for k in rows if k != "questions")] for i, q in enumerate(rows["questions"])
    ]
    print(md_table(["question", *(k for k in rows if k != "questions")], per_question))
    print()
    print(table(rows))
    finish("labels", info)


if __name__ == "__main__":
    main()
