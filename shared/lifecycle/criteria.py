"""Readiness and new-node criteria: CEL over one Node (``shared.cel``), compiled once at load.

Variables: ``node`` (the Node object as the API returns it) and ``nodeAgeSeconds`` (cluster
seconds since its creationTimestamp, so "joined in the last 30 minutes" needs no time functions).
An expression that cannot be evaluated on a node (a missing field) counts as false, and its error
is part of the answer so the waiting message can say why.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from shared import cel, nodes


def _age(node: nodes.Node, now: datetime) -> float:
    created = str((node.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        return (now - datetime.fromisoformat(created.replace("Z", "+00:00"))).total_seconds()
    except ValueError:
        return 0.0


def failing(programs: Mapping[str, cel.Program], node: nodes.Node, *, now: datetime) -> list[str]:
    """Names of the criteria ``node`` does not meet (empty: ready)."""
    activation = cel.activation({"node": cel.to_cel(node), "nodeAgeSeconds": cel.to_cel(_age(node, now))})
    bad = []
    for name, program in programs.items():
        try:
            ok = program.evaluate_bool(activation)
        except cel.EvaluationError as exc:
            bad.append(f"{name} ({exc})")
            continue
        if not ok:
            bad.append(name)
    return bad


def meets_all(programs: Mapping[str, cel.Program], node: nodes.Node, *, now: datetime) -> bool:
    """``not failing(...)``, stopping at the first criterion ``node`` does not meet, the shortest
    expressions first: deciding that one of 10,000 nodes has not joined then rarely evaluates a
    macro such as ``exists`` over its labels (milliseconds each), since a short criterion (``cordoned``)
    already says no."""
    activation = cel.activation({"node": cel.to_cel(node), "nodeAgeSeconds": cel.to_cel(_age(node, now))})
    for program in sorted(programs.values(), key=lambda p: len(p.expression)):
        try:
            if not program.evaluate_bool(activation):
                return False
        except cel.EvaluationError:
            return False
    return True
