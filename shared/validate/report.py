"""Validation results as a table for people and as CTRF JSON for CI (upstream AICR's report format)."""

from __future__ import annotations

import time
from typing import Any

from shared import __version__, output
from shared.validate import checks
from shared.validate.run import Outcome


def ctrf(outcome: Outcome, *, started_ms: int | None = None) -> dict[str, Any]:
    stop = int(time.time() * 1000) if started_ms is None else started_ms + int(outcome.seconds * 1000)
    start = stop - int(outcome.seconds * 1000)
    counts = {
        status: sum(1 for c in outcome.results if c.status == status)
        for status in (checks.PASSED, checks.FAILED, checks.SKIPPED)
    }
    tests = []
    for check in outcome.results:
        entry: dict[str, Any] = {
            "name": f"{check.component}: {check.name}",
            "status": check.status,
            "duration": 0,
            "suite": [check.component],
        }
        if check.message:
            entry["message"] = check.message
        if check.nodes:
            entry["extra"] = {"nodes": list(check.nodes)}
        tests.append(entry)
    return {
        "reportFormat": "CTRF",
        "specVersion": "0.0.1",
        "results": {
            "tool": {"name": "aicr", "version": __version__},
            "summary": {
                "tests": len(outcome.results),
                "passed": counts[checks.PASSED],
                "failed": counts[checks.FAILED],
                "skipped": counts[checks.SKIPPED],
                "pending": 0,
                "other": 0,
                "start": start,
                "stop": stop,
            },
            "tests": tests,
            "extra": {"rounds": outcome.rounds, "timedOut": outcome.timed_out},
        },
    }


def table(outcome: Outcome) -> str:
    rows = [[c.component, c.name, c.status.upper(), c.message] for c in outcome.results]
    failed = len(outcome.failures)
    verdict = "PASSED" if outcome.passed else ("TIMED OUT" if outcome.timed_out else "FAILED")
    summary = (
        f"\n{verdict}: {len(outcome.results) - failed} of {len(outcome.results)} checks passed"
        f"{f', {failed} failed' if failed else ''}\n"
    )
    return output.render_table(["component", "check", "status", "message"], rows) + summary
