"""The performance phase: the certification a recipe's ``validation.performance`` block names,
run in process through the certification engine, held to the block's thresholds.

Upstream runs each performance check as a validator container; here a check name maps to a
certification category (``nccl-all-reduce-bw`` → ``communication/nccl-all-reduce``, metric
``busBandwidthGBps``), the block's constraints become the category's thresholds (``>= 300`` →
``value >= 300``, as written: no tolerance), and ``nodeSelection`` becomes the Certification's
target. The engine runs it as ``nvcrectl certification run --wait`` would — same CRD, same Lease,
failing groups split until the slow nodes are named — and each check becomes one result naming
those nodes with the engine's reasons. It writes one Certification (and its workloads) to the
cluster: the only phase that does.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared import durations, errors
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.recipe import constraints, models
from shared.validate import checks

logger = logging.getLogger(__name__)

PHASE = "performance"
DEFAULT_TIMEOUT_SECONDS = 2 * 3600.0
"""Cluster time a performance run may take when the block sets no ``timeout``: an isolation of a
slow node on a few dozen nodes takes several rounds of minutes each."""
DEFAULT_TARGET = {"nvidia.com/gpu.present": "true"}


@dataclass(frozen=True)
class Mapping:
    """How one upstream performance check runs on the certification engine."""

    domain: str
    variant: str
    metric: str


CHECKS: dict[str, Mapping] = {
    "nccl-all-reduce-bw": Mapping("communication", "nccl-all-reduce", "busBandwidthGBps"),
}
"""Upstream's performance validators (``recipes/validators/catalog.yaml``) we run in process."""


def threshold(constraint: models.Constraint, *, where: str) -> str:
    """``>= 300`` as the engine's CEL over ``value``; InvalidInput when the operand is no number."""
    op, operand = constraints.split_expression(constraint.value)
    try:
        number = float(operand)
    except ValueError:
        raise errors.InvalidInput(
            f"constraint {constraint.name}: {constraint.value!r} is not a number with an operator (>= 300)",
            where=where,
        ) from None
    return f"value {op} {number!r}"


def _target(api: KubeApi, selection: dict[str, Any] | None) -> dict[str, Any]:
    """The Certification's target: the block's selector (default: the GPU nodes); with
    ``excludeNodes`` or ``maxNodes``, the matching node names, sorted, the excluded left out and
    the first ``maxNodes`` kept."""
    selection = selection or {}
    selector = {str(k): str(v) for k, v in (selection.get("selector") or DEFAULT_TARGET).items()}
    exclude = {str(n) for n in selection.get("excludeNodes") or []}
    limit = selection.get("maxNodes")
    if not exclude and not limit:
        return {"nodeSelector": selector}
    label_selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    names = sorted(
        str((n.get("metadata") or {}).get("name"))
        for n in rest.list_items(api, rest.core_path("nodes"), label_selector=label_selector)
    )
    chosen = [n for n in names if n not in exclude][: int(limit) if limit else None]
    return {"nodeNames": chosen}


def plan(block: models.ValidationPhase | None) -> list[checks.Check]:
    """What the phase would run, every check skipped (``--no-cluster``)."""
    if block is None or not block.checks:
        return []
    out = []
    for name in block.checks:
        mapping = CHECKS.get(name)
        how = f"certification {mapping.domain}/{mapping.variant}" if mapping else "no in-process runner"
        out.append(checks.Check(PHASE, _name(name, block), checks.SKIPPED, f"not run (--no-cluster): {how}"))
    return out


def _name(check: str, block: models.ValidationPhase) -> str:
    bound = [c.value for c in block.constraints or [] if c.name == check]
    return f"{check} {bound[0]}" if bound else check


def document(block: models.ValidationPhase, api: KubeApi, *, name: str, where: str) -> dict[str, Any] | None:
    """The Certification the block asks for; None when none of its checks runs on the engine."""
    categories = []
    for check in block.checks or []:
        mapping = CHECKS.get(check)
        if mapping is None:
            continue
        bound = [threshold(c, where=where) for c in block.constraints or [] if c.name == check]
        category: dict[str, Any] = {"domain": mapping.domain, "variant": mapping.variant}
        if bound:
            # Several constraints on one check must all hold: one CEL expression joins them.
            category["options"] = {"thresholds": {mapping.metric: " && ".join(bound)}}
        categories.append(category)
    if not categories:
        return None
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1",
        "kind": "Certification",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/created-by": "aicr-validate"}},
        "spec": {"target": _target(api, block.nodeSelection), "categories": categories},
    }


def run_name() -> str:
    """``aicr-performance-<8 hex>``: a new Certification per run, as upstream's run IDs are."""
    return f"aicr-performance-{secrets.token_hex(4)}"


def run(
    block: models.ValidationPhase,
    *,
    api: KubeApi,
    namespace: str,
    where: str,
    on_progress: Callable[[str], None] | None = None,
) -> tuple[list[checks.Check], bool]:
    """Run the block's certification to its end; (one result per check, timed out?)."""
    from shared.certify import service

    timeout = (
        durations.parse(block.timeout, where=f"{where} validation.performance.timeout")
        if block.timeout
        else DEFAULT_TIMEOUT_SECONDS
    )
    name = run_name()
    doc = document(block, api, name=name, where=where)
    results = [
        checks.Check(PHASE, check, checks.SKIPPED, "no in-process runner for this check")
        for check in block.checks or []
        if check not in CHECKS
    ]
    if doc is None:
        return results, False
    logger.info("running certification %s/%s", namespace, name, extra={"phase": PHASE})
    outcome = service.run_document(
        api, doc, namespace=namespace, timeout=timeout, where=f"{where} validation.performance", on_progress=on_progress
    )
    statuses = {(c.domain, c.variant): c for c in outcome.cert.status.categoryStatuses}
    for check in block.checks or []:
        mapping = CHECKS.get(check)
        if mapping is None:
            continue
        results.append(_result(check, block, statuses.get((mapping.domain, mapping.variant)), name, outcome.timed_out))
    return results, outcome.timed_out


def _result(check: str, block: models.ValidationPhase, status: Any, cert: str, timed_out: bool) -> checks.Check:
    name = _name(check, block)
    if status is None or timed_out:
        why = "did not complete in time" if timed_out else "has no result for this category"
        return checks.Check(PHASE, name, checks.FAILED, f"certification {cert} {why}")
    failed = list(status.failedNodes)
    if str(status.status) == "Succeeded" and not failed:
        measured = ", ".join(f"{k} {v:g}" for k, v in sorted(status.measurements.items()))
        return checks.Check(PHASE, name, checks.PASSED, f"certification {cert}: {measured}" if measured else "")
    reasons = [f"{f.name}: {f.reason} {f.message}".strip() for f in failed]
    reasons += [f"{' '.join(x.sideA)} <-> {' '.join(x.sideB)}: {x.message}" for x in status.infrastructureFaults]
    message = f"certification {cert} {status.status}: " + ("; ".join(reasons) or (status.message or "no reason given"))
    return checks.Check(PHASE, name, checks.FAILED, message, nodes=tuple(sorted({f.name for f in failed})))
