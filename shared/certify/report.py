"""The report of a Certification: per category the status, runtime, measurements, failing nodes
with reasons, infrastructure faults and the isolation trail — as data (json/yaml) or a table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from shared.certify import models

if TYPE_CHECKING:
    from shared.certify.workloads import plan


def data(cert: models.Certification) -> dict[str, Any]:
    """Plain data for -o json|yaml and --results-file; ``passed`` says how the run ended."""
    status = cert.status
    return {
        "name": cert.name,
        "namespace": cert.namespace,
        "phase": status.phase.value if status.phase else None,
        "passed": status.phase is models.Phase.SUCCEEDED,
        "message": status.message,
        "startTime": status.startTime,
        "completionTime": status.completionTime,
        "leftOut": status.leftOut,
        "platform": status.platform,
        "gpu": status.gpu,
        "categories": [c.model_dump(mode="json", exclude_none=True) for c in status.categoryStatuses],
    }


def _value(values: dict[str, float], key: str) -> str:
    return f"{values[key]:.2f}" if key in values else "-"


def text(cert: models.Certification, *, wide: bool = False) -> str:
    """Human report: a summary table, then per category its failures and isolation trail."""
    from shared import output

    status = cert.status
    lines = [
        f"Certification {cert.namespace}/{cert.name}: {status.phase or 'Pending'}"
        + (f" ({status.message})" if status.message else "")
    ]
    if status.leftOut:
        lines.append(f"Left out (cordoned): {', '.join(status.leftOut)}")
    if status.platform and wide:
        lines.append(f"Platform: {status.platform} ({status.gpu or 'unknown'})")
    rows = [
        [
            f"{c.domain}/{c.variant}",
            c.status.value,
            f"{c.runtimeSeconds:.0f}s" if c.runtimeSeconds else "-",
            len(c.nodes),
            _value(c.measurements, "busBandwidthGBps"),
            _value(c.measurements, "goodputRatio"),
            len(c.rounds),
            len(c.failedNodes) + len(c.infrastructureFaults),
        ]
        + ([c.backend or "-"] if wide else [])
        for c in status.categoryStatuses
    ]
    headers = ["category", "status", "runtime", "nodes", "busbw GB/s", "goodput", "rounds", "faults"]
    lines.append(output.render_table(headers + (["backend"] if wide else []), rows).rstrip())
    for c in status.categoryStatuses:
        if c.failedNodes:
            lines.append(f"\n{c.domain}/{c.variant}: failed nodes")
            lines.append(
                output.render_table(
                    ["node", "reason", "value", "message"],
                    [
                        [f.name, f.reason.value, "-" if f.value is None else f"{f.value:.2f}", f.message]
                        for f in c.failedNodes
                    ],
                ).rstrip()
            )
        for fault in c.infrastructureFaults:
            lines.append(
                f"\n{c.domain}/{c.variant}: infrastructure fault between {','.join(fault.sideA)} "
                f"and {','.join(fault.sideB)}: {fault.message}"
            )
        if c.rounds and (wide or len(c.rounds) > 1):
            lines.append(f"\n{c.domain}/{c.variant}: isolation trail ({c.strategy})")
            trail = []
            for r in c.rounds:
                passed = sum(1 for g in r.groups if g.passed)
                failed = [g for g in r.groups if g.passed is False]
                shown = "; ".join(
                    ",".join(g.nodes) if len(g.nodes) <= 4 else f"{len(g.nodes)} nodes from {g.nodes[0]}"
                    for g in failed[:4]
                )
                trail.append([r.round, r.stage, len(r.groups), passed, len(failed), shown or "-"])
            lines.append(
                output.render_table(["round", "stage", "groups", "passed", "failed", "failed groups"], trail).rstrip()
            )
    return "\n".join(lines) + "\n"


def jobs(plans: Sequence[plan.PlannedCategory]) -> list[dict[str, Any]]:
    """What ``render -o yaml|json`` prints: every category's first-round objects (TrainJobs and their
    runtimes, MPIJobs, Jobs), in order,
    exactly as ``run`` would create them, so the output can be reviewed or applied."""
    return [job for planned in plans for job in planned.jobs]
