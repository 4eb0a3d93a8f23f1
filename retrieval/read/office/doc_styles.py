"""Which paragraphs of an old binary Word (.doc) file are headings: each paragraph's style (its
`istd`, in the paragraph properties of the FKP pages that PlcBtePapx lists, MS-DOC 2.9.181) and
that style's built-in identifier (`sti` in the style sheet, 2.9.271: 1-9 are Heading 1-9, 62 is
Title). A heading's paragraph mark is replaced by a marker U+FDD1-U+FDD9 (its level; Unicode
noncharacters, never in a document's text), which `ole_office.py` writes as `#` headings.

Headings are a bonus to the text: a style sheet or page this cannot read leaves the text as it is.
"""

from __future__ import annotations

import array
import bisect
import struct

HEADING_MARK = 0xFDD0  # + level
_TITLE_STI = 62
Piece = tuple[int, int, int, int]  # first character, character after the last, byte offset, bytes a character


def mark_headings(units: bytes, main_chars: int, word: bytes, table: bytes, blob: int, pieces: list[Piece]) -> bytes:
    """`units` (UTF-16LE) with the paragraph marks of the main text's headings replaced by markers."""
    try:
        levels = _style_levels(table, *struct.unpack_from("<II", word, blob + 1 * 8))
        if not levels:
            return units
        runs = _paragraph_styles(word, table, *struct.unpack_from("<II", word, blob + 13 * 8))
    except (struct.error, IndexError, ValueError):
        return units
    starts = [run[0] for run in runs]
    chars = array.array("H")
    chars.frombytes(units[: 2 * main_chars] if len(units) % 2 == 0 else units[: 2 * main_chars - 1])
    piece_starts = [p[0] for p in pieces]
    for cp, ch in enumerate(chars):
        if ch != 0x0D:
            continue
        piece = pieces[bisect.bisect_right(piece_starts, cp) - 1] if piece_starts else None
        if piece is None or not piece[0] <= cp < piece[1]:
            continue
        fc = piece[2] + (cp - piece[0]) * piece[3]
        at = bisect.bisect_right(starts, fc) - 1
        if at >= 0 and fc < runs[at][1] and runs[at][2] in levels:
            chars[cp] = HEADING_MARK + levels[runs[at][2]]
    return chars.tobytes() + units[2 * len(chars) :]


def _style_levels(table: bytes, fc: int, lcb: int) -> dict[int, int]:
    """istd -> heading level (1-9) for the style sheet's Heading and Title styles."""
    stsh = table[fc : fc + lcb]
    if len(stsh) < 4:
        return {}
    cb_stshi = struct.unpack_from("<H", stsh, 0)[0]
    cstd = struct.unpack_from("<H", stsh, 2)[0]
    levels: dict[int, int] = {}
    at = 2 + cb_stshi
    for istd in range(min(cstd, 4096)):
        if at + 2 > len(stsh):
            break
        cb_std = struct.unpack_from("<H", stsh, at)[0]
        if cb_std >= 2 and at + 4 <= len(stsh):
            sti = struct.unpack_from("<H", stsh, at + 2)[0] & 0x0FFF
            if 1 <= sti <= 9:
                levels[istd] = sti
            elif sti == _TITLE_STI:
                levels[istd] = 1
        at += 2 + cb_std
    return levels


def _paragraph_styles(word: bytes, table: bytes, fc: int, lcb: int) -> list[tuple[int, int, int]]:
    """(first byte, byte after the last, istd) of the text's paragraph runs, in file order."""
    plc = table[fc : fc + lcb]
    n = (len(plc) - 4) // 8
    runs: list[tuple[int, int, int]] = []
    for i in range(min(max(n, 0), 65_536)):
        pn = struct.unpack_from("<I", plc, 4 * (n + 1) + 4 * i)[0] & 0x3FFFFF
        page = word[pn * 512 : pn * 512 + 512]
        if len(page) < 512:
            continue
        crun = page[511]
        bounds = struct.unpack_from(f"<{crun + 1}I", page, 0)
        for j in range(crun):
            offset = 2 * page[4 * (crun + 1) + 13 * j]
            istd = 0
            if offset:
                cb = page[offset]
                istd = struct.unpack_from("<H", page, offset + (2 if cb == 0 else 1))[0]
            runs.append((bounds[j], bounds[j + 1], istd))
    runs.sort()
    return runs
