"""Show a spreadsheet number as Excel displays it under its number format code: thousands
separators, fixed decimals, percentages, currency, scientific notation, simple fractions, dates and
times (`#,##0.00` shows 1599.99 as `1,599.99`; `0.00%` shows 0.025 as `2.50%`; `d-mmm-yy` shows
39219.85 as `17-May-07`).

Hand-written: no well-kept Python library renders Excel format codes (xlrd exposes the codes, openpyxl
only classifies them). English month and day names; colours, conditions, locales and fill characters
are read but not applied; a code this cannot read falls back to the General display.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction

_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_DATE_TOKEN = re.compile(r"(?i)am/pm|a/p|\[h+\]|\[m+\]|\[s+\]|y+|m+|d+|h+|s+|\.0+|e")
_NUMBER_CHARS = set("0#?.,%/E+-")
Tokens = tuple[tuple[str, str], ...]  # a section's (kind, text) pairs


def general(value: float) -> str:
    """A number as Excel's General format shows it: integers whole, others to 10 significant digits."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}".upper()


def display(value: float, code: str, date1904: bool = False) -> str:
    """`value` shown under the Excel format `code` (General when the code is empty or unreadable)."""
    value = float(value)
    if not code or code.lower() == "general" or not math.isfinite(value):
        return general(value)
    tokens, value = _pick_section(_parsed(code), value)
    try:
        if _is_date(tokens):
            return _render_date(value, tokens, date1904)
        return _render_number(value, tokens)
    except (ValueError, OverflowError, InvalidOperation, ZeroDivisionError):
        return general(value)


@functools.lru_cache(maxsize=256)
def _is_date(tokens: Tokens) -> bool:
    return any(kind == "date" for kind, _ in tokens)


@functools.lru_cache(maxsize=256)
def _parsed(code: str) -> list[Tokens]:
    """Each section of a code as its tokens (a workbook uses few codes on many cells: read once)."""
    return [tuple(_tokens(section)) for section in _split_sections(code)]


def _split_sections(code: str) -> list[str]:
    """The code's `;`-separated sections (positive; negative; zero; text), quotes and escapes kept."""
    sections, current, i = [], [], 0
    while i < len(code):
        ch = code[i]
        if ch == '"':
            end = code.find('"', i + 1)
            end = len(code) - 1 if end < 0 else end
            current.append(code[i : end + 1])
            i = end + 1
            continue
        if ch == "\\" and i + 1 < len(code):
            current.append(code[i : i + 2])
            i += 2
            continue
        if ch == ";":
            sections.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    sections.append("".join(current))
    return sections


def _pick_section(sections: list, value: float) -> tuple[Tokens, float]:
    """The section that shows `value`, and the value it shows (negative sections show the magnitude)."""
    if len(sections) >= 2 and value < 0:
        return sections[1], -value
    if len(sections) >= 3 and value == 0:
        return sections[2], value
    return sections[0], value


def _tokens(section: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: `lit` (shown as written), `num` (a digit placeholder or number sign),
    `date` (a date or time part), `general`."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        ch = section[i]
        if ch == '"':
            end = section.find('"', i + 1)
            end = len(section) if end < 0 else end
            out.append(("lit", section[i + 1 : end]))
            i = end + 1
        elif ch == "\\" and i + 1 < len(section):
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch == "_":  # leave the width of the next character: a space
            out.append(("lit", " "))
            i += 2
        elif ch == "*":  # repeat the next character to fill the cell: nothing in text
            i += 2
        elif ch == "[":
            i = _bracket(section, i, out)
        elif section[i : i + 7].lower() == "general":
            out.append(("general", ""))
            i += 7
        elif (m := _DATE_TOKEN.match(section, i)) and not (m.group().lower() == "e" or m.group().startswith(".")):
            out.append(("date", m.group()))
            i = m.end()
        elif ch == "." and out and out[-1][0] == "date" and (m := _DATE_TOKEN.match(section, i)):
            out.append(("date", m.group()))  # fractions of a second after `ss`
            i = m.end()
        elif ch == "@":  # the text placeholder: a number under it shows as General
            out.append(("general", ""))
            i += 1
        elif ch in _NUMBER_CHARS:
            out.append(("num", ch))
            i += 1
        else:
            out.append(("lit", ch))
            i += 1
    return out


def _bracket(section: str, i: int, out: list[tuple[str, str]]) -> int:
    """Read `[...]` at `i`: elapsed time `[h]`, a currency `[$€-407]`; colours and conditions vanish."""
    end = section.find("]", i)
    if end < 0:
        return len(section)
    inner = section[i + 1 : end]
    if re.fullmatch(r"(?i)h+|m+|s+", inner):
        out.append(("date", f"[{inner}]"))
    elif inner.startswith("$"):
        out.append(("lit", inner[1:].split("-", 1)[0]))
    return end + 1


# -- numbers ------------------------------------------------------------------------------------------


def _render_number(value: float, tokens: Tokens) -> str:
    """Fill the section's digit placeholders with `value` (sign shown when the section has no other)."""
    chars, has_general = _number_chars(tokens)
    negative = value < 0
    value = abs(value)
    if has_general:
        body = [general(value) if kind == "general" else text for kind, text in tokens if kind != "num"]
        return ("-" if negative else "") + "".join(body)
    if not any(c in chars for c in "0#?"):
        return "".join(text for kind, text in tokens if kind != "num") or general(-value if negative else value)
    value *= 100 ** chars.count("%")
    if "/" in chars:
        text = _fraction(value, tokens)
    elif "E" in chars:
        text = _scientific(value, tokens)
    else:
        text = _fixed(value, tokens)
    return ("-" if negative and text.strip("0.,% ") else "") + text


@functools.lru_cache(maxsize=256)
def _number_chars(tokens: Tokens) -> tuple[str, bool]:
    return "".join(text for kind, text in tokens if kind == "num"), any(kind == "general" for kind, _ in tokens)


def _round(value: float, places: int) -> Decimal:
    return Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


@functools.lru_cache(maxsize=256)
def _fixed_plan(tokens: Tokens) -> tuple:
    """Where a fixed-point section's digits go: integer and decimal slots, the point, the thousands
    scaling, whether the integer part is grouped, and the marks that stay as they are."""
    placeholders = [(i, t) for i, (k, t) in enumerate(tokens) if k == "num" and t in "0#?"]
    point = next((i for i, (k, t) in enumerate(tokens) if k == "num" and t == "."), None)
    last = placeholders[-1][0]
    int_slots = [(i, t) for i, t in placeholders if point is None or i < point]
    dec_slots = [(i, t) for i, t in placeholders if point is not None and i > point]
    commas = [i for i, (k, t) in enumerate(tokens) if k == "num" and t == ","]
    int_end = int_slots[-1][0] if int_slots else -1
    scale = sum(1 for i in commas if i > last or (point is not None and int_end < i < point))
    grouped = any(int_slots and int_slots[0][0] < i < int_slots[-1][0] for i in commas)
    marks = {i: ("%" if t == "%" else "") for i, (k, t) in enumerate(tokens) if k == "num" and t in ",%"}
    return int_slots, dec_slots, point, scale, grouped, marks, _simple(tokens, dec_slots, scale)


_SIMPLE = re.compile(r"(?:#,##)?0(?:\.(0+))?(%?)")


def _simple(tokens: Tokens, dec_slots: list, scale: int) -> tuple[str, str, str] | None:
    """(prefix, Decimal format, suffix) for the common codes (`0.00`, `#,##0`, `"$"#,##0.00_)`, `0.0%`):
    literals around one run of `#,##0.00%`, which Decimal's own formatting writes at once."""
    nums = [i for i, (k, _) in enumerate(tokens) if k == "num"]
    run = "".join(t for _, t in tokens[nums[0] : nums[-1] + 1])
    if scale or nums[-1] - nums[0] + 1 != len(nums) or not _SIMPLE.fullmatch(run):
        return None
    prefix = "".join(t for _, t in tokens[: nums[0]])
    suffix = ("%" if run.endswith("%") else "") + "".join(t for _, t in tokens[nums[-1] + 1 :])
    return prefix, f"{',' if run.startswith('#,##') else ''}.{len(dec_slots)}f", suffix


def _fixed(value: float, tokens: Tokens) -> str:
    """A fixed-point number: placeholders before the point take the integer part (`,` between
    them groups thousands; `,` after the last scales by 1000), those after it the decimals."""
    int_slots, dec_slots, point, scale, grouped, marks, simple = _fixed_plan(tokens)
    number = _round(value / 1000**scale if scale else value, len(dec_slots))
    if simple is not None:
        return f"{simple[0]}{number:{simple[1]}}{simple[2]}"
    whole, _, decimals = f"{number:f}".partition(".")
    out = dict(marks)
    out.update(_fill_integer(whole, int_slots, grouped))
    for (i, _), digit in zip(dec_slots, decimals.ljust(len(dec_slots), "0"), strict=False):
        out[i] = digit
    _drop_trailing_zeros(out, dec_slots)
    if point is not None:
        out[point] = "." if dec_slots or int_slots else ""
    return "".join(out.get(i, text) for i, (_, text) in enumerate(tokens))


def _fill_integer(whole: str, slots: list[tuple[int, str]], grouped: bool) -> dict[int, str]:
    """The integer part's digits for its placeholders, right to left; extra digits go to the first."""
    if not slots:
        return {}
    digits = "" if whole == "0" else whole
    minimum = sum(1 for _, t in slots if t == "0")
    digits = digits.rjust(minimum, "0")
    if grouped:
        text = f"{int(digits):,}" if digits else ""
        text = text.rjust(len(slots), " ") if any(t == "?" for _, t in slots) else text
        return {i: (text if n == 0 else "") for n, (i, _) in enumerate(slots)}
    out: dict[int, str] = {}
    rest = digits
    for n, (i, t) in reversed(list(enumerate(slots))):
        if n == 0:
            out[i] = rest or (" " if t == "?" else "")
        else:
            out[i] = rest[-1:] or (" " if t == "?" else "")
            rest = rest[:-1]
    return out


def _drop_trailing_zeros(out: dict[int, str], slots: list[tuple[int, str]]) -> None:
    for i, t in reversed(slots):
        if t == "0" or out[i] != "0":
            break
        out[i] = " " if t == "?" else ""


def _scientific(value: float, tokens: Tokens) -> str:
    """`0.00E+00`: a mantissa with the section's decimals and an exponent of at least its digits."""
    chars = "".join(t for k, t in tokens if k == "num")
    mantissa_code, _, exponent_code = chars.partition("E")
    decimals = mantissa_code.partition(".")[2].count("0") + mantissa_code.partition(".")[2].count("#")
    exponent = 0 if value == 0 else math.floor(math.log10(value))
    mantissa = _round(value / 10**exponent, decimals)
    if mantissa >= 10:
        exponent += 1
        mantissa = _round(value / 10**exponent, decimals)
    sign = "-" if exponent < 0 else ("+" if exponent_code.startswith("+") else "")
    width = max(1, exponent_code.lstrip("+-").count("0"))
    prefix = "".join(t for k, t in tokens[: _first_num(tokens)] if k == "lit")
    return f"{prefix}{mantissa:f}E{sign}{abs(exponent):0{width}d}"


def _fraction(value: float, tokens: Tokens) -> str:
    """`# ?/?`: a whole part (when placeholders stand before the numerator's) and a fraction whose
    denominator has at most as many digits as the code's, or the code's own denominator (`?/8`)."""
    slash = next(i for i, (k, t) in enumerate(tokens) if k == "num" and t == "/")
    start = slash
    while start > 0 and tokens[start - 1][0] == "num" and tokens[start - 1][1] in "0#?":
        start -= 1
    has_whole = any(k == "num" and t in "0#?" for k, t in tokens[:start])
    denominator_code = "".join(t for k, t in tokens[slash + 1 :] if k == "num" or t.isdigit())
    whole = int(value) if has_whole else 0
    rest = value - whole
    if denominator_code.isdigit():  # a fixed denominator is shown as it is, not reduced
        numerator, denominator = round(rest * int(denominator_code)), int(denominator_code)
    else:
        fraction = Fraction(rest).limit_denominator(10 ** max(1, len(denominator_code)) - 1)
        numerator, denominator = fraction.numerator, fraction.denominator
    if numerator == denominator:
        whole, numerator = whole + 1, 0
    parts = [str(whole)] if has_whole and (whole or not numerator) else []
    if numerator:
        parts.append(f"{numerator}/{denominator}")
    return " ".join(parts) or "0"


def _first_num(tokens: Tokens) -> int:
    return next(i for i, (k, _) in enumerate(tokens) if k == "num")


# -- dates and times ----------------------------------------------------------------------------------


def excel_datetime(value: float, date1904: bool = False) -> dt.datetime:
    """The date and time an Excel serial number stands for (1900 system, with its leap-year bug, or 1904)."""
    if date1904:
        base = dt.datetime(1904, 1, 1)
    else:
        base = dt.datetime(1899, 12, 31) if value < 60 else dt.datetime(1899, 12, 30)
    return base + dt.timedelta(milliseconds=round(value * 86_400_000))


@functools.lru_cache(maxsize=256)
def _date_plan(tokens: Tokens) -> tuple[list[tuple[str, bool]], int, bool]:
    """A date section's parts, (text, is a date part; `m` marked `minute` where it means minutes),
    its fraction-of-a-second digits and whether it counts hours to 12."""
    subsecond = max((len(t) - 1 for k, t in tokens if k == "date" and t.startswith(".")), default=0)
    twelve = any(k == "date" and t.lower() in ("am/pm", "a/p") for k, t in tokens)
    parts: list[tuple[str, bool]] = []
    for n, (kind, text) in enumerate(tokens):
        if kind == "date":
            minute = text.lower().startswith("m") and _is_minute(n, tokens)
            parts.append(("minute" + text if minute else text, True))
        elif kind == "lit" or (kind == "num" and text not in "0#?"):
            parts.append((text, False))
    return parts, subsecond, twelve


def _render_date(value: float, tokens: Tokens, date1904: bool) -> str:
    """Each date or time part of the section filled from the serial number `value`."""
    parts, subsecond, twelve = _date_plan(tokens)
    moment = excel_datetime(value, date1904)
    moment = moment.replace(microsecond=0) + dt.timedelta(
        seconds=round(moment.microsecond / 1e6, subsecond) if subsecond else round(moment.microsecond / 1e6)
    )
    return "".join(_date_part(text, moment, value, twelve) if is_date else text for text, is_date in parts)


def _is_minute(n: int, tokens: Tokens) -> bool:
    """`m` means minutes right after an hour part or right before a seconds part."""
    before = [t.lower() for k, t in tokens[:n] if k == "date"]
    after = [t.lower() for k, t in tokens[n + 1 :] if k == "date"]
    return bool((before and before[-1].lstrip("[").startswith("h")) or (after and after[0].lstrip("[").startswith("s")))


def _date_part(text: str, moment: dt.datetime, value: float, twelve: bool) -> str:
    lower = text.lower()
    if lower in ("am/pm", "a/p"):
        mark = "AM" if moment.hour < 12 else "PM"
        return mark if lower == "am/pm" else mark[0]
    if lower.startswith("["):
        unit = {"h": 24, "m": 1440, "s": 86400}[lower[1]]
        return str(int(value * unit + 1e-9)).rjust(len(lower) - 2, "0")
    if lower.startswith("."):
        return "." + f"{moment.microsecond / 1e6:.{len(text) - 1}f}"[2:]
    if lower[0] == "y":
        return str(moment.year)[-2:] if len(lower) <= 2 else str(moment.year)
    if lower[0] == "d":
        return {1: str(moment.day), 2: f"{moment.day:02d}", 3: _DAYS[moment.weekday()][:3]}.get(
            len(lower), _DAYS[moment.weekday()]
        )
    if lower[0] == "h":
        hour = (moment.hour % 12 or 12) if twelve else moment.hour
        return str(hour) if len(lower) == 1 else f"{hour:02d}"
    if lower[0] == "s":
        return str(moment.second) if len(lower) == 1 else f"{moment.second:02d}"
    if lower.startswith("minute"):
        return str(moment.minute) if len(lower) == 7 else f"{moment.minute:02d}"
    name = _MONTHS[moment.month - 1]
    return {1: str(moment.month), 2: f"{moment.month:02d}", 3: name[:3], 5: name[0]}.get(len(lower), name)
