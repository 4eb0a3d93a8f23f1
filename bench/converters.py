"""Which converter longqa should read each format with: its own reader against the libraries, on
the generated corpus of `bench/corpus.py` (true text known), scored by `bench/fidelity.py`.

Candidates per type (a library missing from the environment is left out and named):

  longqa        `load_document(path).text` (what the index holds)
  markitdown    Microsoft's converter (MIT): docx, pptx, xlsx, csv, html, epub, md
  python-docx   `Document.paragraphs` then each table's rows, cells joined by tabs (MIT)
  python-pptx   every shape's text per slide, tables' cells by tabs, notes (MIT)
  openpyxl      every sheet's rows, cells by tabs (MIT)
  calamine      python-calamine, every sheet's rows, cells by tabs (MIT; Rust): .xlsx and .xls
  xlrd          every sheet's rows, cells by tabs (BSD): .xls
  odfpy         `teletype.extractText` of each heading and paragraph (Apache-2.0)
  bs4           BeautifulSoup's `get_text("\\n")` (MIT)
  csv           the standard library's reader, sniffed delimiter, cells by tabs
  raw           the file's bytes as UTF-8 text (Markdown, CSV)
  ole-strings   runs of 4+ printable characters (UTF-16 and Latin-1) in every OLE stream, the
                `strings` shortcut for old .doc/.ppt files (olefile, BSD)

Measures, the mean over each type's files: word recall, bigram recall (word order), table-row
fidelity (rows intact, columns in place, with their header), seconds per file (median of rounds).

    python bench/converters.py                     # 3 files per type, 3 rounds
    python bench/converters.py --per-type 5 --rounds 5 --types docx html
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import machine, md_table, save  # noqa: E402
from bench.corpus import build_corpus  # noqa: E402
from bench.fidelity import Truth, mean, score  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"

Converter = Callable[[Path], str]


def _longqa(path: Path) -> str:
    from longqa.retrieval.read.loaders import load_document

    return load_document(path).text


_markitdown = None


def _markitdown_convert(path: Path) -> str:
    global _markitdown
    if _markitdown is None:
        from markitdown import MarkItDown

        _markitdown = MarkItDown(enable_plugins=False)
    return _markitdown.convert(str(path)).text_content


def _python_docx(path: Path) -> str:
    import docx

    document = docx.Document(str(path))
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        parts += ["\t".join(c.text for c in row.cells) for row in table.rows]
    return "\n".join(parts)


def _python_pptx(path: Path) -> str:
    import pptx

    parts = []
    for slide in pptx.Presentation(str(path)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                parts.append(shape.text_frame.text)
            elif getattr(shape, "has_table", False) and shape.has_table:
                parts += ["\t".join(c.text for c in row.cells) for row in shape.table.rows]
        if slide.has_notes_slide:
            parts.append(slide.notes_slide.notes_text_frame.text)
        parts.append("")
    return "\n".join(parts)


def _openpyxl(path: Path) -> str:
    import openpyxl

    workbook = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    parts = []
    for sheet in workbook.worksheets:
        parts.append(sheet.title)
        parts += ["\t".join("" if v is None else _value(v) for v in row) for row in sheet.iter_rows(values_only=True)]
        parts.append("")
    workbook.close()
    return "\n".join(parts)


def _value(v: object) -> str:
    """A cell as text, whole numbers without `.0` (as longqa and openpyxl write them), dates as ISO."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, dt.datetime) and v.time() == dt.time():
        return v.date().isoformat()
    return v.isoformat() if isinstance(v, dt.date) else str(v)


def _xlrd(path: Path) -> str:
    import xlrd

    workbook = xlrd.open_workbook(str(path))
    parts = []
    for sheet in workbook.sheets():
        parts.append(sheet.name)
        parts += ["\t".join(map(_value, sheet.row_values(r))) for r in range(sheet.nrows)]
        parts.append("")
    return "\n".join(parts)


def _calamine(path: Path) -> str:
    from python_calamine import CalamineWorkbook

    workbook = CalamineWorkbook.from_path(str(path))
    parts = []
    for name in workbook.sheet_names:
        parts.append(name)
        parts += ["\t".join(map(_value, row)) for row in workbook.get_sheet_by_name(name).iter_rows()]
        parts.append("")
    return "\n".join(parts)


def _odfpy(path: Path) -> str:
    from odf import teletype, text
    from odf.opendocument import load

    document = load(str(path))
    return "\n".join(
        teletype.extractText(el) for el in document.getElementsByType(text.P) + document.getElementsByType(text.H)
    )


def _bs4(path: Path) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text("utf-8"), "html.parser")
    for tag in soup(["script", "style", "head"]):
        tag.decompose()
    return soup.get_text("\n")


def _stdlib_csv(path: Path) -> str:
    data = path.read_text("utf-8")
    dialect = csv.Sniffer().sniff(data[:8192], delimiters=",;\t|")
    return "\n".join("\t".join(row) for row in csv.reader(io.StringIO(data), dialect))


def _ole_strings(path: Path) -> str:
    import re

    import olefile

    out: list[str] = []
    with olefile.OleFileIO(str(path)) as ole:
        for entry in ole.listdir():
            data = ole.openstream(entry).read()
            out += re.findall(r"(?:[\x20-\x7e\u00a0-\uffff][\x00]?){4,}", data.decode("latin-1"))
    return "\n".join(s.replace("\x00", "") for s in out)


def _raw(path: Path) -> str:
    return path.read_text("utf-8")


CANDIDATES: dict[str, dict[str, Converter]] = {
    "docx": {"longqa": _longqa, "markitdown": _markitdown_convert, "python-docx": _python_docx},
    "html": {"longqa": _longqa, "markitdown": _markitdown_convert, "bs4": _bs4},
    "pptx": {"longqa": _longqa, "markitdown": _markitdown_convert, "python-pptx": _python_pptx},
    "xlsx": {"longqa": _longqa, "markitdown": _markitdown_convert, "openpyxl": _openpyxl, "calamine": _calamine},
    "xls": {"longqa": _longqa, "markitdown": _markitdown_convert, "xlrd": _xlrd, "calamine": _calamine},
    "csv": {"longqa": _longqa, "markitdown": _markitdown_convert, "csv": _stdlib_csv},
    "tsv": {"longqa": _longqa, "csv": _stdlib_csv},
    "odt": {"longqa": _longqa, "odfpy": _odfpy},
    "epub": {"longqa": _longqa, "markitdown": _markitdown_convert},
    "md": {"longqa": _longqa, "markitdown": _markitdown_convert, "raw": _raw},
    "doc": {"longqa": _longqa, "markitdown": _markitdown_convert, "ole-strings": _ole_strings},
    "ppt": {"longqa": _longqa, "markitdown": _markitdown_convert, "ole-strings": _ole_strings},
}


def _available(convert: Converter, sample: Path) -> str | None:
    """None when the candidate runs here, else why not (a candidate that fails on a file is scored
    0 on it and counted as failed, not left out)."""
    try:
        convert(sample)
    except ImportError as e:
        return f"not installed ({e.name})"
    except Exception:
        return None
    return None


def run(per_type: int, rounds: int, types: list[str] | None) -> dict:
    results: dict = {"machine": machine(), "per_type": per_type, "rounds": rounds, "rows": [], "left_out": []}
    with tempfile.TemporaryDirectory() as tmp:
        items = build_corpus(Path(tmp), per_type=per_type, types=types)
        by_type: dict[tuple[str, str], list] = {}
        for path, kind, truth in items:
            by_type.setdefault((kind, "generated"), []).append((path, truth))
        for path, kind, truth in real_files(types):
            by_type.setdefault((kind, "real"), []).append((path, truth))
        for (kind, origin), files in sorted(by_type.items()):
            for name, convert in CANDIDATES[kind].items():
                why = _available(convert, files[0][0])
                if why:
                    results["left_out"].append(f"{kind}/{origin}/{name}: {why}")
                    continue
                scores, seconds, failures = [], [], 0
                for path, truth in files:
                    times = []
                    text = ""
                    for _ in range(rounds):
                        t0 = time.perf_counter()
                        try:
                            text = convert(path)
                        except Exception:
                            failures += 1
                            text = ""
                            break
                        times.append(time.perf_counter() - t0)
                    scores.append(score(truth, text))
                    if times:
                        seconds.append(statistics.median(times))
                results["rows"].append(
                    {
                        "type": kind,
                        "origin": origin,
                        "converter": name,
                        "files": len(files),
                        "word_recall": mean(s.word_recall for s in scores),
                        "bigram_recall": mean(s.bigram_recall for s in scores),
                        "table_rows": mean(s.table_rows for s in scores),
                        "s_per_file": statistics.median(seconds) if seconds else None,
                        "failures": failures,
                    }
                )
    return results


def real_files(types: list[str] | None) -> list[tuple[Path, str, Truth]]:
    """The public files of bench/corpus/ (SOURCES.md) and the text their projects' tests assert."""
    entries = json.loads((CORPUS / "real.json").read_text("utf-8"))
    return [
        (
            CORPUS / e["path"],
            e["type"],
            Truth(fragments=tuple(e["fragments"]), tables=tuple(e.get("tables", ()))),
        )
        for e in entries
        if not types or e["type"] in types
    ]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-type", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--types", nargs="*", choices=sorted(CANDIDATES))
    args = parser.parse_args()
    results = run(args.per_type, args.rounds, args.types)
    rows = [
        [
            r["type"],
            r["origin"],
            str(r["files"]),
            r["converter"],
            _fmt(r["word_recall"]),
            _fmt(r["bigram_recall"]),
            _fmt(r["table_rows"]),
            _fmt(r["s_per_file"], 4),
            str(r["failures"]),
        ]
        for r in results["rows"]
    ]
    print(
        md_table(
            ["type", "files", "n", "converter", "word recall", "bigram recall", "table rows", "s/file", "failed"], rows
        )
    )
    for line in results["left_out"]:
        print("left out:", line)
    save("converters", results)


if __name__ == "__main__":
    main()
