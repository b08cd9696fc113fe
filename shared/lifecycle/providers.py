"""Test providers: what one attempt of a test group creates, and how its outcome is read.

A provider object is named per request, group and attempt, created before the status records the
attempt (AlreadyExists on a replay is adoption, not a second run), read only through its
conditions (upstream's contract, research/nvsentinel.md §7.4) and always deleted once the attempt
is decided, after what it measured is kept (``keep_evidence``, ``evidence``). A provider whose CRD
the cluster does not serve raises ``shared.certify.resource.CrdMissing`` from ``start``. Two kinds,
chosen by ``providers.<name>.kind`` through ``KINDS``:

- ``Certification`` (nvcre.nvidia.com/v1alpha1): one Certification over the group's nodes with one
  category per test; the certification engine runs it (in ``nvsentinel run`` or ``nvcrectl
  controller``) and blames nodes in ``categoryStatuses[].failedNodes``;
- ``Job`` (batch/v1): the test's command on each node of the group (Indexed, one pod per node,
  all the node's GPUs, ``backoffLimit: 0``, ``activeDeadlineSeconds`` = the provider's timeout).

Both tolerate the gate: a cordon (``node.kubernetes.io/unschedulable``), the gate's taints and the
taints quarantine handed over with a repaired node (those validation now holds) — nothing else.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from shared import errors
from shared import nodes as nodes_
from shared.kube import errors as kube_errors
from shared.kube import jobs, rest
from shared.lifecycle import models, repaired, settings

if TYPE_CHECKING:
    from shared.kube.api import KubeApi

REQUEST_LABEL = "nvsentinel.nvidia.com/validation-request"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class Outcome:
    passed: bool
    failed_nodes: list[str]
    message: str


@dataclass(frozen=True)
class Attempt:
    """Everything a provider needs to start one attempt."""

    name: str
    request: str
    group: models.TestGroup
    nodes: list[dict[str, Any]]
    """The group's Node objects as just read (their gate decides the tolerations)."""


class Provider(Protocol):
    def start(self, api: KubeApi, attempt: Attempt) -> None: ...

    def outcome(self, api: KubeApi, name: str) -> Outcome | None:
        """None while the attempt runs; NotFound when its object is gone."""

    def delete(self, api: KubeApi, name: str) -> None: ...

    def keep_evidence(self, api: KubeApi, name: str, *, request: str) -> str | None:
        """Save what the decided attempt measured before ``delete``; the ConfigMap's name, or None
        when this kind keeps none. NotFound when the object is gone."""


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("status") or {}).get("conditions") or [])


def _holds(obj: dict[str, Any], want: settings.Condition) -> bool:
    return any(c.get("type") == want.type and c.get("status") == want.status for c in _conditions(obj))


def _gate_taints(nodes: list[dict[str, Any]], cfg: settings.Configuration) -> list[tuple[str, str | None, str]]:
    """Taints validation must tolerate: the cordon when every node carries it, and the taints
    validation holds on the nodes — the gate's and those quarantine handed over with a repaired
    node (``repaired.tolerated``, read from the node's taint owners, not from the values). A taint
    another owner holds on any node of the group is never tolerated, so it keeps the test off that
    node as the scheduler would."""
    found: list[tuple[str, str | None, str]] = []
    if nodes and all((n.get("spec") or {}).get("unschedulable") for n in nodes):
        found.append((UNSCHEDULABLE, None, "NoSchedule"))
    held: set[tuple[str, str, str]] = set()
    foreign: set[tuple[str, str, str]] = set()
    for n in nodes:
        mine = set(repaired.tolerated(n))
        held |= mine
        for x in (n.get("spec") or {}).get("taints") or []:
            taint = (str(x.get("key", "")), str(x.get("value") or ""), str(x.get("effect", "")))
            if taint not in mine:
                foreign.add(taint)
    # the gate's taints as configured, when every node carries them: validation's by configuration
    gate = {
        (t.key, t.value, t.effect)
        for t in cfg.schedulingGate.taints
        if nodes and all(nodes_.has_taint(n, t.key, t.value, t.effect) for n in nodes)
    }
    found += sorted((held - foreign) | gate)
    return found


class CertificationProvider:
    def __init__(self, name: str, spec: settings.Provider, cfg: settings.Configuration) -> None:
        self.spec = spec
        self.cfg = cfg

    def start(self, api: KubeApi, attempt: Attempt) -> None:
        from shared.certify import models as cmodels
        from shared.certify import resource

        categories = []
        for test in attempt.group.tests:
            domain, variant = str(self.cfg.tests[test].category).split("/", 1)
            categories.append(cmodels.Category(domain=domain, variant=variant))
        selectors = [
            cmodels.TaintSelector(key=k, value=v, effect=e) for k, v, e in _gate_taints(attempt.nodes, self.cfg)
        ]
        cert = cmodels.Certification(
            metadata={"name": attempt.name, "labels": {REQUEST_LABEL: attempt.request}},
            spec=cmodels.CertificationSpec(
                target=cmodels.TargetSpec(nodeNames=list(attempt.group.nodes), taintSelectors=selectors),
                categories=categories,
            ),
        )
        with contextlib.suppress(kube_errors.AlreadyExists):
            resource.create(api, cert, self.spec.namespace)

    def outcome(self, api: KubeApi, name: str) -> Outcome | None:
        from shared.certify import resource

        cert, _ = resource.get(api, self.spec.namespace, name)
        raw = cert.model_dump(mode="json")
        failed = sorted({f.name for c in cert.status.categoryStatuses for f in c.failedNodes})
        if _holds(raw, self.spec.succeeded()):
            return Outcome(True, [], cert.status.message or "")
        if _holds(raw, self.spec.failed()):
            return Outcome(False, failed, cert.status.message or "certification failed")
        return None

    def delete(self, api: KubeApi, name: str) -> None:
        from shared.certify import resource

        resource.delete(api, self.spec.namespace, name)

    def keep_evidence(self, api: KubeApi, name: str, *, request: str) -> str | None:
        from shared.certify import resource
        from shared.lifecycle import evidence

        cert, _ = resource.get(api, self.spec.namespace, name)
        return evidence.keep(api, cert, namespace=self.spec.namespace, request=request, request_label=REQUEST_LABEL)


class JobProvider:
    def __init__(self, name: str, spec: settings.Provider, cfg: settings.Configuration) -> None:
        self.spec = spec
        self.cfg = cfg

    def _path(self, name: str | None = None) -> str:
        return rest.group_path("batch", "v1", "jobs", self.spec.namespace, name)

    def document(self, attempt: Attempt) -> dict[str, Any]:
        test = self.cfg.tests[attempt.group.tests[0]]
        names = list(attempt.group.nodes)
        gpus = (
            min(
                int(((n.get("metadata") or {}).get("labels") or {}).get("nvidia.com/gpu.count") or 0)
                for n in attempt.nodes
            )
            if attempt.nodes
            else 0
        )
        container: dict[str, Any] = {"name": "test", "image": test.image or "busybox", "command": list(test.command)}
        if gpus:
            container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
        if test.env:
            container["env"] = [{"name": k, "value": v} for k, v in sorted(test.env.items())]
        tolerations = [
            {"key": k, "operator": "Exists" if v is None else "Equal", **({"value": v} if v else {}), "effect": e}
            for k, v, e in _gate_taints(attempt.nodes, self.cfg)
        ]
        pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
        if tolerations:
            pod["tolerations"] = tolerations
        pod.update(jobs.placement(names))
        metadata: dict[str, Any] = {
            "name": attempt.name,
            "namespace": self.spec.namespace,
            "labels": {REQUEST_LABEL: attempt.request},
        }
        return jobs.indexed(metadata=metadata, pod=pod, pods=len(names), deadline_seconds=self.spec.timeoutSeconds)

    def start(self, api: KubeApi, attempt: Attempt) -> None:
        with contextlib.suppress(kube_errors.AlreadyExists):
            rest.create(api, self._path(), self.document(attempt), what=f"job {attempt.name}")

    def outcome(self, api: KubeApi, name: str) -> Outcome | None:
        job = rest.get(api, self._path(name), what=f"job {name}")
        if _holds(job, self.spec.succeeded()):
            return Outcome(True, [], "")
        if _holds(job, self.spec.failed()):
            reason = next(
                (c.get("reason", "") for c in _conditions(job) if c.get("type") == self.spec.failed().type), ""
            )
            return Outcome(False, [], f"job {name} failed: {reason}".rstrip(": "))
        return None

    def delete(self, api: KubeApi, name: str) -> None:
        jobs.delete(api, self._path(name), what=f"job {name}")

    def keep_evidence(self, api: KubeApi, name: str, *, request: str) -> None:
        return None


KINDS: dict[str, type[CertificationProvider] | type[JobProvider]] = {
    settings.CERTIFICATION: CertificationProvider,
    settings.JOB: JobProvider,
}


def for_group(cfg: settings.Configuration, provider: str) -> Provider:
    spec = cfg.providers.get(provider)
    if spec is None:
        raise errors.InvalidInput(f"unknown provider {provider!r}", where=f"{settings.PREFIX}.providers")
    made: Provider = KINDS[spec.kind](provider, spec, cfg)
    return made
