"""A sample HealthEvent and a sample Node, every field set, to run each rule once before it is trusted.

What the type checker misses still fails here: ``rules check`` evaluates every rule on the sample
of its kind, exactly as the rule engine does (``ruleset.CelInput``; the Node through the engine's
node cache), and reports a result that is not a boolean or an error that no input can avoid (no
such overload, an unbound function). An error that depends on the data (``labels['x']`` when the
sample has no label ``x``, an index past the end) is forgiven: real events and nodes differ there.
"""

from __future__ import annotations

from typing import Any

from shared import cel
from shared.health import event, ruleset

EVENT = event.HealthEvent(
    agent="syslog-health-monitor",
    componentClass="GPU",
    checkName="SysLogsXIDError",
    isFatal=True,
    message="GPU has fallen off the bus.",
    recommendedAction=event.RecommendedAction.RESTART_BM,
    errorCode=["79"],
    entitiesImpacted=[event.Entity(entityType="GPU_UUID", entityValue="GPU-00000000-0000-0000-0000-000000000000")],
    metadata={"mnemonic": "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"},
    generatedTimestamp="2026-01-01T00:00:00Z",
    nodeName="sample-node",
    quarantineOverrides=event.BehaviourOverrides(),
    drainOverrides=event.BehaviourOverrides(),
    processingStrategy=event.ProcessingStrategy.EXECUTE_REMEDIATION,
    id="sample",
    customRecommendedAction="sample",
)

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "sample-node",
        "resourceVersion": "1",
        "labels": {"nvidia.com/gpu.present": "true", "kubernetes.io/hostname": "sample-node"},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
    },
    "spec": {
        "unschedulable": False,
        "taints": [
            {"key": "sample", "value": "x", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"},
        ],
        "podCIDR": "10.0.0.0/24",
        "podCIDRs": ["10.0.0.0/24"],
        "providerID": "sim://sample-node",
        "externalID": "sample-node",
        "configSource": {},
    },
    "status": {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
        "capacity": {"cpu": "8", "nvidia.com/gpu": "8"},
        "allocatable": {"cpu": "8", "nvidia.com/gpu": "8"},
    },
}

_RULE_ERRORS = ("no such overload", "unbound function", "TypeError", "AttributeError")
"""Errors that come from the rule whatever the input (types, functions). Anything else depends on
the data (a key the sample lacks, an index past its end, a text that is not a number) and is
forgiven: a real event may well have it."""


def evaluation_problem(kind: str, expression: str) -> str | None:
    """Why ``expression`` fails on the sample of ``kind`` (an error or a non-boolean), or None."""
    program = cel.compile(expression, name="sample")
    if kind == "HealthEvent":
        value: Any = EVENT.cel_value()
        sample = ruleset.CelInput("event", value)
    else:
        sample = ruleset.NodeCache().entry(NODE)
    ok, result = sample.outcome(program)
    if ok:
        try:
            program.as_bool(result)
        except cel.EvaluationError:
            return f"evaluates to {type(result).__name__}, not a boolean, on a sample {kind}"
        return None
    if not any(marker in str(result) for marker in _RULE_ERRORS):
        return None
    return f"fails on a sample {kind}: {result}"
