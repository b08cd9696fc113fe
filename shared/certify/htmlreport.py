"""``certification report --html``: the run as pictures people read faster than tables.

Bus bandwidth per node against the threshold, grouped by rack (a slow rack or NIC stands out at a
glance); bus bandwidth over message size per group on a log axis (where a curve bends says latency or
link); DCGM verdicts per node and GPU as a grid; the isolation trail as rounds of groups coloured by
verdict; training step time and TFLOP/s over steps. The numbers are exactly ``report -o json``'s,
embedded once in the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from shared import htmlpage as page
from shared.certify import models, report

_BOUND = re.compile(r"^\s*value\s*(>=|>|<=|<)\s*([0-9]+(?:\.[0-9]+)?)\s*$")
BANDWIDTH = "busBandwidthGBps"


def bound(expression: str) -> float | None:
    """The number a simple threshold compares with (``value >= 300`` → 300); None for anything else."""
    match = _BOUND.match(expression)
    return float(match[2]) if match else None


def _groups(cs: models.CategoryStatus) -> list[models.GroupRun]:
    return [g for r in cs.rounds for g in r.groups]


def node_values(cs: models.CategoryStatus, key: str) -> dict[str, float]:
    """Each node's figure: from the smallest group that measured it (the isolation's own test of it
    when there was one), the later round on a tie."""
    best: dict[str, tuple[int, int, float]] = {}
    for order, group in enumerate(_groups(cs)):
        if key not in group.measurements:
            continue
        for node in group.nodes:
            rank = (len(group.nodes), -order)
            if node not in best or rank < best[node][:2]:
                best[node] = (*rank, group.measurements[key])
    return {node: value for node, (_, _, value) in sorted(best.items())}


def _state(group: models.GroupRun) -> str:
    return "passed" if group.passed else ("failed" if group.passed is False else "pending")


def _bandwidth_by_node(cs: models.CategoryStatus, racks: Mapping[str, str], threshold: float | None) -> page.Chart:
    values = node_values(cs, BANDWIDTH)
    by_rack: dict[str, list[str]] = {}
    for node in values:
        by_rack.setdefault(racks.get(node, "unknown"), []).append(node)
    traces = []
    for i, (rack, members) in enumerate(sorted(by_rack.items())):
        traces.append(
            {
                "type": "bar",
                "name": rack,
                "x": members,
                "y": [values[n] for n in members],
                "marker": {"color": page.PALETTE[i % len(page.PALETTE)]},
                "hovertemplate": "%{x}<br>%{y:.1f} GB/s<extra>" + rack + "</extra>",
            }
        )
    missing = [n for n in cs.nodes if n not in values]
    if missing:  # a node whose every run crashed measured nothing: shown, not left out of the chart
        reasons = {f.name: f.message for f in cs.failedNodes}
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "no measurement",
                "x": missing,
                "y": [0] * len(missing),
                "text": [reasons.get(n, "no group of this node printed a result") for n in missing],
                "marker": {"color": page.FAIL_COLOUR, "symbol": "x", "size": 12},
                "hovertemplate": "%{x}: no measurement<br>%{text}<extra></extra>",
            }
        )
    layout: dict[str, Any] = {
        "title": {"text": f"{cs.domain}/{cs.variant}: bus bandwidth per node, by rack"},
        "xaxis": {
            "title": {"text": "node"},
            "type": "category",
            "categoryorder": "array",  # rack by rack, a node that measured nothing in its rack's place
            "categoryarray": sorted([*values, *missing], key=lambda n: (racks.get(n, "unknown"), n)),
        },
        "yaxis": {"title": {"text": "bus bandwidth (GB/s)"}, "rangemode": "tozero"},
        "legend": {"title": {"text": "rack"}},
        "bargap": 0.15,
    }
    if threshold is not None:
        layout["shapes"] = [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": threshold,
                "y1": threshold,
                "line": {"color": page.FAIL_COLOUR, "width": 2, "dash": "dash"},
            }
        ]
        layout["annotations"] = [
            {
                "xref": "paper",
                "x": 1,
                "y": threshold,
                "xanchor": "right",
                "yanchor": "bottom",
                "text": f"threshold {threshold:g} GB/s",
                "showarrow": False,
                "font": {"color": page.FAIL_COLOUR},
            }
        ]
    return page.Chart({"data": traces, "layout": layout})


def _label(group: models.GroupRun) -> str:
    nodes = group.nodes
    return ",".join(nodes) if len(nodes) <= 3 else f"{nodes[0]} +{len(nodes) - 1}"


def _curves(cs: models.CategoryStatus) -> page.Chart | None:
    drawn = [g for g in _groups(cs) if g.detail and g.detail.curve]
    if not drawn:
        return None
    traces = []
    for i, group in enumerate(drawn):
        assert group.detail is not None
        failed = group.passed is False
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _label(group) + (" (failed)" if failed else ""),
                "x": [p.bytes for p in group.detail.curve],
                "y": [p.busBandwidthGBps for p in group.detail.curve],
                "line": {"color": page.FAIL_COLOUR if failed else page.PALETTE[i % len(page.PALETTE)]},
                "hovertemplate": "%{x:.3s}B<br>%{y:.1f} GB/s",
            }
        )
    layout = {
        "title": {"text": f"{cs.domain}/{cs.variant}: bus bandwidth over message size, per group"},
        "xaxis": {"title": {"text": "message size (bytes)"}, "type": "log"},
        "yaxis": {"title": {"text": "bus bandwidth (GB/s)"}, "rangemode": "tozero"},
    }
    return page.Chart({"data": traces, "layout": layout})


def _gpu_grid(cs: models.CategoryStatus) -> page.Chart | None:
    rows = [(g.nodes[0], g.detail) for g in _groups(cs) if g.detail and g.detail.gpuCount and len(g.nodes) == 1]
    if not rows:
        return None
    latest = dict(rows)  # a node tested again (a repeated round) shows its last verdict
    gpus = max(d.gpuCount or 0 for d in latest.values())
    nodes = sorted(latest)
    z, text = [], []
    for node in nodes:
        detail = latest[node]
        row, tips = [], []
        for gpu in range(gpus):
            failed = detail.failedGpus.get(str(gpu))
            present = gpu < (detail.gpuCount or 0)
            row.append(None if not present else (1 if failed else 0))
            tips.append(f"{node} GPU {gpu}: " + ("failed " + ", ".join(failed) if failed else "passed"))
        z.append(row)
        text.append(tips)
    figure = {
        "data": [
            {
                "type": "heatmap",
                "z": z,
                "x": [f"GPU {i}" for i in range(gpus)],
                "y": nodes,
                "text": text,
                "hoverinfo": "text",
                "zmin": 0,
                "zmax": 1,
                "colorscale": [
                    [0, page.PASS_COLOUR],
                    [0.5, page.PASS_COLOUR],
                    [0.5, page.FAIL_COLOUR],
                    [1, page.FAIL_COLOUR],
                ],
                "showscale": False,
                "xgap": 2,
                "ygap": 2,
            }
        ],
        "layout": {
            "title": {"text": f"{cs.domain}/{cs.variant}: dcgmi diag per node and GPU (red: failed)"},
            "yaxis": {"autorange": "reversed", "type": "category"},
        },
    }
    return page.Chart(figure, height=max(300, 60 + 22 * len(nodes)))


def _training(cs: models.CategoryStatus) -> page.Chart | None:
    drawn = [g for g in _groups(cs) if g.detail and g.detail.steps]
    if not drawn:
        return None
    traces: list[dict[str, Any]] = []
    for i, group in enumerate(drawn):
        assert group.detail is not None
        colour = page.FAIL_COLOUR if group.passed is False else page.PALETTE[i % len(page.PALETTE)]
        steps = group.detail.steps
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{_label(group)} step time",
                "x": [s.step for s in steps],
                "y": [s.stepTimeSec for s in steps],
                "line": {"color": colour},
            }
        )
        if any(s.tflopsPerGPU is not None for s in steps):
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"{_label(group)} TFLOP/s per GPU",
                    "x": [s.step for s in steps],
                    "y": [s.tflopsPerGPU for s in steps],
                    "yaxis": "y2",
                    "line": {"color": colour, "dash": "dot"},
                }
            )
    layout = {
        "title": {"text": f"{cs.domain}/{cs.variant}: step time and TFLOP/s per GPU over steps"},
        "xaxis": {"title": {"text": "step"}},
        "yaxis": {"title": {"text": "step time (s)"}, "rangemode": "tozero"},
        "yaxis2": {"title": {"text": "TFLOP/s per GPU"}, "overlaying": "y", "side": "right", "rangemode": "tozero"},
    }
    return page.Chart({"data": traces, "layout": layout})


def _trail(cs: models.CategoryStatus) -> str:
    if not cs.rounds:
        return page.paragraph("not started", note=True)
    parts = []
    for r in cs.rounds:
        passed = sum(1 for g in r.groups if g.passed)
        failed = sum(1 for g in r.groups if g.passed is False)
        parts.append(
            f"<h4>round {r.round} ({page.escape(r.stage)}): {len(r.groups)} group(s), "
            f"{passed} passed, {failed} failed</h4>"
        )
        parts.append(
            page.chips(
                (
                    _label(g),
                    _state(g),
                    f"{','.join(g.nodes)}: {g.phase.value}" + (f" — {g.message}" if g.message else ""),
                )
                for g in r.groups
            )
        )
    return "".join(parts)


def _thresholds(cert: models.Certification) -> list[tuple[str, str, str, str]]:
    rows = []
    by_name = {(c.domain, c.variant): c for c in cert.spec.categories}
    for cs in cert.status.categoryStatuses:
        category = by_name.get((cs.domain, cs.variant))
        limits = (cert.spec.options_for(category).thresholds or {}) if category else {}
        for key, expression in sorted(limits.items()):
            measured = cs.measurements.get(key)
            rows.append((f"{cs.domain}/{cs.variant}", key, expression, "-" if measured is None else f"{measured:.2f}"))
    return rows


def render(cert: models.Certification, racks: Mapping[str, str]) -> str:
    """The page; ``racks`` maps node names to their rack (nodes missing from it are 'unknown')."""
    status = cert.status
    phase = status.phase.value if status.phase else "Pending"
    summary = [
        [
            f"{c.domain}/{c.variant}",
            c.status.value,
            len(c.nodes),
            len(c.rounds),
            ", ".join(f.name for f in c.failedNodes) or "-",
            c.message or "",
        ]
        for c in status.categoryStatuses
    ]
    overview = page.table(["category", "status", "nodes", "rounds", "failed nodes", "message"], summary)
    if status.leftOut:
        overview += page.paragraph(f"Left out (cordoned): {', '.join(status.leftOut)}", note=True)
    limits = _thresholds(cert)
    sections = [
        page.Section("Verdict", overview),
        page.Section(
            "Thresholds",
            page.table(["category", "metric", "threshold", "measured (min of round 1)"], limits)
            if limits
            else page.paragraph("no thresholds set", note=True),
        ),
    ]
    spec_limits = {(r[0], r[1]): r[2] for r in limits}
    for cs in status.categoryStatuses:
        name = f"{cs.domain}/{cs.variant}"
        charts: list[page.Chart] = []
        if node_values(cs, BANDWIDTH):
            expression = spec_limits.get((name, BANDWIDTH))
            charts.append(_bandwidth_by_node(cs, racks, bound(expression) if expression else None))
        charts.extend(c for c in (_curves(cs), _gpu_grid(cs), _training(cs)) if c is not None)
        failures = page.table(
            ["node", "reason", "value", "message"],
            [[f.name, f.reason.value, "-" if f.value is None else f"{f.value:.2f}", f.message] for f in cs.failedNodes],
        )
        body = page.paragraph(f"{cs.status.value}: {cs.message or ''}") + (failures if cs.failedNodes else "")
        body += "".join(
            page.paragraph(f"infrastructure fault between {','.join(f.sideA)} and {','.join(f.sideB)}: {f.message}")
            for f in cs.infrastructureFaults
        )
        sections.append(page.Section(name, body, charts))
        sections.append(page.Section(f"{name}: isolation trail ({cs.strategy or 'none'})", _trail(cs), level=3))
    subtitle = " · ".join(
        part
        for part in (
            f"{cert.namespace}/{cert.name}",
            f"platform {status.platform}" if status.platform else "",
            f"GPU {status.gpu}" if status.gpu else "",
            f"started {status.startTime}" if status.startTime else "",
            f"completed {status.completionTime}" if status.completionTime else "",
        )
        if part
    )
    badge = page.verdict_badge(phase + (f": {status.message}" if status.message else ""), passed=_passed(status))
    return page.render(
        f"Certification {cert.name}", subtitle=subtitle, badge=badge, sections=sections, data=report.data(cert)
    )


def _passed(status: models.CertificationStatus) -> bool | None:
    if status.phase is models.Phase.SUCCEEDED:
        return True
    return False if status.phase is models.Phase.FAILED else None


def racks_of(nodes: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Node name → rack, from the labels certification reads its topology from."""
    from shared.certify import render as shapes

    return {n.name: n.rack for n in shapes.describe(list(nodes))}
