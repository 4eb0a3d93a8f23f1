"""Read spreadsheets into pipe tables: .xlsx (each sheet a `## Sheet: name` heading and its table)
and .csv/.tsv (one table; the delimiter sniffed). The first non-empty row is each table's header.

An .xlsx is opened through the zip guard of `formats.py` and streamed by openpyxl's read-only
reader (it won the side-by-side measurement, bench/README.md); cells are counted as they are read,
so a sheet of millions of cells is refused with its reason rather than held in memory.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from collections.abc import Iterable
from pathlib import Path

from .formats import ElementCounter, _Budget, _pipe_table, open_zip, refuse_declared_bomb, zip_byte_limit
from .loaders import DocumentError

BASE_CELLS = 200_000
SNIFF_BYTES = 8 << 10  # csv.Sniffer's regular expressions backtrack: kept small, its cost stays small
_DELIMITERS = ",;\t|"


def cell_limit(max_words: int) -> int:
    """The most cells a spreadsheet may have: a non-empty cell holds at least one word, and empty
    ones padding a row are generous at one per word too."""
    return BASE_CELLS + 2 * max_words


class _Cells:
    """Counts the cells read from one file against its limit."""

    def __init__(self, path: Path, kind: str, max_words: int):
        self.path, self.kind, self.limit, self.n = path, kind, cell_limit(max_words), 0

    def add(self, n: int) -> None:
        self.n += n
        if self.n > self.limit:
            raise DocumentError(
                self.path,
                f"{self.kind} has more than {self.limit:,} cells (a huge or padded sheet?); "
                "raise LONGQA_MAX_WORDS to allow a larger one",
            )


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    return " ".join(str(value).split()).replace("|", "/")


def _table(rows: Iterable[Iterable[object]], cells: _Cells) -> list[list[str]]:
    """Rows of cell texts, trailing empty cells dropped, empty rows left out."""
    out: list[list[str]] = []
    for row in rows:
        texts = [_cell_text(v) for v in row]
        cells.add(max(1, len(texts)))
        while texts and not texts[-1]:
            texts.pop()
        if texts:
            out.append(texts)
    return out


# -- XLSX ---------------------------------------------------------------------------------------------


def read_xlsx(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """Every worksheet with a value, in workbook order: its name as a heading, its cells (the
    values Excel saved, not formulas) as a pipe table. Chart sheets are named in `notes`."""
    limit = zip_byte_limit(max_words)
    with open_zip(path, "XLSX") as archive:
        if "[Content_Types].xml" not in archive.namelist():
            raise DocumentError(path, "not an Excel workbook (no [Content_Types].xml in the zip)")
        refuse_declared_bomb(path, archive, "XLSX", limit)
        budget = _Budget(path, "XLSX", limit)
        counter = ElementCounter(path, max_words, "XLSX")
        for name in archive.namelist():
            is_xml = name.lower().endswith((".xml", ".rels"))
            budget.read(archive, name, keep=False, feed=counter.part(name) if is_xml else None)
    workbook = _open_xlsx(path)
    blocks: list[str] = []
    cells = _Cells(path, "XLSX", max_words)
    try:
        for sheet in workbook.worksheets:
            sheet.reset_dimensions()  # a declared A1:XFD1048576 must not pad every row
            rows = _table(sheet.iter_rows(values_only=True), cells)
            if rows:
                blocks.append(f"## Sheet: {' '.join(sheet.title.split())}")
                blocks.append(_pipe_table(rows))
        if notes is not None and workbook.chartsheets:
            notes.append(f"{len(workbook.chartsheets)} chart sheet(s) not read")
    except DocumentError:
        raise
    except (ValueError, KeyError, IndexError, AttributeError, TypeError, zipfile.BadZipFile, OSError) as e:
        raise DocumentError(path, f"corrupt XLSX ({type(e).__name__}: {str(e)[:200]})") from None
    finally:
        workbook.close()
    if not blocks:
        raise DocumentError(path, "XLSX has no cell values in its sheets")
    return "\n\n".join(blocks)


def _open_xlsx(path: Path):
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        return openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    except KeyError as e:
        raise DocumentError(path, f"corrupt XLSX: missing part {e}") from None
    except InvalidFileException as e:
        raise DocumentError(path, f"not an Excel workbook ({str(e)[:200]})") from None
    except (ValueError, TypeError, AttributeError, IndexError, zipfile.BadZipFile, OSError, SyntaxError) as e:
        # openpyxl trusts the package's structure; expat's errors are SyntaxErrors
        raise DocumentError(path, f"corrupt XLSX ({type(e).__name__}: {str(e)[:200]})") from None


# -- CSV / TSV ----------------------------------------------------------------------------------------


def csv_to_text(path: Path, text: str, max_words: int, tab: bool) -> str:
    """Decoded delimited text (read by the bounded text reader) as one pipe table; a .tsv is split
    on tabs, a .csv on the delimiter the sniffer finds in its first 8 KiB (`,` when it finds none)."""
    delimiter = "\t" if tab else _sniff(text[:SNIFF_BYTES])
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = _table(reader, _Cells(path, "CSV", max_words))
    except csv.Error as e:  # a field over csv's size limit, a NUL
        raise DocumentError(path, f"malformed CSV at line {reader.line_num:,} ({e})") from None
    if not rows:
        raise DocumentError(path, "CSV has no values")
    return _pipe_table(rows)


def _sniff(sample: str) -> str:
    lines = sample.splitlines()
    if len(lines) > 1 and len(sample) >= SNIFF_BYTES:  # the last line may be cut
        sample = "\n".join(lines[:-1])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:  # one column, or no consistent delimiter
        return ","
