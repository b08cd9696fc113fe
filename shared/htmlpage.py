"""Self-contained HTML reports: one file that opens anywhere, with no network at view time.

People compare bandwidth across racks and follow an isolation trail faster in a picture than in a
table, but a report is also mailed, attached to tickets and opened years later: so plotly.js is
inlined (no CDN), the styles are inline, and the numbers the charts draw are embedded once as a JSON
block (``<script type="application/json" id="report-data">``) that a script or a person can read
back, equal to the command's ``-o json``. The only module that imports plotly; the reports build
their figures as plain plotly figure dictionaries, validated here by plotly's own figure model, so a
misspelt attribute fails when the report is written, not as a blank chart in someone's browser.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PALETTE = (
    "#76b900",  # NVIDIA green first
    "#1f77b4",
    "#ff7f0e",
    "#9467bd",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
    "#7f7f7f",
    "#2ca02c",
    "#aec7e8",
    "#ffbb78",
)
"""Qualitative colours, one per rack or group; red is kept for thresholds and failures."""
PASS_COLOUR, FAIL_COLOUR, PENDING_COLOUR = "#2e7d32", "#c62828", "#9e9e9e"

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1200px;
color:#1d1d1d;padding:0 16px}
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.25em;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin-top:20px}
.subtitle{color:#555;margin-top:0}
.verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#2e7d32}.fail{background:#c62828}.other{background:#616161}
table{border-collapse:collapse;margin:8px 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}
.chart{width:100%;height:420px}
.trail{display:flex;flex-wrap:wrap;gap:6px;margin:4px 0 12px}
.group{border-radius:4px;padding:3px 8px;font-size:.85em;color:#fff}
.group.passed{background:#2e7d32}.group.failed{background:#c62828}.group.pending{background:#9e9e9e}
.note{color:#555;font-size:.9em}
"""


@dataclass(frozen=True)
class Chart:
    """One plotly figure: ``{"data": [traces], "layout": {...}}``."""

    figure: dict[str, Any]
    height: int = 420


@dataclass(frozen=True)
class Section:
    """A heading, HTML built with :func:`table`/:func:`paragraph`/:func:`chips`, then its charts."""

    title: str
    body: str = ""
    charts: Sequence[Chart] = field(default_factory=tuple)
    level: int = 2


def escape(text: object) -> str:
    return html.escape(str(text), quote=True)


def paragraph(text: str, *, note: bool = False) -> str:
    return f'<p class="note">{escape(text)}</p>' if note else f"<p>{escape(text)}</p>"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def chips(items: Iterable[tuple[str, str, str]]) -> str:
    """A row of coloured boxes: (label, state ``passed|failed|pending``, tooltip)."""
    boxes = "".join(
        f'<span class="group {escape(state)}" title="{escape(tip)}">{escape(label)}</span>'
        for label, state, tip in items
    )
    return f'<div class="trail">{boxes}</div>'


def verdict_badge(text: str, *, passed: bool | None) -> str:
    kind = "pass" if passed else ("fail" if passed is False else "other")
    return f'<span class="verdict {kind}">{escape(text)}</span>'


def _json_block(data: Any) -> str:
    # "</" would end the script element early; "<\/" is the same string to a JSON reader.
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/json" id="report-data">{text}</script>'


def _figure_json(chart: Chart) -> str:
    import plotly.graph_objects as go
    import plotly.io as pio

    figure = go.Figure(chart.figure)  # refuses unknown attributes: a bug here, not a blank chart later
    figure.update_layout(height=chart.height, margin={"l": 60, "r": 20, "t": 50, "b": 60}, template="plotly_white")
    text: str = pio.to_json(figure, validate=False)
    return text.replace("</", "<\\/")


def render(title: str, *, subtitle: str, badge: str, sections: Sequence[Section], data: Any) -> str:
    """The whole page: title, verdict badge, sections with charts, and the JSON block of numbers."""
    from plotly.offline import get_plotlyjs

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style>",
        f"<script>{get_plotlyjs()}</script>",
        "</head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="subtitle">{escape(subtitle)}</p>',
        f"<p>{badge}</p>",
    ]
    scripts: list[str] = []
    number = 0
    for section in sections:
        level = min(max(section.level, 2), 4)
        parts.append(f"<h{level}>{escape(section.title)}</h{level}>")
        parts.append(section.body)
        for chart in section.charts:
            number += 1
            div = f"chart-{number}"
            parts.append(f'<div id="{div}" class="chart" style="height:{chart.height}px"></div>')
            scripts.append(
                f'(function(){{var f={_figure_json(chart)};Plotly.newPlot("{div}",f.data,f.layout,'
                "{responsive:true,displaylogo:false});})();"
            )
    parts.append(_json_block(data))
    parts.append("<script>" + "\n".join(scripts) + "</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def embedded_data(page: str) -> Any:
    """The JSON block of a page written by :func:`render` (for tests and scripts reading reports)."""
    start_tag = '<script type="application/json" id="report-data">'
    start = page.index(start_tag) + len(start_tag)
    end = page.index("</script>", start)
    return json.loads(page[start:end])
