"""``rules replay``: what the rule sets would have done to recorded events, without a cluster.

The step between monitor mode and enforcement. Events run in order through the same quarantine
step the controller uses (``quarantine.Quarantiner``), on in-memory nodes — from a node list
(``kubectl get nodes -o json``) when given, else bare nodes named by the events — with an
in-memory circuit breaker whose clock is the events' own timestamps. So replay decides as the
live run would, node for node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shared.health import breaker, config, quarantine
from shared.health import event as hevent


@dataclass
class Replay:
    """Per event its outcome; per node the final state."""

    outcomes: list[dict[str, Any]] = field(default_factory=list)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def quarantined(self) -> dict[str, list[str]]:
        """node → rule sets that hold it at the end."""
        held: dict[str, list[str]] = {}
        for name, node in sorted(self.nodes.items()):
            sets = sorted({rs for c in quarantine.causes(node).values() for rs in c.get("ruleSets", [])})
            if sets:
                held[name] = sets
        return held

    def document(self) -> dict[str, Any]:
        return {
            "events": self.outcomes,
            "quarantined": [
                {"node": n, "ruleSets": rs, "cordoned": bool(self.nodes[n].get("spec", {}).get("unschedulable"))}
                for n, rs in self.quarantined().items()
            ],
        }


def run(
    cfg: config.Config, events: list[hevent.HealthEvent], *, node_objects: list[dict[str, Any]] | None = None
) -> Replay:
    result = Replay()
    for obj in node_objects or []:
        result.nodes[obj["metadata"]["name"]] = obj
    clock_now = [datetime.fromtimestamp(0, UTC)]
    gpu_label = cfg.fq.gpuNodeLabel.split("=", 1)
    names = {e.nodeName for e in events} | set(result.nodes)
    gpu_nodes = sum(
        1
        for n in names
        if n not in result.nodes
        or len(gpu_label) < 2
        or (result.nodes[n].get("metadata", {}).get("labels") or {}).get(gpu_label[0]) == gpu_label[1]
    )
    fq = cfg.fq
    q = quarantine.Quarantiner(
        engine=cfg.engine,
        dry_run=False,
        label_prefix=fq.labelPrefix,
        skip_labels=[(s.key, s.value) for s in fq.skipNodeLabels],
        breaker=breaker.MemoryBreaker(fq.circuitBreaker, gpu_nodes, lambda: clock_now[0]),
        now=lambda: clock_now[0],
        hand_off=fq.validation.enabled,
    )
    for ev in sorted(events, key=lambda e: e.generatedTimestamp.timestamp() if e.generatedTimestamp else 0):
        if ev.generatedTimestamp is not None:
            clock_now[0] = max(clock_now[0], ev.generatedTimestamp)
        node = result.nodes.setdefault(ev.nodeName, {"metadata": {"name": ev.nodeName, "labels": {}}, "spec": {}})
        outcome = q.apply(node, ev, ev.cel_value())
        result.outcomes.append(
            {"node": ev.nodeName, "checkName": ev.checkName, "phase": outcome.phase, "ruleSets": outcome.rule_sets}
        )
    return result
