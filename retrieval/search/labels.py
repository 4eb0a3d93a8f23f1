"""Labels a question names ("Listing 1", "Figure 3", "Table 2", "Section 4.2", "Appendix B") and the
chunks that hold them.

BM25 sees "Listing 1" as the stem "list" and the number 1, which every chunk about lists shares, and
the embedder reads it as a topic: the chunk that holds "Listing 1:" ranked 19th (hybrid) and 14th
(BM25) for "What is the caption of Listing 1?". A label is an exact name, so it is matched exactly:
its kind (or the kind's abbreviation: "Fig. 3", "Sec. 4.2", "§ 4.2"), then its number on word
boundaries ("Table 2" is not "Table 21" nor "Table 2.1"). The chunk where a label is defined leads
the ranking: a caption ("Figure 3. ...", "Listing 1: ...") or, for a section, its numbered heading
("4.2 Results"); without one, the chunks that mention the label do. Hand-written: no library finds
a document's own labels in it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..documents import Chunk, Document
from ..index.chunking import is_heading

# kind -> how a text may write it (a lower-case regex, matched case-insensitively)
KINDS: dict[str, str] = {
    "listing": r"listing",
    "figure": r"fig(?:ure|\.)",
    "table": r"tab(?:le|\.)",
    "section": r"sec(?:tion|\.)|§",
    "chapter": r"chapter|ch\.",
    "appendix": r"appendix",
    "algorithm": r"algorithm|alg\.",
    "equation": r"equation|eq\.",
    "exhibit": r"exhibit",
}  # not "example": "for example 3 ships" names no label
_KIND = "|".join(f"(?P<{kind}>{alts})" for kind, alts in KINDS.items())
_NUMBER = r"(?:[A-Z](?:\.\d+)*|\d+(?:\.\d+)*[a-z]?)"
_ASKED = re.compile(rf"(?<!\w)(?i:{_KIND})\s*(?P<number>{_NUMBER})(?![\w]|\.\d)")
_DEFINING_END = re.compile(r"\s*(?:[:.\-–—|)]|$)")  # "Figure 3." / "Listing 1:" / "Table 2 –" / a line of its own
_LINE_LEAD = re.compile(r"[\s#*_>|]*")  # what may precede a caption on its line: indent, markdown marks
LEADING = 3  # chunks a label may lead a ranking with


@dataclass(frozen=True)
class Label:
    """One label a question names: its kind ("figure") and its number as written ("3", "4.2", "B")."""

    kind: str
    number: str

    def mentions(self) -> re.Pattern[str]:
        """Where a text names this label: its kind in any of its forms, then its number exactly."""
        number = re.escape(self.number)
        return re.compile(rf"(?<!\w)(?i:{KINDS[self.kind]})\s*{number}(?![\w]|\.\d)")

    def heading(self) -> re.Pattern[str] | None:
        """A section's (or chapter's) numbered heading line, "4.2 Results" or "4.2. Results"; None
        for other kinds."""
        if self.kind not in ("section", "chapter") or not self.number[0].isdigit():
            return None
        return re.compile(rf"(?m)^[ \t#*]*{re.escape(self.number)}\.?[ \t]+(?=[A-Z])[^\n]*$")


def labels_in(question: str) -> list[Label]:
    """The labels a question names, in order, each once."""
    found: dict[Label, None] = {}
    for m in _ASKED.finditer(question):
        kind = next(k for k in KINDS if m.group(k))
        found[Label(kind, m.group("number"))] = None
    return list(found)


def label_query(labels: Sequence[Label]) -> str:
    """The labels as a search query ("figure 3 section 4.2"): BM25's candidates in a large library."""
    return " ".join(f"{label.kind} {label.number}" for label in labels)


def _defines(text: str, start: int, end: int) -> bool:
    """Whether the mention at text[start:end] begins its line and ends like a caption."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_LINE_LEAD.fullmatch(text, line_start, start)) and bool(_DEFINING_END.match(text, end))


def holding(labels: Sequence[Label], document: Document, chunks: Sequence[Chunk]) -> tuple[list[int], list[int]]:
    """(the chunks of `document` that define one of `labels`, those that only mention one), as chunk
    indexes in document order."""
    starts = [c.start for c in chunks]
    defined: dict[int, None] = {}
    mentioned: dict[int, None] = {}

    def chunk_at(offset: int) -> int | None:
        i = bisect_right(starts, offset) - 1
        return i if i >= 0 and offset < chunks[i].end else None

    text = document.text
    for label in labels:
        for m in label.mentions().finditer(text):
            i = chunk_at(m.start())
            if i is not None:
                (defined if _defines(text, m.start(), m.end()) else mentioned)[i] = None
        heading = label.heading()
        for m in heading.finditer(text) if heading is not None else ():
            i = chunk_at(m.start() + len(m.group()) - len(m.group().lstrip(" \t#*")))
            if i is not None and is_heading(m.group()):
                defined[i] = None
    return sorted(defined), sorted(k for k in mentioned if k not in defined)


Key = tuple[str, int]  # (doc_id, chunk index)


def leading(
    labels: Sequence[Label], documents: Iterable[tuple[Document, Sequence[Chunk]]], ranked: Sequence[Key]
) -> list[Key]:
    """The chunks that lead a ranking for a question naming `labels`: up to LEADING of those that
    define a label (else of those that mention one), in the ranking's order, then in document order."""
    defined: list[Key] = []
    mentioned: list[Key] = []
    for document, chunks in documents:
        found, said = holding(labels, document, chunks)
        defined += [(document.doc_id, i) for i in found]
        mentioned += [(document.doc_id, i) for i in said]
    place = {key: i for i, key in enumerate(ranked)}
    lead = defined or mentioned
    return sorted(lead, key=lambda k: place.get(k, len(place)))[:LEADING]
