"""``aicr validate --html``: the gate's verdict as a page, in the style of the other reports.

Checks per component stacked by status (a component with a red bar is where to look first), each
phase's verdict, and every failed check with the nodes it names. The numbers are the CTRF report
``--format json`` prints, embedded once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared import htmlpage as page

_STATUS_COLOURS = {"passed": page.PASS_COLOUR, "failed": page.FAIL_COLOUR, "skipped": page.PENDING_COLOUR}


def _by_component(tests: list[dict[str, Any]]) -> page.Chart:
    components = sorted({t["suite"][1] for t in tests})
    counts = Counter((t["suite"][1], t["status"]) for t in tests)
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "name": status,
            "y": components,
            "x": [counts[(c, status)] for c in components],
            "marker": {"color": colour},
        }
        for status, colour in _STATUS_COLOURS.items()
        if any(counts[(c, status)] for c in components)
    ]
    layout = {
        "title": {"text": "checks per component, by status"},
        "barmode": "stack",
        "yaxis": {"type": "category", "autorange": "reversed"},
        "xaxis": {"title": {"text": "checks"}},
    }
    return page.Chart({"data": traces, "layout": layout}, height=max(320, 80 + 24 * len(components)))


def render(ctrf: dict[str, Any], *, recipe: str) -> str:
    results = ctrf["results"]
    summary, tests = results["summary"], results["tests"]
    phases = results["extra"]["phases"]
    passed = summary["failed"] == 0 and not results["extra"]["timedOut"]
    phase_rows = [
        [name, p["status"], p["passed"], p["failed"], p["skipped"], p.get("note", "")] for name, p in phases.items()
    ]
    failed = [t for t in tests if t["status"] == "failed"]
    failures = page.table(
        ["phase", "check", "message", "nodes"],
        [
            [t["suite"][0], t["name"], t.get("message", ""), ", ".join((t.get("extra") or {}).get("nodes", [])) or "-"]
            for t in failed
        ],
    )
    sections = [
        page.Section("Phases", page.table(["phase", "status", "passed", "failed", "skipped", "note"], phase_rows)),
        page.Section("Checks", "", [_by_component(tests)] if tests else []),
        page.Section("Failed checks", failures if failed else page.paragraph("no check failed", note=True)),
    ]
    verdict = f"{'PASSED' if passed else 'FAILED'}: {summary['passed']} of {summary['tests']} checks passed"
    return page.render(
        "Validation",
        subtitle=f"recipe {recipe} · aicr {results['tool']['version']}",
        badge=page.verdict_badge(verdict, passed=passed),
        sections=sections,
        data=ctrf,
    )
