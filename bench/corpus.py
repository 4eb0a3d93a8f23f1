"""The converter bench's measuring corpus, generated: documents whose true text is known because we
write it, in every format longqa reads but PDF, each holding what converters tend to lose (Word text
boxes, headers and footnotes; HTML text in `<div>`/`<span>` beside block tags, merged table cells,
a nested table; slides with tables, groups and notes; several sheets; quoted CSV fields; ODT notes
and frames; raw HTML in Markdown). Seeded, so every run measures the same files.

    from bench.corpus import build_corpus
    items = build_corpus(Path("/tmp/corpus"), per_type=3)   # [(path, type, Truth), ...]

Generated rather than downloaded: the public converters' test files (docling's are the project's
held-out measure) come without known-good text for most formats; writing the files here gives exact
truth and no licence question. See bench/README.md for the limits this sets on the numbers.
"""

from __future__ import annotations

import csv
import datetime as dt
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

from bench.fidelity import Truth

VOCABULARY = (
    "harbor quay vessel cargo tide channel berth crane pilot dredger ledger tonnage basin breakwater "
    "authority terminal container freight lock gate pier jetty mooring anchor buoy beacon lighthouse "
    "survey depth draught hull keel ballast manifest customs warehouse shed rail road truck barge tug "
    "schedule forecast revenue expense budget audit board committee report review plan project works "
    "engineer inspector captain clerk surveyor harbourmaster agent broker insurer owner operator "
    "north south east west inner outer upper lower new old main second third winter summer autumn"
).split()


class _Text:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def sentence(self, n: int | None = None) -> str:
        words = self.rng.choices(VOCABULARY, k=n or self.rng.randint(8, 18))
        return " ".join(words).capitalize() + "."

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(2, 4)))

    def table(self, rows: int, cols: int) -> list[list[str]]:
        header = [w.capitalize() for w in self.rng.sample(VOCABULARY, cols)]
        body = [
            [self.rng.choice(VOCABULARY)] + [str(self.rng.randint(1, 9999)) for _ in range(cols - 1)]
            for _ in range(rows)
        ]
        return [header, *body]


def _flat(table: list[list[str]]) -> str:
    return "\n".join(" ".join(row) for row in table)


# -- DOCX ---------------------------------------------------------------------------------------------

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _docx(path: Path, t: _Text) -> Truth:
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    parts: list[str] = []
    header_text = f"Annual report of the {t.rng.choice(VOCABULARY)} authority"
    document.sections[0].header.paragraphs[0].text = header_text
    parts.append(header_text)
    title = t.sentence(5)
    document.add_heading(title, 1)
    parts.append(title)
    tables = []
    for i in range(3):
        body = t.paragraph()
        paragraph = document.add_paragraph(body)
        parts.append(body)
        if i == 1:  # a floating text box anchored in this paragraph: DrawingML with its VML fallback
            box = t.sentence()
            paragraph._p.append(parse_xml(_TEXT_BOX.format(text=box)))
            parts.append(box)
        if i == 2:
            table = t.table(4, 3)
            grid = document.add_table(rows=len(table), cols=3)
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    grid.cell(r, c).text = value
            tables.append(table)
            parts.append(_flat(table))
    note = t.sentence()
    parts.append(note)
    document.save(path)
    _add_footnote(path, note)
    return Truth(text="\n".join(parts), tables=tables)


_TEXT_BOX = (
    f'<w:r xmlns:w="{_W}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:v="urn:schemas-microsoft-com:vml">'
    '<mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData>'
    "<wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent></wps:txbx>"
    "</wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
    "<mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p>"
    "</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
)


def _insert_before(files: dict[str, bytes], name: str, closing: str, addition: str) -> None:
    """Put `addition` before every `closing` tag of the part `name` (one per part here)."""
    files[name] = files[name].decode().replace(closing, addition + closing).encode()


def _add_footnote(path: Path, text: str) -> None:
    """python-docx writes no footnotes: add word/footnotes.xml, its relationship and content type,
    and a reference in the last body paragraph."""
    with zipfile.ZipFile(path) as z:
        files = {name: z.read(name) for name in z.namelist()}
    files["word/footnotes.xml"] = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="{_W}">'
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
        f'<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p></w:footnote>'
        "</w:footnotes>"
    ).encode()
    _insert_before(
        files,
        "word/_rels/document.xml.rels",
        "</Relationships>",
        '<Relationship Id="rIdFn1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        'footnotes" Target="footnotes.xml"/>',
    )
    _insert_before(
        files,
        "[Content_Types].xml",
        "</Types>",
        '<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'wordprocessingml.footnotes+xml"/>',
    )
    body = files["word/document.xml"].decode()
    cut = body.rindex("</w:p>")
    files["word/document.xml"] = (body[:cut] + '<w:r><w:footnoteReference w:id="1"/></w:r>' + body[cut:]).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)


# -- HTML ---------------------------------------------------------------------------------------------


def _html(path: Path, t: _Text) -> Truth:
    parts: list[str] = []
    out = ["<html><head><title>x</title><style>p{}</style></head><body>"]
    title = t.sentence(5)
    out.append(f"<h1>{title}</h1>")
    parts.append(title)
    loose = t.sentence()
    out.append(f"<div class='lead'>{loose}</div>")
    parts.append(loose)
    for _ in range(2):
        p = t.paragraph()
        out.append(f"<p>{p}</p>")
        parts.append(p)
    span = t.sentence()
    out.append(f"<div><span>{span}</span><p>{(p := t.paragraph())}</p></div>")
    parts += [span, p]
    # a table with a header spanning two columns and a cell spanning two rows
    a, b, c, d = (w.capitalize() for w in t.rng.sample(VOCABULARY, 4))
    r = [t.rng.choice(VOCABULARY) for _ in range(3)]
    n = [str(t.rng.randint(1, 999)) for _ in range(6)]
    out.append(
        f"<table><tr><th>{a}</th><th colspan='2'>{b}</th></tr>"
        f"<tr><td rowspan='2'>{r[0]}</td><td>{n[0]}</td><td>{n[1]}</td></tr>"
        f"<tr><td>{n[2]}</td><td>{n[3]}</td></tr>"
        f"<tr><td>{r[1]}</td><td>{n[4]}</td><td>{n[5]}</td></tr></table>"
    )
    table = [[a, b, b], [r[0], n[0], n[1]], [r[0], n[2], n[3]], [r[1], n[4], n[5]]]
    parts.append(f"{a} {b} {r[0]} {n[0]} {n[1]} {n[2]} {n[3]} {r[1]} {n[4]} {n[5]}")
    inner = t.sentence(4)
    out.append(
        f"<table><tr><th>{c}</th><th>{d}</th></tr><tr><td>{r[2]}</td>"
        f"<td><table><tr><td>{inner}</td></tr></table></td></tr></table>"
    )
    parts.append(f"{c} {d} {r[2]} {inner}")
    tail = t.sentence()
    out.append(f"{tail}</body></html>")
    parts.append(tail)
    path.write_text("\n".join(out), "utf-8")
    return Truth(text="\n".join(parts), tables=[table])


# -- PPTX ---------------------------------------------------------------------------------------------


def _pptx(path: Path, t: _Text) -> Truth:
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    parts: list[str] = []
    tables = []
    for number in range(3):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1 if number < 2 else 5])
        title = t.sentence(4)
        slide.shapes.title.text = title
        parts.append(title)
        if number < 2:
            frame = slide.placeholders[1].text_frame
            bullets = [t.sentence() for _ in range(3)]
            frame.text = bullets[0]
            for bullet in bullets[1:]:
                frame.add_paragraph().text = bullet
            parts += bullets
            box = slide.shapes.add_textbox(Inches(1), Inches(6.5), Inches(6), Inches(0.5))
            box.text_frame.text = (caption := t.sentence())
            parts.append(caption)
        else:
            table = t.table(3, 3)
            shape = slide.shapes.add_table(4, 3, Inches(0.5), Inches(1.5), Inches(8), Inches(2))
            for r, row in enumerate(table):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
            tables.append(table)
            parts.append(_flat(table))
            group = slide.shapes.add_group_shape()
            grouped = group.shapes.add_textbox(Inches(1), Inches(5), Inches(6), Inches(0.5))
            grouped.text_frame.text = (g := t.sentence())
            parts.append(g)
        notes = t.sentence()
        slide.notes_slide.notes_text_frame.text = notes
        parts.append(notes)
    parts += [_chart_slide(presentation, t) for _ in range(2)]
    presentation.save(path)
    _as_3d_bar_chart(path, "ppt/charts/chart2.xml")
    return Truth(text="\n".join(parts), tables=tables)


def _chart_slide(presentation, t: _Text) -> str:
    """A slide with a titled column chart of two series over three categories; returns its true text."""
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = (title := t.sentence(3))
    data = CategoryChartData()
    data.categories = categories = [w.capitalize() for w in t.rng.sample(VOCABULARY, 3)]
    series = {w: [t.rng.randint(10, 999) for _ in categories] for w in t.rng.sample(VOCABULARY, 2)}
    for name, values in series.items():
        data.add_series(name, values)
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(7), Inches(4), data)
    chart.chart.has_title = True
    chart.chart.chart_title.text_frame.text = (caption := t.sentence(4))
    numbers = " ".join(" ".join(map(str, values)) for values in series.values())
    return f"{title}\n{caption}\n{' '.join(categories)} {' '.join(series)} {numbers}"


def _as_3d_bar_chart(path: Path, part: str) -> None:
    """Make one chart a 3-D bar chart (PowerPoint's bar3DChart), as a real deck may hold."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            target.writestr(info, data.replace(b"c:barChart>", b"c:bar3DChart>") if info.filename == part else data)


# -- XLSX, CSV ----------------------------------------------------------------------------------------


def _xlsx(path: Path, t: _Text) -> Truth:
    import openpyxl

    workbook = openpyxl.Workbook()
    parts: list[str] = []
    tables = []
    for i in range(2):
        sheet = workbook.active if i == 0 else workbook.create_sheet()
        sheet.title = t.rng.choice(VOCABULARY).capitalize() + str(i)
        table = t.table(12, 4)
        for row in table:
            sheet.append([int(v) if v.isdigit() else v for v in row])
        day = dt.date(2024, 1 + i, 15)
        sheet.append(["date", day, "", ""])
        table.append(["date", day.isoformat()])
        parts.append(sheet.title)
        parts.append(_flat(table))
        tables.append(table)
    workbook.save(path)
    return Truth(text="\n".join(parts), tables=tables)


def _csv(path: Path, t: _Text) -> Truth:
    table = t.table(30, 4)
    for row in table[1::5]:
        row[0] = f"{row[0]}; {t.rng.choice(VOCABULARY)}"  # a field holding the delimiter, quoted
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter=";").writerows(table)
    return Truth(text=_flat(table), tables=[table])


def _tsv(path: Path, t: _Text) -> Truth:
    table = t.table(20, 3)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter="\t").writerows(table)
    return Truth(text=_flat(table), tables=[table])


# -- ODT ----------------------------------------------------------------------------------------------


def _odt(path: Path, t: _Text) -> Truth:
    from odf import draw, table, text
    from odf.opendocument import OpenDocumentText

    document = OpenDocumentText()
    parts: list[str] = []
    title = t.sentence(5)
    document.text.addElement(text.H(outlinelevel=1, text=title))
    parts.append(title)
    for i in range(3):
        body = t.paragraph()
        p = text.P(text=body)
        parts.append(body)
        if i == 0:
            note_text = t.sentence()
            note = text.Note(noteclass="footnote", id="ftn1")
            note.addElement(text.NoteCitation(text="1"))
            nb = text.NoteBody()
            nb.addElement(text.P(text=note_text))
            note.addElement(nb)
            p.addElement(note)
            parts.append(note_text)
        if i == 1:
            frame_text = t.sentence()
            frame = draw.Frame(width="5cm", height="2cm", anchortype="paragraph")
            box = draw.TextBox()
            box.addElement(text.P(text=frame_text))
            frame.addElement(box)
            p.addElement(frame)
            parts.append(frame_text)
        document.text.addElement(p)
    items = [t.sentence() for _ in range(3)]
    lst = text.List()
    for item in items:
        li = text.ListItem()
        li.addElement(text.P(text=item))
        lst.addElement(li)
    document.text.addElement(lst)
    parts += items
    rows = t.table(5, 3)
    grid = table.Table(name="T1")
    grid.addElement(table.TableColumn(numbercolumnsrepeated=3))
    for row in rows:
        tr = table.TableRow()
        for value in row:
            tc = table.TableCell()
            tc.addElement(text.P(text=value))
            tr.addElement(tc)
        grid.addElement(tr)
    document.text.addElement(grid)
    parts.append(_flat(rows))
    document.save(str(path))
    return Truth(text="\n".join(parts), tables=[rows])


# -- EPUB, Markdown -----------------------------------------------------------------------------------


def _epub(path: Path, t: _Text) -> Truth:
    parts: list[str] = []
    chapters = []
    for _ in range(2):
        title = t.sentence(4)
        body = [t.paragraph() for _ in range(3)]
        parts += [title, *body]
        chapters.append(
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title>'
            f"</head><body><h1>{title}</h1>" + "".join(f"<p>{p}</p>" for p in body) + "</body></html>"
        )
    manifest = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(2))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(2))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        z.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Book</dc:title></metadata>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>",
        )
        for i, chapter in enumerate(chapters):
            z.writestr(f"OEBPS/c{i}.xhtml", chapter)
    return Truth(text="\n".join(parts))


def _md(path: Path, t: _Text) -> Truth:
    parts: list[str] = []
    out: list[str] = []
    title = t.sentence(4)
    out += ['<div align="center">', '  <img src="logo.png" alt="logo" width="120">', "</div>", "", f"# {title}", ""]
    parts.append(title)
    out.append("<!-- a comment a reader never sees: lorem ipsum dolor -->")
    for _ in range(2):
        p = t.paragraph()
        out += [p, ""]
        parts.append(p)
    line = t.sentence()
    out += [f"<p align='left'><b>{line}</b><br/></p>", ""]
    parts.append(line)
    table = t.table(4, 3)
    out.append("| " + " | ".join(table[0]) + " |")
    out.append("|---|---|---|")
    out += ["| " + " | ".join(row) + " |" for row in table[1:]]
    out.append("")
    parts.append(_flat(table))
    path.write_text("\n".join(out), "utf-8")
    return Truth(text="\n".join(parts), tables=[table])


GENERATORS: dict[str, tuple[str, Callable[[Path, _Text], Truth]]] = {
    "docx": (".docx", _docx),
    "html": (".html", _html),
    "pptx": (".pptx", _pptx),
    "xlsx": (".xlsx", _xlsx),
    "csv": (".csv", _csv),
    "tsv": (".tsv", _tsv),
    "odt": (".odt", _odt),
    "epub": (".epub", _epub),
    "md": (".md", _md),
}


def build_corpus(folder: Path, per_type: int = 3, types: list[str] | None = None) -> list[tuple[Path, str, Truth]]:
    """Write `per_type` files of each type under `folder`; return (path, type, truth) for each."""
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for kind, (suffix, generate) in GENERATORS.items():
        if types and kind not in types:
            continue
        for i in range(per_type):
            path = folder / f"{kind}-{i}{suffix}"
            items.append((path, kind, generate(path, _Text(1000 * i + sum(map(ord, kind))))))
    return items
