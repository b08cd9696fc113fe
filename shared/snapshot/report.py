"""Drift reports as yaml, json or a table."""

from __future__ import annotations

from shared import output
from shared.output import Format
from shared.snapshot.diff import DriftReport, document


def drift_text(drift: DriftReport, fmt: Format) -> str:
    if fmt is Format.JSON:
        return output.to_json(document(drift))
    if fmt is Format.YAML:
        return output.to_yaml(document(drift))
    rows = [
        [
            c.kind + (" (ignored)" if c.ignored else ""),
            c.path,
            c.baseline or "",
            c.target or "",
            ",".join(c.nodes or []),
        ]
        for c in drift.changes
    ]
    s = drift.summary
    summary = (
        f"\n{s.total} change(s): {s.added} added, {s.removed} removed, {s.modified} modified"
        f"{f'; {s.ignored} ignored' if s.ignored else ''}\n"
    )
    if not rows:
        return f"No drift between {drift.baseline} and {drift.target}.\n"
    return output.render_table(["change", "path", "baseline", "target", "nodes"], rows) + summary
