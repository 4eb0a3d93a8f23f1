"""The section a passage lies in: the nearest heading at or before its start (a markdown heading, a
numbered heading "4.2 Results", or a short title line: `chunking.is_heading`), so a citation can say
where in a document its passage is, beside the file and, in a paged document, the page."""

from __future__ import annotations

from bisect import bisect_right

from ..documents import Document
from ..index.chunking import is_heading

MAX_LOOKBACK = 400  # paragraphs looked at before a passage for its heading: a document without any stops there
MAX_SECTION_CHARS = 80  # a longer heading is shown cut, with "…"


def section_of(document: Document, start: int) -> dict[str, str]:
    """{"section": "4.2 Results"} for a passage starting at `start`: the last heading paragraph that starts at or
    before it; {} when none does (within MAX_LOOKBACK paragraphs)."""
    paragraphs = document.paragraphs
    at = bisect_right([p.start for p in paragraphs], start) - 1
    for p in reversed(paragraphs[max(0, at - MAX_LOOKBACK) : at + 1]):
        text = document.text[p.start : p.end]
        if not p.is_table and is_heading(text):
            title = " ".join(text.strip().lstrip("#").split())
            if title:
                cut = title[:MAX_SECTION_CHARS].rsplit(" ", 1)[0] + "…" if len(title) > MAX_SECTION_CHARS else title
                return {"section": cut}
    return {}
