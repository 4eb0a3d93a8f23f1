"""Read spreadsheets into pipe tables: .xlsx and .xls (each sheet a `## Sheet: name` heading and its
table) and .csv/.tsv (one table; the delimiter sniffed). The first non-empty row is each table's header.

An .xlsx is read with python-calamine (MIT; Rust): as faithful as openpyxl on the bench and ~20x
faster (bench/README.md). An .xls is read with xlrd (BSD), which gives each cell's number format, so
its numbers are shown as Excel displays them (`numfmt.py`); calamine gives only the saved values.
calamine reads a sheet into a dense grid, so an .xlsx first goes through the zip guard of
`formats.py`, whose streaming pass counts its cells and the grid they span (A1 to the last row and
column) against the cell limit; an .xls (BIFF) sheet is at most 65,536 x 256 cells, and its size is
checked before its rows are read.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import struct
import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..formats import _pipe_table, guard_archive
from ..limits import DocumentError
from .numfmt import display

BASE_CELLS = 200_000
CELLS_PER_WORD = 0.5  # a sheet's cell is a word or more, most often; empty padding counts too
SNIFF_BYTES = 8 << 10  # csv.Sniffer's regular expressions backtrack: kept small, its cost stays small
_DELIMITERS = ",;\t|"


def cell_limit(max_words: int) -> int:
    """The most cells a spreadsheet may have, and the most its dense grid may span (counted in its
    XML before calamine reads it, and as rows are read): tied to the word limit."""
    return BASE_CELLS + int(CELLS_PER_WORD * max_words)


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
    values Excel saved, not formulas; no number formats applied) as a pipe table. Chart sheets are
    named in `notes`."""
    guard_archive(path, "XLSX", "an Excel workbook", max_words, "[Content_Types].xml", max_cells=cell_limit(max_words))
    from .xlsx_formats import read_formats

    try:
        formats = read_formats(path)
    except (ValueError, OSError, RuntimeError, zipfile.BadZipFile):  # a number past int's limit, a cut part
        formats = None  # the cells show their saved values
    return _read_calamine(path, "XLSX", max_words, notes, formats)


def _read_calamine(path: Path, kind: str, max_words: int, notes: list[str] | None, formats=None) -> str:
    """Each worksheet's rows through python-calamine, counted against the cell limit."""
    from python_calamine import CalamineError, CalamineWorkbook, PasswordError, SheetTypeEnum

    limit = cell_limit(max_words)
    cells = _Cells(path, kind, max_words)
    blocks: list[str] = []
    failed: list[str] = []  # sheets that could not be read: the others are kept
    try:
        workbook = CalamineWorkbook.from_path(str(path))
        charts = 0
        for meta in workbook.sheets_metadata:
            if meta.typ != SheetTypeEnum.WorkSheet:
                charts += meta.typ == SheetTypeEnum.ChartSheet
                continue
            try:
                sheet = workbook.get_sheet_by_name(meta.name)
            except (CalamineError, ValueError, TypeError) as e:  # one sheet's part cannot be parsed
                failed.append(f"sheet '{' '.join(meta.name.split())}' not read ({type(e).__name__}: {str(e)[:200]})")
                continue
            if sheet.height * sheet.width > limit:
                raise DocumentError(
                    path,
                    f"{kind} sheet '{meta.name}' has {sheet.height * sheet.width:,} cells, more than {limit:,}; "
                    "raise LONGQA_MAX_WORDS to allow a larger one",
                )
            sheet_formats = formats.sheets.get(meta.name) if formats is not None else None
            rows = _table(_formatted_rows(sheet, sheet_formats, formats) if sheet_formats else sheet.iter_rows(), cells)
            if rows:
                blocks.append(f"## Sheet: {' '.join(meta.name.split())}")
                blocks.append(_pipe_table(rows))
    except DocumentError:
        raise
    except PasswordError:
        raise DocumentError(path, f"{kind} is password-protected (encrypted)") from None
    except (CalamineError, ValueError, OSError, TypeError) as e:  # calamine's errors, a part it cannot parse
        raise DocumentError(path, f"corrupt {kind} ({type(e).__name__}: {str(e)[:200]})") from None
    except BaseException as e:  # a panic in the Rust code (pyo3's PanicException is a BaseException)
        if type(e).__name__ != "PanicException":
            raise
        raise DocumentError(path, f"corrupt {kind} (the reader failed: {str(e)[:200]})") from None
    if notes is not None and charts:
        notes.append(f"{charts} chart sheet(s) not read")
    if notes is not None:
        notes.extend(failed)
    if not blocks:
        reason = f"corrupt {kind}: {failed[0]}" if failed else f"{kind} has no cell values in its sheets"
        raise DocumentError(path, reason)
    return "\n\n".join(blocks)


def _formatted_rows(sheet, sheet_formats: dict, formats) -> list[list[object]]:
    """A sheet's rows with each formatted number shown as Excel displays it. The grid's first row
    and column are found from its end (calamine pads the rows above the first from A1, but not
    the columns left of it)."""
    from .xlsx_formats import formatted

    grid = list(sheet.iter_rows())
    if not grid:
        return grid
    end_row, end_column = sheet.end
    first_row, first_column = end_row + 1 - len(grid), end_column + 1 - max(len(r) for r in grid)
    return [
        [
            formatted(v, sheet_formats.get((first_row + r, first_column + c)), formats.date1904)
            for c, v in enumerate(row)
        ]
        for r, row in enumerate(grid)
    ]


# -- XLS (Excel 97-2003) ------------------------------------------------------------------------------


def read_xls(path: Path, max_words: int, notes: list[str] | None = None) -> str:
    """An old binary (BIFF) workbook, as `read_xlsx` writes a workbook, but with numbers shown as
    Excel displays them (`1,599.99`, `2.50%`, `17-May-07`: xlrd gives each cell's number format)."""
    with path.open("rb") as f:
        head = f.read(8)
    if head.startswith(b"PK"):  # a modern workbook saved under the old name
        return read_xlsx(path, max_words, notes)
    if not head.startswith(_OLE_MAGIC):
        raise DocumentError(path, "not an Excel 97-2003 workbook (no OLE compound file header)")
    import xlrd
    from xlrd.compdoc import CompDocError

    try:
        book = xlrd.open_workbook(str(path), formatting_info=True, on_demand=True, logfile=io.StringIO())
        try:
            blocks = _xls_blocks(path, book, max_words)
        finally:
            book.release_resources()
    except DocumentError:
        raise
    except xlrd.XLRDError as e:
        if "encrypt" in str(e).lower():
            raise DocumentError(path, "XLS is password-protected (encrypted)") from None
        raise DocumentError(path, f"corrupt XLS ({str(e)[:200]})") from None
    except (CompDocError, ValueError, IndexError, KeyError, TypeError, AttributeError, AssertionError) as e:
        raise DocumentError(path, f"corrupt XLS ({type(e).__name__}: {str(e)[:200]})") from None
    except (OverflowError, EOFError, UnicodeDecodeError, struct.error) as e:
        raise DocumentError(path, f"corrupt XLS ({type(e).__name__}: {str(e)[:200]})") from None
    if not blocks:
        raise DocumentError(path, "XLS has no cell values in its sheets")
    return "\n\n".join(blocks)


def _xls_blocks(path: Path, book, max_words: int) -> list[str]:
    """Each worksheet's heading and pipe table, its sheet size checked before its rows are read."""
    limit = cell_limit(max_words)
    cells = _Cells(path, "XLS", max_words)
    blocks: list[str] = []
    for index in range(book.nsheets):
        sheet = book.sheet_by_index(index)
        if sheet.nrows * sheet.ncols > limit:
            raise DocumentError(
                path,
                f"XLS sheet '{sheet.name}' has {sheet.nrows * sheet.ncols:,} cells, more than {limit:,}; "
                "raise LONGQA_MAX_WORDS to allow a larger one",
            )
        rows = _table(([_xls_cell(book, cell) for cell in sheet.row(r)] for r in range(sheet.nrows)), cells)
        book.unload_sheet(index)
        if rows:
            blocks.append(f"## Sheet: {' '.join(sheet.name.split())}")
            blocks.append(_pipe_table(rows))
    return blocks


def _xls_cell(book, cell) -> str | None:
    """A cell's text: a number or date under its number format, an error as Excel writes it."""
    import xlrd

    if cell.ctype in (xlrd.XL_CELL_NUMBER, xlrd.XL_CELL_DATE):
        xf = book.xf_list[cell.xf_index] if cell.xf_index is not None and cell.xf_index < len(book.xf_list) else None
        number_format = book.format_map.get(xf.format_key) if xf is not None else None
        return display(cell.value, number_format.format_str if number_format else "", book.datemode == 1)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return "TRUE" if cell.value else "FALSE"
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    return cell.value if cell.ctype == xlrd.XL_CELL_TEXT else None


_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


# -- CSV / TSV ----------------------------------------------------------------------------------------


def csv_to_text(path: Path, text: str, max_words: int, tab: bool) -> str:
    """Decoded delimited text (read by the bounded text reader) as one pipe table; a .tsv is split
    on tabs, a .csv on the delimiter the sniffer finds in its first 8 KiB (`,` when it finds none)."""
    delimiter = "\t" if tab else _sniff(text[:SNIFF_BYTES])
    # a field may be as long as the text the bounded reader let in (seen: one 131,073-character field, over csv's
    # default limit, refused a whole legitimate file); process-wide and only ever raised, to what is in memory
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
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
