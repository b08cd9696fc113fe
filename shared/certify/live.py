"""What ``certification run --wait`` shows while it runs: categories, round, groups, measurements.

A run of a large cluster lasts many minutes and its isolation rounds decide which nodes are
blamed, so the person waiting sees which groups run on which nodes and what they measured so far.
stdout keeps only the result (a script can parse it); the progress goes to stderr: a rich Live
view on a terminal (as ``shared.output`` uses rich only on a terminal), plain lines otherwise —
one line per event, so a CI log reads as a trail.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import TracebackType
from typing import Any, TextIO

from shared.certify import models

SHOWN_NODES = 4
"""Nodes named per group before the rest is counted (a group can span a whole cluster)."""
SHOWN_GROUPS = 12
"""Groups listed for the current round in the live view; the rest are counted."""


def _nodes(nodes: list[str]) -> str:
    shown = ",".join(nodes[:SHOWN_NODES])
    return shown if len(nodes) <= SHOWN_NODES else f"{shown} +{len(nodes) - SHOWN_NODES}"


def _values(values: dict[str, float]) -> str:
    return " ".join(f"{k}={v:g}" for k, v in sorted(values.items()))


def _state(group: models.GroupRun) -> str:
    if group.passed is True:
        return "passed"
    if group.passed is False:
        return f"failed ({group.reason.value})" if group.reason else "failed"
    return group.phase.value.lower()


def so_far(category: models.CategoryStatus) -> dict[str, float]:
    """Measurements over the finished groups of the first round: the lowest per key, as the report."""
    if category.measurements:
        return dict(category.measurements)
    first = category.rounds[0].groups if category.rounds else []
    keys = sorted({k for g in first for k in g.measurements})
    return {k: min(g.measurements[k] for g in first if k in g.measurements) for k in keys}


def _round(category: models.CategoryStatus) -> str:
    if not category.rounds:
        return "-"
    last = category.rounds[-1]
    return f"{last.round} ({last.stage})"


def render(cert: models.Certification, note: str = "") -> Any:
    """The live view of one Certification as a rich renderable (tested through a recording console)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    status = cert.status
    parts: list[Any] = [
        Text(
            f"Certification {cert.namespace}/{cert.name}: {status.phase or 'Pending'}"
            + (f" — {status.message}" if status.message else ""),
            style="bold",
        )
    ]
    table = Table(box=None, header_style="bold", pad_edge=False, highlight=False)
    for header in ("CATEGORY", "STATUS", "ROUND", "GROUPS", "MEASURED SO FAR", "FAULTS"):
        table.add_column(header, overflow="fold")
    for c in status.categoryStatuses:
        groups = c.rounds[-1].groups if c.rounds else []
        counts = (
            f"{sum(1 for g in groups if g.passed is None)} running, "
            f"{sum(1 for g in groups if g.passed)} passed, {sum(1 for g in groups if g.passed is False)} failed"
            if groups
            else "-"
        )
        faults = [f.name for f in c.failedNodes] + [
            f"{','.join(x.sideA[:1])}…↔{','.join(x.sideB[:1])}…" for x in c.infrastructureFaults
        ]
        table.add_row(
            f"{c.domain}/{c.variant}",
            c.status.value,
            _round(c),
            counts,
            _values(so_far(c)) or "-",
            ", ".join(faults) or "-",
        )
    parts.append(table)
    active = next((c for c in status.categoryStatuses if c.status is models.Phase.RUNNING and c.rounds), None)
    if active is not None:
        last = active.rounds[-1]
        parts.append(Text(f"{active.domain}/{active.variant} round {last.round} ({last.stage})", style="bold"))
        detail = Table(box=None, header_style="bold", pad_edge=False, highlight=False)
        for header in ("GROUP", "NODES", "STATE", "MEASURED"):
            detail.add_column(header, overflow="fold")
        for g in last.groups[:SHOWN_GROUPS]:
            detail.add_row(g.name, _nodes(g.nodes), _state(g), _values(g.measurements) or "-")
        if len(last.groups) > SHOWN_GROUPS:
            detail.add_row(f"… {len(last.groups) - SHOWN_GROUPS} more", "", "", "")
        parts.append(detail)
    if note:
        parts.append(Text(note, style="dim"))
    return Group(*parts)


_Seen = dict[tuple[str, str], tuple[models.Phase | None, bool | None]]
_ENDED = (models.Phase.SUCCEEDED, models.Phase.FAILED)


def events(before: models.Certification | None, after: models.Certification) -> list[str]:
    """Plain progress lines for what changed: groups started or finished, categories ended."""
    from shared.certify.isolate.hard import SHARED_CAUSE  # imported already where a run is stepped

    seen: _Seen = {}
    done_before: set[str] = set()
    if before is not None:
        for c in before.status.categoryStatuses:
            key = f"{c.domain}/{c.variant}"
            if c.status in _ENDED:
                done_before.add(key)
            for g in _groups(c.rounds):
                seen[(key, g.name)] = (g.phase, g.passed)
    lines = []
    for c in after.status.categoryStatuses:
        key = f"{c.domain}/{c.variant}"
        for r in c.rounds:
            lines += _round_events(key, r, seen)
        if c.status in _ENDED and key not in done_before:
            blamed = ", ".join(f.name for f in c.failedNodes)
            lines.append(
                f"{key}: {c.status.value.lower()}"
                + (f" ({_values(so_far(c))})" if so_far(c) else "")
                + (f"; failed nodes: {blamed}" if blamed else "")
                + (f"; {len(c.infrastructureFaults)} infrastructure fault(s)" if c.infrastructureFaults else "")
                + (f"; {SHARED_CAUSE}" if SHARED_CAUSE in (c.message or "") else "")
            )
    return lines


def _round_events(key: str, r: models.Round, seen: _Seen) -> list[str]:
    """One round's groups started and finished since ``seen``; a large round counts passes, names failures."""
    started = [
        g
        for g in r.groups
        if g.phase is not models.Phase.PENDING
        and seen.get((key, g.name), (models.Phase.PENDING, None))[0] is models.Phase.PENDING
    ]
    finished = [g for g in r.groups if g.passed is not None and seen.get((key, g.name), (None, None))[1] is None]
    many = len(r.groups) > SHOWN_GROUPS
    lines = []
    if many and started:
        lines.append(
            f"{key}: round {r.round} ({r.stage}): {len(started)} groups started on "
            f"{sum(len(g.nodes) for g in started)} nodes"
        )
    else:
        lines += [f"{key}: round {r.round} ({r.stage}): {g.name} started on {_nodes(g.nodes)}" for g in started]
    for g in finished:
        if many and g.passed:
            continue
        measured = _values(g.measurements)
        lines.append(
            f"{key}: round {r.round}: {g.name} on {_nodes(g.nodes)} {_state(g)}"
            + (f": {measured}" if measured else "")
            + (f" — {g.message}" if g.message and g.passed is False else "")
        )
    passed = sum(1 for g in finished if g.passed)
    if many and passed:
        lines.append(f"{key}: round {r.round}: {passed} groups passed")
    return lines


def _groups(rounds: Iterable[models.Round]) -> Iterable[models.GroupRun]:
    for r in rounds:
        yield from r.groups


class Display:
    """Progress on stderr: ``live`` (rich Live) on a terminal, plain event lines otherwise."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        from shared import output

        self.stream = stream or sys.stderr
        self.live_mode = output.use_color(self.stream) if live is None else live
        self._live: Any = None
        self._last: models.Certification | None = None
        self._note = ""

    def __enter__(self) -> Display:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, value, tb)
            self._live = None

    def _show(self, cert: models.Certification) -> None:
        if self._live is None:  # started on the first update: a run created without --wait shows nothing
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream, markup=False, emoji=False, highlight=False)
            self._live = Live(render(cert, self._note), console=console, refresh_per_second=4)
            self._live.__enter__()
        else:
            self._live.update(render(cert, self._note))

    def note(self, text: str) -> None:
        """A runner note: the live view's footer; as a line only when it says the run waits for
        another holder (the event lines already tell everything else)."""
        self._note = text
        if self.live_mode:
            if self._last is not None:
                self._show(self._last)
            return
        if text.startswith("waiting"):
            self.stream.write(text + "\n")
            self.stream.flush()

    def status(self, cert: models.Certification) -> None:
        """The Certification after a step."""
        if self.live_mode:
            self._show(cert)
        else:
            for line in events(self._last, cert):
                self.stream.write(line + "\n")
            self.stream.flush()
        self._last = cert
