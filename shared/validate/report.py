"""Validation results as a table for people and as CTRF JSON for CI (upstream AICR's report format).

One CTRF report holds every phase run, as upstream merges them: each test's ``suite`` is
``[phase, component]``, and ``results.extra.phases`` gives each phase's status and counts (the
per-phase report upstream also stores in a ConfigMap).
"""

from __future__ import annotations

import time
from typing import Any

from shared import __version__, output
from shared.validate import checks
from shared.validate.phases import PhaseResult, Report

_STATUSES = (checks.PASSED, checks.FAILED, checks.SKIPPED)


def _counts(results: list[checks.Check]) -> dict[str, int]:
    return {status: sum(1 for c in results if c.status == status) for status in _STATUSES}


def _phase_summary(phase: PhaseResult) -> dict[str, Any]:
    summary: dict[str, Any] = {"status": phase.status, "tests": len(phase.results), **_counts(phase.results)}
    if phase.note:
        summary["note"] = phase.note
    if phase.timed_out:
        summary["timedOut"] = True
    return summary


def ctrf(report: Report, *, started_ms: int | None = None) -> dict[str, Any]:
    stop = int(time.time() * 1000) if started_ms is None else started_ms + int(report.seconds * 1000)
    start = stop - int(report.seconds * 1000)
    counts = _counts(report.results)
    tests = []
    for phase in report.phases:
        for check in phase.results:
            entry: dict[str, Any] = {
                "name": f"{check.component}: {check.name}",
                "status": check.status,
                "duration": 0,
                "suite": [phase.name, check.component],
            }
            if check.message:
                entry["message"] = check.message
            if check.nodes:
                entry["extra"] = {"nodes": list(check.nodes)}
            tests.append(entry)
    rounds = sum(p.rounds for p in report.phases)
    return {
        "reportFormat": "CTRF",
        "specVersion": "0.0.1",
        "results": {
            "tool": {"name": "aicr", "version": __version__},
            "summary": {
                "tests": len(report.results),
                "passed": counts[checks.PASSED],
                "failed": counts[checks.FAILED],
                "skipped": counts[checks.SKIPPED],
                "pending": 0,
                "other": 0,
                "start": start,
                "stop": stop,
            },
            "tests": tests,
            "extra": {
                "rounds": rounds,
                "timedOut": report.timed_out,
                "phases": {p.name: _phase_summary(p) for p in report.phases},
            },
        },
    }


def table(report: Report) -> str:
    rows = [[c.component, c.name, c.status.upper(), c.message] for c in report.results]
    failed, total = len(report.failures), len(report.results)
    verdict = "PASSED" if report.passed else ("TIMED OUT" if report.timed_out else "FAILED")
    # A deployment check skipped (a component without asserts) has nothing to fail and counts as
    # passed, as it always has; a performance or conformance check skipped was not judged at all.
    unjudged = sum(1 for p in report.phases if p.name != "deployment" for c in p.results if c.status == checks.SKIPPED)
    extra = f", {failed} failed" if failed else ""
    extra += f", {unjudged} skipped" if unjudged else ""
    summary = f"\n{verdict}: {total - failed - unjudged} of {total} checks passed{extra}\n"
    if report.planned:
        summary = f"\nPLAN: {total} checks, none run (--no-cluster)\n"
    if len(report.phases) > 1 or (report.phases and report.phases[0].name != "deployment"):
        summary += "".join(f"  {p.name}: {p.status.upper()} ({_phase_line(p)})\n" for p in report.phases)
    return output.render_table(["component", "check", "status", "message"], rows) + summary


def _phase_line(phase: PhaseResult) -> str:
    c = _counts(phase.results)
    line = f"{c[checks.PASSED]} passed, {c[checks.FAILED]} failed, {c[checks.SKIPPED]} skipped"
    return f"{line}; {phase.note}" if phase.note else line
