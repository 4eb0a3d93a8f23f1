"""The number format of each numeric cell of an .xlsx, which calamine does not expose: read from the
workbook's styles (`xl/styles.xml`: a cell's `s` attribute picks a `cellXfs` entry, whose `numFmtId`
is a built-in format or one of the workbook's `numFmts`) and its sheets' cells, with expat (no tree).

Called after the zip guard of `formats.py` has read every part under the byte budget, so the parts
read again here are known to be sound and bounded. A workbook whose styles name no number format
but General skips the sheets' pass.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import zipfile
from pathlib import Path
from xml.parsers import expat

from .numfmt import display

# ECMA-376 part 1, 18.8.30: the built-in formats (ids 14 and 22 as Excel shows them in en-US)
BUILTIN_FORMATS = {
    1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%", 11: "0.00E+00", 12: "# ?/?",
    13: "# ??/??", 14: "m/d/yyyy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 18: "h:mm AM/PM",
    19: "h:mm:ss AM/PM", 20: "h:mm", 21: "h:mm:ss", 22: "m/d/yyyy h:mm", 37: "#,##0 ;(#,##0)",
    38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)", 40: "#,##0.00;[Red](#,##0.00)", 45: "mm:ss",
    46: "[h]:mm:ss", 47: "mm:ss.0", 48: "##0.0E+0", 49: "@",
}  # fmt: skip
_BLOCK = 1 << 16

Formats = dict[tuple[int, int], str]  # (row, column), from 0 -> format code


class WorkbookFormats:
    """Each worksheet's formatted numeric cells, by sheet name, and the workbook's date system."""

    def __init__(self, sheets: dict[str, Formats], date1904: bool):
        self.sheets, self.date1904 = sheets, date1904


def read_formats(path: Path) -> WorkbookFormats:
    """The number formats of the numeric cells of every worksheet that has any (empty when the
    workbook's parts are not where a workbook keeps them: then cells show their saved values)."""
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        workbook = _elements(archive, "xl/workbook.xml", names)
        date1904 = any(
            tag == "workbookPr" and attrs.get("date1904", "").lower() in ("1", "true") for tag, attrs in workbook
        )
        styles = _style_formats(_elements(archive, "xl/styles.xml", names))
        if not any(styles):
            return WorkbookFormats({}, date1904)
        targets = {
            attrs.get("Id"): attrs.get("Target", "")
            for tag, attrs in _elements(archive, "xl/_rels/workbook.xml.rels", names)
            if tag == "Relationship"
        }
        sheets: dict[str, Formats] = {}
        for tag, attrs in workbook:
            # r:id, in the Transitional or the Strict relationships namespace
            rid = next((v for k, v in attrs.items() if k.endswith(" id")), None) if tag == "sheet" else None
            target = targets.get(rid) if rid else None
            if target:
                part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
                if part in names:
                    sheets[attrs.get("name", "")] = _cell_formats(archive, part, styles)
    return WorkbookFormats(sheets, date1904)


def _elements(archive: zipfile.ZipFile, name: str, names: set[str]) -> list[tuple[str, dict[str, str]]]:
    """(local tag, attributes) of a small part's elements; none when the part is missing or broken."""
    if name not in names:
        return []
    found: list[tuple[str, dict[str, str]]] = []
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = lambda tag, attrs: found.append((tag.rsplit(" ", 1)[-1], attrs))
    try:
        parser.Parse(archive.read(name), True)
    except expat.ExpatError:
        return []
    return found


def _style_formats(elements: list[tuple[str, dict[str, str]]]) -> list[str]:
    """Each `cellXfs` entry's format code, "" for General."""
    custom = {a.get("numFmtId"): a.get("formatCode", "") for tag, a in elements if tag == "numFmt"}
    codes: list[str] = []
    in_cell_xfs = False
    for tag, attrs in elements:
        if tag in ("cellXfs", "cellStyleXfs", "dxfs"):
            in_cell_xfs = tag == "cellXfs"
        elif tag == "xf" and in_cell_xfs:
            number = attrs.get("numFmtId", "0")
            builtin = BUILTIN_FORMATS.get(int(number), "") if number.isdecimal() and len(number) <= 4 else ""
            code = custom.get(number) or builtin
            codes.append("" if code.lower() == "general" else code)
    return codes


def _cell_formats(archive: zipfile.ZipFile, part: str, styles: list[str]) -> Formats:
    """The formatted numeric cells of one sheet part, streamed."""
    formats: Formats = {}
    row = [0, -1]  # the current row and column, for cells that leave out their reference

    def start(tag: str, attrs: dict[str, str]) -> None:
        local = tag.rsplit(" ", 1)[-1]
        if local == "row":
            r = attrs.get("r", "")
            row[0] = int(r) - 1 if r.isdecimal() and len(r) <= 7 else row[0] + 1
            row[1] = -1
        elif local == "c":
            row[1] = _column(attrs.get("r", ""), row[1] + 1)
            style = attrs.get("s", "0")
            if attrs.get("t", "n") == "n" and style.isdecimal() and len(style) <= 6 and int(style) < len(styles):
                if styles[int(style)]:
                    formats[(row[0], row[1])] = styles[int(style)]

    parser = expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = start
    try:
        with archive.open(part) as stream:
            while block := stream.read(_BLOCK):
                parser.Parse(block, False)
            parser.Parse(b"", True)
    except expat.ExpatError:
        pass  # calamine names a broken sheet; the cells read so far keep their formats
    return formats


def _column(ref: str, default: int) -> int:
    letters = ref.rstrip("0123456789")
    column = 0
    for ch in letters.upper():
        column = column * 26 + (ord(ch) - 64)
    return column - 1 if 0 < column <= 16_384 else default


def formatted(value: object, code: str | None, date1904: bool) -> object:
    """A calamine cell value shown under its number format (the value as it was without one)."""
    if not code or isinstance(value, bool | str):
        return value
    serial = _serial(value, date1904)
    return value if serial is None else display(serial, code, date1904)


def _serial(value: object, date1904: bool) -> float | None:
    """An Excel serial number from calamine's number, date, time or duration."""
    if isinstance(value, int | float):
        return float(value)
    base = dt.datetime(1904, 1, 1) if date1904 else dt.datetime(1899, 12, 30)
    if isinstance(value, dt.datetime):
        return (value - base).total_seconds() / 86_400
    if isinstance(value, dt.date):
        return float((value - base.date()).days)
    if isinstance(value, dt.time):
        return (value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6) / 86_400
    if isinstance(value, dt.timedelta):
        return value.total_seconds() / 86_400
    return None
