"""The lifecycle's automatic clients: requests for nodes that join, and for nodes back from repair.

- **Post-remediation** (upstream: fault-quarantine's validation hand-off, research §3.9): a
  quarantined node whose every holding event was repaired (its RebootNode or GPUReset completed)
  gets a request ``<node>-validation-<12 hex>`` (a hash of those events, so a restarted controller
  creates the same one) with ``postRemediation.tests``; then quarantine hands its cordon and taints
  over to validation (``quarantine.hand_over``) in one node write — the node is never uncordoned
  in between and never carries two cordons; the same write records what the repair was for
  (``repaired.record``: the events, the fault conditions raised for them), which a pass undoes.
  The request is created first: killed in between, the next pass finds it (AlreadyExists) and
  finishes the hand-over.
- **New nodes** (upstream's node-validation controller, §7.5): nodes meeting every
  ``newNodeValidation.criteria`` and not yet marked get one request for the whole batch
  (``validation-new-<10 hex>``), are marked with ``nvsentinel.nvidia.com/new-node-validation`` and
  their unowned join cordon becomes validation's, so a pass lifts it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from shared import cel, errors, nodes
from shared.clock import Clock
from shared.health import drain, quarantine, resource
from shared.health import event as hevent
from shared.kube import errors as kube_errors
from shared.kube import informer, rest
from shared.kube.api import KubeApi
from shared.lifecycle import criteria, repaired, sessions, settings
from shared.lifecycle import resource as vresource

logger = logging.getLogger(__name__)

NEW_NODE = "nvsentinel.nvidia.com/new-node-validation"
REPAIRS = frozenset({"RebootNode", "GPUReset"})


def _digest(parts: list[str], size: int) -> str:
    return hashlib.sha256(",".join(sorted(parts)).encode()).hexdigest()[:size]


def post_remediation(api: KubeApi, cfg: settings.Configuration, *, label_prefix: str, clock: Clock) -> list[str]:
    """Requests created (or found) for repaired nodes this pass, and their nodes handed over."""
    if not cfg.postRemediation.enabled:
        return []
    by_node: dict[str, dict[str, resource.Stored]] = {}
    every: dict[str, list[resource.Stored]] = {}
    for stored in resource.list_events(api):
        every.setdefault(stored.event.nodeName, []).append(stored)
        if stored.phase in drain.QUARANTINING:
            by_node.setdefault(stored.event.nodeName, {})[stored.name] = stored
    made = []
    for node_name, events in sorted(by_node.items()):
        if not any(_repaired(stored) for stored in events.values()):
            continue  # nothing repaired there: no need to read the node (750 quarantined nodes, 750 GETs a pass)
        try:
            node = nodes.get(api, node_name)
        except errors.NotFound:
            continue
        holding = sorted({str(c.get("event", "")) for c in quarantine.causes(node).values()})
        if not holding or any(not _repaired(events.get(name)) for name in holding):
            continue
        name = f"{node_name}-validation-{_digest(holding, 12)}"
        with contextlib.suppress(kube_errors.AlreadyExists):
            vresource.create(api, name, [node_name], cfg.postRemediation.tests, source="post-remediation")
        stamp = hevent.format_time(clock.now())
        checks = _fault_checks([events[e] for e in holding], every.get(node_name, []))

        def hand_over(
            node: nodes.Node, stamp: str = stamp, checks: set[str] = checks, holding: list[str] = holding
        ) -> bool:
            kept = repaired.record(node, events=holding, checks=checks, label_prefix=label_prefix, stamp=stamp)
            return quarantine.hand_over(node, to=sessions.OWNER, label_prefix=label_prefix, stamp=stamp) or kept

        nodes.update(api, node_name, hand_over)
        logger.info("repaired: validation %s takes the node over", name, extra={"subject": node_name})
        made.append(name)
    return made


def _fault_checks(holding: list[resource.Stored], on_node: list[resource.Stored]) -> set[str]:
    """The condition types the repair answers for: the holding events' checks, and those of every
    other fatal unhealthy event of the node on the same component class (the syslog monitor's
    ``SysLogsXIDError`` beside the GPU monitor's event for the same dead GPU, whichever rule set
    quarantined), the repair and the validation after it having covered that component."""
    classes = {s.event.componentClass for s in holding}
    found = {s.event.checkName for s in holding}
    found |= {
        s.event.checkName
        for s in on_node
        if s.event.isFatal and not s.event.isHealthy and s.event.componentClass in classes
    }
    return found


def _repaired(stored: resource.Stored | None) -> bool:
    rem = stored.status.remediation if stored is not None else None
    return rem is not None and rem.state == "Succeeded" and rem.kind in REPAIRS


def _claimed(node: nodes.Node) -> bool:
    """Marked already, validating already, or cordoned by a component (not a join cordon)."""
    anns = (node.get("metadata") or {}).get("annotations") or {}
    return NEW_NODE in anns or sessions.SESSION in anns or nodes.cordon_owner(node) is not None


CANDIDATES = "nvsentinel/new-node-candidates"
"""The node informer's index of nodes that may have joined (key ``CANDIDATE``): not claimed, and
meeting every criterion that reads only the node. Such a criterion's verdict is fixed for one
version of the node, so it is evaluated once per change, in the informer's thread, rather than
for every node every pass (at 10,000 nodes that was most of ``nvsentinel run``'s CPU); criteria
that read ``nodeAgeSeconds`` change with time alone and are evaluated each pass, on the
candidates only."""
CANDIDATE = "candidate"
_TIMED = re.compile(r"\bnodeAgeSeconds\b")


def _untimed(programs: Mapping[str, cel.Program]) -> dict[str, cel.Program]:
    """The criteria that do not mention ``nodeAgeSeconds``: their verdict depends on the node alone."""
    return {name: p for name, p in programs.items() if not _TIMED.search(p.expression)}


def index_new_nodes(cache: informer.Informer, programs: Mapping[str, cel.Program]) -> None:
    """Index ``cache``'s nodes for ``new_nodes`` (``CANDIDATES``)."""
    untimed = _untimed(programs)
    epoch = datetime.fromtimestamp(0, UTC)  # read by no untimed criterion

    def key(node: nodes.Node) -> list[str]:
        return [CANDIDATE] if _joined(node, untimed, epoch) else []

    cache.add_index(CANDIDATES, key)


def _joined(node: nodes.Node, programs: Mapping[str, cel.Program], now: datetime) -> bool:
    return not _claimed(node) and criteria.meets_all(programs, node, now=now)


def new_nodes(
    api: KubeApi,
    cfg: settings.Configuration,
    programs: Mapping[str, cel.Program],
    *,
    clock: Clock,
    cache: informer.Informer | None = None,
) -> list[str]:
    """The request created for nodes that joined this pass (empty when none did).

    With ``cache`` (indexed by ``index_new_nodes``) and current, only its candidates are
    evaluated, and each one that meets every criterion there is read fresh and evaluated again,
    so the cache's delay never makes a node join that a list would not have shown joining;
    without it, every node is listed page by page and evaluated."""
    if not cfg.newNodeValidation.enabled or not programs:
        return []
    now = clock.now()
    store = cache.current() if cache is not None else None
    if store is None:
        joined = sorted(
            n["metadata"]["name"] for n in rest.iter_items(api, rest.core_path("nodes")) if _joined(n, programs, now)
        )
    else:
        joined = []
        for cached in store.by_index(CANDIDATES, CANDIDATE):
            if not _joined(cached, programs, now):
                continue
            name = cached["metadata"]["name"]
            with contextlib.suppress(errors.NotFound):
                if _joined(nodes.get(api, name), programs, now):
                    joined.append(name)
        joined.sort()
    if not joined:
        return []
    name = f"validation-new-{_digest(joined, 10)}"
    with contextlib.suppress(kube_errors.AlreadyExists):
        vresource.create(api, name, joined, cfg.newNodeValidation.tests, source="new-node")

    def mark(node: nodes.Node) -> bool:
        anns = nodes.node_annotations(node)
        if nodes.is_cordoned(node) and nodes.cordon_owner(node) is None:
            anns[nodes.CORDON_OWNER] = sessions.OWNER  # the join cordon exists for this validation
        return nodes.set_map(anns, {NEW_NODE: name}) or True

    for node_name in joined:
        with contextlib.suppress(errors.NotFound):
            nodes.update(api, node_name, mark)
    logger.info("new nodes %s: validation %s", ", ".join(joined), name, extra={"subject": name})
    return [name]
