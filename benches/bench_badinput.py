"""The bad-input corpus (tests/badinput/cases.py) timed: every case once, as the corpus test runs it.

Each case is the real program in a fresh child process (start-up included), refusing its input:
wall time from the spawn to the child's exit, its CPU time (user + system, which a busy machine
does not inflate) and its own peak memory (``ru_maxrss`` from ``os.wait4``). The issue's bound is
under 2 s and 300 MB per case; the tables list the totals, the slowest cases, and the 50 MB file
and the alias bomb per program. The test suite asserts the memory and never the time.
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from pathlib import Path

from tests.badinput import cases, runner

NAME = "badinput"
SLOWEST = 8
NAMED = 5
BOUND_SECONDS = 2.0
BOUND_BYTES = 300 * 1024 * 1024


def _named(ids: list[str]) -> str:
    """The first few ids, so a busy machine's long list does not swamp the page."""
    if not ids:
        return ""
    shown = ", ".join(f"`{i}`" for i in ids[:NAMED])
    return f": {shown}" + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def _row(case: cases.Case, outcome: runner.Outcome) -> str:
    return f"| `{case.id}` | {outcome.seconds:.2f} | {outcome.cpu_seconds:.2f} | {outcome.max_rss_bytes / 2**20:.0f} |"


def run() -> str:
    corpus = cases.corpus()
    measured: list[tuple[cases.Case, runner.Outcome]] = []
    with tempfile.TemporaryDirectory(prefix="bench-badinput-") as root:
        kit = runner.Kit(Path(root))
        for case in corpus:
            measured.append((case, runner.run(kit, runner.make(kit, kit.root, case), case)))
    total = sum(o.seconds for _, o in measured)
    cpu = sum(o.cpu_seconds for _, o in measured)
    wrong = [c.id for c, o in measured if o.code != c.exit]
    slow = [c.id for c, o in measured if o.seconds >= BOUND_SECONDS]
    costly = [c.id for c, o in measured if o.cpu_seconds >= BOUND_SECONDS or o.max_rss_bytes >= BOUND_BYTES]
    lines = [
        f"{len(corpus)} cases: {total:.0f} s of child wall time (mean {total / len(corpus):.2f} s), "
        f"{cpu:.0f} s of child CPU time (mean {cpu / len(corpus):.2f} s); "
        f"{len(costly)} over 2 s of CPU or 300 MB{_named(costly)}; "
        f"{len(slow)} over 2 s of wall time{_named(slow)}; "
        f"{len(wrong)} with another exit status than the corpus expects{_named(wrong)}. "
        f"Load average when it ended: {os.getloadavg()[0]:.1f}.",
        "",
        "| program | cases | median s | slowest s | slowest CPU s | peak MB |",
        "|---|---|---|---|---|---|",
    ]
    by_program: dict[str, list[runner.Outcome]] = defaultdict(list)
    for case, outcome in measured:
        by_program[case.program].append(outcome)
    for program, outcomes in sorted(by_program.items()):
        times = sorted(o.seconds for o in outcomes)
        peak = max(o.max_rss_bytes for o in outcomes) / 2**20
        most = max(o.cpu_seconds for o in outcomes)
        median = times[len(times) // 2]
        lines.append(f"| `{program}` | {len(outcomes)} | {median:.2f} | {times[-1]:.2f} | {most:.2f} | {peak:.0f} |")
    lines += ["", "| the 50 MB file and the alias bomb | s | CPU s | peak MB |", "|---|---|---|---|"]
    lines += [_row(case, outcome) for case, outcome in measured if case.category in ("size-50MB", "alias-bomb")]
    lines += ["", "| slowest cases | s | CPU s | peak MB |", "|---|---|---|---|"]
    lines += [_row(case, outcome) for case, outcome in sorted(measured, key=lambda m: -m[1].seconds)[:SLOWEST]]
    return "\n".join(lines)
