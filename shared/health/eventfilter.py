"""Which stored HealthEvents ``nvsentinel events list`` shows: by node, check, agent, fatal, phase, time.

Node, check, agent and fatal are labels written at publish (``shared.health.resource``), so those
filters go to the API server as a label selector and only matching objects travel; the label
value is the name cut to a label's 63 characters, so the exact name is compared again here.
Phase (``status``) and time are not labels and are compared here. Time is the event's
``generatedTimestamp``: ``--since 1h`` (kubectl's spelling, relative to the cluster's clock) or
``--after 2026-01-01T00:00:00Z``, never both. Every filter given must hold (they combine with AND).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from shared import durations, errors, grammars
from shared.health import resource

PENDING = "Pending"
"""The phase name for an event without ``status.phase`` (not processed yet)."""
PHASES = (
    PENDING,
    "Quarantined",
    "AlreadyQuarantined",
    "UnQuarantined",
    "Recovered",
    "NotMatched",
    "NoMatch",
    "Skipped",
    "Blocked",
    "StoreOnly",
    "NodeNotFound",
)
_OFFSET = re.compile(r"[+-]\d\d:\d\d$")


def parse_after(text: str) -> datetime:
    """An RFC 3339 timestamp (``2026-01-01T00:00:00Z``, fractions and offsets allowed); InvalidInput else."""
    raw = text.strip()
    if "T" not in raw.upper():
        raise errors.InvalidInput(f"--after: {text!r} is not an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)")
    if not raw.endswith(("Z", "z")) and not _OFFSET.search(raw):
        raise errors.InvalidInput(f"--after: {text!r} needs a time zone (e.g. 2026-01-01T00:00:00Z)")
    try:
        moment = datetime.fromisoformat(raw[:-1] + "+00:00" if raw[-1] in "Zz" else raw)
    except ValueError:
        raise errors.InvalidInput(f"--after: {text!r} is not an RFC 3339 time (e.g. 2026-01-01T00:00:00Z)") from None
    return moment.astimezone(UTC)


def parse_phases(text: str) -> frozenset[str]:
    """``Quarantined,Blocked``: phases by name (``Pending`` = not processed); InvalidInput names a wrong one."""
    wanted = [p.strip() for p in text.split(",") if p.strip()]
    if not wanted:
        raise errors.InvalidInput("--phase: name at least one phase")
    by_lower = {p.lower(): p for p in PHASES}
    unknown = [p for p in wanted if p.lower() not in by_lower]
    if unknown:
        raise errors.InvalidInput(f"--phase: unknown phase {unknown[0]!r} (known: {', '.join(PHASES)})")
    return frozenset(by_lower[p.lower()] for p in wanted)


@dataclass(frozen=True)
class Filter:
    node: str | None = None
    check: str | None = None
    agent: str | None = None
    fatal: bool | None = None
    phases: frozenset[str] | None = None
    after: datetime | None = None

    @classmethod
    def of(
        cls,
        *,
        node: str | None = None,
        check: str | None = None,
        agent: str | None = None,
        fatal: bool | None = None,
        phase: str | None = None,
        since: str | None = None,
        after: str | None = None,
        now: Callable[[], datetime],
    ) -> Filter:
        """The filter from the flags' text; InvalidInput (exit 2) for a bad value, before any listing."""
        if since is not None and after is not None:
            raise errors.InvalidInput("--since and --after cannot be combined (one start time)")
        problem = grammars.node_name(node) if node else None
        if problem is not None:  # no stored event carries it: say so rather than list nothing
            raise errors.InvalidInput(problem, where="--node")
        start = None
        if since is not None:
            start = now() - timedelta(seconds=durations.parse(since, where="--since"))
        elif after is not None:
            start = parse_after(after)
        return cls(
            node=node or None,
            check=check or None,
            agent=agent or None,
            fatal=fatal,
            phases=parse_phases(phase) if phase is not None else None,
            after=start,
        )

    def needs_clock(self) -> bool:
        return self.after is not None

    def selector(self) -> str | None:
        """The label selector for the filters the labels carry; None when there are none."""
        parts = []
        if self.node is not None:
            parts.append(f"{resource.NODE_LABEL}={resource.label_value(self.node)}")
        if self.check is not None:
            parts.append(f"{resource.CHECK_LABEL}={resource.label_value(self.check)}")
        if self.agent is not None:
            parts.append(f"{resource.AGENT_LABEL}={resource.label_value(self.agent)}")
        if self.fatal is not None:
            parts.append(f"{resource.FATAL_LABEL}={str(self.fatal).lower()}")
        return ",".join(parts) or None

    def matches(self, stored: resource.Stored) -> bool:
        ev = stored.event
        fields = (
            (self.node, ev.nodeName),
            (self.check, ev.checkName),
            (self.agent, ev.agent),
            (self.fatal, ev.isFatal),
        )
        if any(wanted is not None and wanted != actual for wanted, actual in fields):
            return False
        if self.phases is not None and (stored.phase or PENDING) not in self.phases:
            return False
        if self.after is None:
            return True
        when = ev.generatedTimestamp
        return when is not None and when.astimezone(UTC) >= self.after
