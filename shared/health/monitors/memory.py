"""What a monitor last reported, so polls publish changes only, and recoveries as healthy events.

Upstream's gpu-health-monitor keeps an in-memory cache ``check|entityType|entityValue →
(isFatal, isHealthy)`` and its nic-health-monitor persists its state on a hostPath so a recovery is
still seen after a restart. ``Memory`` does both: it lives in the process, and with a state file
it survives one (the one-shot CLI runs are separate processes). It also keeps the last raw
counters per key, for monitors that report increases.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from shared import errors, files
from shared.health import event as hevent


def key_of(ev: hevent.HealthEvent) -> str:
    """One slot per node, agent, check and entity set: the unit that fails and recovers."""
    entities = ",".join(f"{e.entityType}={e.entityValue}" for e in ev.entitiesImpacted)
    return f"{ev.nodeName}|{ev.agent}|{ev.checkName}|{entities}"


def _signature(ev: hevent.HealthEvent) -> list[Any]:
    return [ev.isFatal, ev.isHealthy, sorted(ev.errorCode), ev.recommendedAction.name]


class Memory:
    """Last reported event per slot and last counters per key; optionally backed by a JSON file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.reported: dict[str, dict[str, Any]] = {}
        self.counters: dict[str, dict[str, int]] = {}
        if path is not None:
            files.check_output(path, probe=True)  # refused before anything is published
        if path is not None and path.exists():
            data = files.load_json(path)
            if not isinstance(data, dict):
                raise errors.InvalidInput("monitor state must be a JSON object", where=str(path))
            reported, counters = data.get("reported", {}), data.get("counters", {})
            if not isinstance(reported, dict) or not all(isinstance(v, dict) for v in reported.values()):
                raise errors.InvalidInput("monitor state: 'reported' must map slots to events", where=str(path))
            if not isinstance(counters, dict) or not all(
                isinstance(d, dict) and all(type(v) is int for v in d.values()) for d in counters.values()
            ):
                raise errors.InvalidInput("monitor state: 'counters' must map keys to whole numbers", where=str(path))
            self.reported = dict(reported)
            self.counters = {k: dict(d) for k, d in counters.items()}

    def save(self) -> None:
        if self.path is not None:
            files.atomic_write_text(
                self.path,
                json.dumps({"reported": self.reported, "counters": self.counters}, indent=1, sort_keys=True) + "\n",
            )

    def changes(
        self,
        node: str,
        agent: str,
        unhealthy: Iterable[hevent.HealthEvent],
        *,
        now: datetime,
        seen: set[str] | None = None,
    ) -> list[hevent.HealthEvent]:
        """Events to publish for one read of ``node``: new or changed failures, then recoveries.

        A slot of this node and agent that was last reported unhealthy and is not among
        ``unhealthy`` recovered — unless ``seen`` is given and its entities were not read this time
        (a device that vanished has not recovered).
        """
        out: list[hevent.HealthEvent] = []
        current: set[str] = set()
        for ev in unhealthy:
            slot = key_of(ev)
            current.add(slot)
            previous = self.reported.get(slot)
            if previous is None or _signature(hevent.parse(previous)) != _signature(ev):
                self.reported[slot] = ev.wire()
                out.append(ev)
        prefix = f"{node}|{agent}|"
        for slot, last_data in sorted(self.reported.items()):
            if not slot.startswith(prefix) or slot in current:
                continue
            last: hevent.HealthEvent = hevent.parse(last_data)
            if last.isHealthy:
                continue
            if seen is not None and not any(f"{e.entityType}={e.entityValue}" in seen for e in last.entitiesImpacted):
                continue
            healed = last.model_copy(
                update={
                    "isFatal": False,
                    "isHealthy": True,
                    "recommendedAction": hevent.RecommendedAction.NONE,
                    "errorCode": [],
                    "message": f"{last.checkName}: no health failures",
                    "generatedTimestamp": now,
                    "id": "",
                    "metadata": {k: v for k, v in last.metadata.items() if k in ("port", "linkLayer")},
                }
            )
            self.reported[slot] = healed.wire()
            out.append(healed)
        return out
