"""An Office package with its broken side parts emptied, so the library that opens it whole (python-docx,
python-pptx parse every XML part when they open a package) reads the rest: a header, a slide, a
chart or a notes part that is not well-formed XML becomes an empty element of the same name, and the
caller names it in a warning. The main part (the document's body) is never emptied: without it there
is nothing to read, and the library's own error says so.

Hand-written: neither library offers to skip a part, and this is a copy in memory of an archive the
zip guard (formats.py) has already bounded.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

from lxml import etree

_ROOT = re.compile(rb"<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)[\s/>]")
_NAMESPACE = re.compile(rb'xmlns(?::[\w.-]+)?="[^"]*"')


def broken_parts(path: Path) -> list[str]:
    """The XML parts of the package that are not well-formed (entities never resolved)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    broken = []
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.lower().endswith((".xml", ".rels")):
                try:
                    etree.fromstring(archive.read(name), parser)
                except etree.XMLSyntaxError:
                    broken.append(name)
    return broken


def mended_copy(path: Path, main: str) -> tuple[io.BytesIO, list[str]] | None:
    """The package in memory with each broken XML part but `main` (and the .rels and content types,
    which hold the package together) replaced by an empty root element of its name and namespaces,
    and the parts emptied; None when no such part is broken (nothing to mend)."""
    structure = (main, "[Content_Types].xml")
    broken = [name for name in broken_parts(path) if name not in structure and not name.endswith(".rels")]
    if not broken:
        return None
    copy = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            target.writestr(info, _emptied(data) if info.filename in broken else data)
    copy.seek(0)
    return copy, broken


def _emptied(data: bytes) -> bytes:
    """An empty root element with the part's root name and the namespaces its first tag declares."""
    body = re.sub(rb"<\?.*?\?>", b"", data[:65536], flags=re.S).lstrip()
    match = _ROOT.search(body)
    if match is None:
        return b"<empty/>"
    end = body.find(b">", match.start())
    namespaces = b" ".join(_NAMESPACE.findall(body[match.start() : end if end > 0 else len(body)]))
    name = (match.group(1) or b"") + match.group(2)
    return b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<' + name + b" " + namespaces + b"/>"


def part_label(name: str) -> str:
    """A part as a person names it: "word/header1.xml" -> "header1", "ppt/slides/slide3.xml" -> "slide 3"."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return re.sub(r"^(slide|chart)(\d+)$", r"\1 \2", stem)
