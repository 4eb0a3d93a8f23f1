"""A chart's title and data (categories, series, values) as text: through python-pptx where it knows the
plot type, else read from the chart part's XML (a 3-D bar chart's bar3DChart, which python-pptx refuses
with "unsupported plot type"): every DrawingML chart keeps its series' names, categories and values in
the same c:ser elements, so a chart type no library knows still gives its numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..formats import _pipe_table

_C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def line(text: str) -> str:
    """Text on one line, runs of white space as one space."""
    return " ".join(text.split())


def _pptx_chart_blocks(chart) -> Iterator[str]:
    """Through python-pptx's plots: each plot's categories and series."""
    if chart.has_title and chart.chart_title.has_text_frame:
        title = "\n".join(line(p.text) for p in chart.chart_title.text_frame.paragraphs if line(p.text))
        if title:
            yield title
    for plot in chart.plots:
        categories = [line(str(c)) for c in plot.categories]
        series = list(plot.series)
        if not series:
            continue
        header = [""] + [line(s.name or "") for s in series]
        values = [list(s.values) for s in series]
        rows = [header] + [
            [categories[i] if i < len(categories) else ""] + [_number(v[i]) if i < len(v) else "" for v in values]
            for i in range(max(len(v) for v in values))
        ]
        yield _pipe_table(rows)


def chart_blocks(chart) -> Iterator[str]:
    """A chart's title and data through python-pptx, else (a plot type it does not know, such as a
    3-D bar chart's bar3DChart) read from the chart part's XML: every chart type keeps its series'
    names, categories and values in the same c:ser elements."""
    try:
        blocks = list(_pptx_chart_blocks(chart))
    except (ValueError, NotImplementedError, KeyError):  # "unsupported plot type"
        blocks = list(chart_xml_blocks(chart._chartSpace))
    yield from blocks


def chart_xml_blocks(space) -> Iterator[str]:
    """A chart's title and one pipe table per plot (categories down, one column per series), read
    from its chartSpace element (lxml) by the DrawingML chart schema's names."""
    title = space.find(f".//{{{_C}}}chart/{{{_C}}}title")
    if title is not None:
        text = line(" ".join(t.text or "" for t in title.iter(f"{{{_A}}}t")))
        if text:
            yield text
    area = space.find(f".//{{{_C}}}plotArea")
    for plot in [] if area is None else [el for el in area if el.tag.endswith("Chart")]:
        series = plot.findall(f"{{{_C}}}ser")
        if not series:
            continue
        names = [line(" ".join(_points(s.find(f"{{{_C}}}tx")).values())) for s in series]
        values = [_points(_first(s, "val", "yVal")) for s in series]
        categories = _points(_first(series[0], "cat", "xVal"))
        indexes = sorted(set(categories).union(*values))
        rows = [["", *names]] + [[categories.get(i, ""), *(_number(_float(v.get(i))) for v in values)] for i in indexes]
        yield _pipe_table(rows)


def _first(series, *names: str):
    """The series' first child of these names (a scatter chart's x and y values are xVal and yVal)."""
    found = (series.find(f"{{{_C}}}{name}") for name in names)
    return next((el for el in found if el is not None), None)


def _points(element) -> dict[int, str]:
    """idx -> value of a series part's cached points (c:pt/c:v), or its literal text (c:v alone)."""
    if element is None:
        return {}
    points = {int(pt.get("idx", "0")): line(pt.findtext(f"{{{_C}}}v") or "") for pt in element.iter(f"{{{_C}}}pt")}
    if not points and (value := element.findtext(f".//{{{_C}}}v")):
        points[0] = line(value)
    return points


def _float(value: str | None) -> object:
    try:
        return None if value is None else float(value)
    except ValueError:
        return value


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
