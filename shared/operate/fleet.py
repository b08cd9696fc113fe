"""``nvsentinel nodes``: the fleet as quarantine and the validation lifecycle leave it, by rack.

One row per node spans both packages (quarantine's state and causes, the lifecycle's validation
state), which is why it lives in the composition layer; ``--html`` draws the same rows as a page
where a rack with three quarantined nodes or a wave of validations stands out at a glance.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared import htmlpage as page
from shared.health import service as hservice

RACK_LABELS = ("topology.kubernetes.io/rack", "topology.kubernetes.io/zone")
"""Where a node's rack is read from: the rack label, else its zone (clouds label no racks)."""

STATES = ("healthy", "quarantined", "validating", "cordoned", "action required")
"""How the page colours a node, from the most to the least usual; each node has one."""
_COLOURS = {
    "healthy": page.PASS_COLOUR,
    "quarantined": page.FAIL_COLOUR,
    "validating": "#f9a825",
    "cordoned": "#1f77b4",
    "action required": "#6a1b9a",
}


def rows(cluster: hservice.Cluster) -> list[dict[str, Any]]:
    from shared import nodes
    from shared.kube import client
    from shared.lifecycle import sessions

    with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
        items = nodes.list_nodes(lazy())
    found = hservice.node_rows(items)
    for row, node in zip(found, items, strict=True):
        labels = node["metadata"].get("labels") or {}
        row["rack"] = next((labels[k] for k in RACK_LABELS if labels.get(k)), "")
        row["validation"] = labels.get(sessions.STATE_LABEL, "")
    return found


def state(row: dict[str, Any]) -> str:
    """The one word the page colours a node by."""
    if row["action"]:
        return "action required"
    if row["validation"]:
        return "validating"
    if row["quarantined"]:
        return "quarantined"
    return "cordoned" if row["cordoned"] else "healthy"


def render(found: list[dict[str, Any]], *, where: str) -> str:
    """The fleet page: nodes per rack stacked by state, then the nodes that are not healthy."""
    racks = sorted({r["rack"] or "unknown" for r in found})
    counts = Counter((r["rack"] or "unknown", state(r)) for r in found)
    traces = [
        {
            "type": "bar",
            "name": name,
            "x": racks,
            "y": [counts[(rack, name)] for rack in racks],
            "marker": {"color": _COLOURS[name]},
        }
        for name in STATES
        if any(counts[(rack, name)] for rack in racks)
    ]
    chart = page.Chart(
        {
            "data": traces,
            "layout": {
                "title": {"text": "nodes per rack, by state"},
                "barmode": "stack",
                "xaxis": {"title": {"text": "rack"}, "type": "category"},
                "yaxis": {"title": {"text": "nodes"}},
            },
        }
    )
    held = [r for r in found if state(r) != "healthy"]
    table = page.table(
        ["node", "rack", "state", "quarantine", "validation", "causes", "failing conditions", "action"],
        [
            [
                r["node"],
                r["rack"] or "-",
                state(r),
                r["state"] or "-",
                r["validation"] or "-",
                ", ".join(r["causes"]) or "-",
                ", ".join(r["conditions"]) or "-",
                r["action"] or "-",
            ]
            for r in held
        ],
    )
    totals = Counter(state(r) for r in found)
    summary = ", ".join(f"{totals[s]} {s}" for s in STATES if totals[s])
    sections = [
        page.Section("Racks", page.paragraph(summary), [chart]),
        page.Section(
            "Nodes that are not healthy", table if held else page.paragraph("every node is healthy", note=True)
        ),
    ]
    badge = page.verdict_badge(summary or "no nodes", passed=None if not found else not held)
    return page.render("Fleet", subtitle=f"{where} · {len(found)} nodes", badge=badge, sections=sections, data=found)


def html_report(cluster: hservice.Cluster, path: Any, found: list[dict[str, Any]]) -> None:
    from shared import clock, files

    where = f"context {cluster.context}" if cluster.context else "current context"
    files.atomic_write_text(path, render(found, where=f"{where} · {clock.WALL.now():%Y-%m-%d %H:%M:%S} UTC"))
