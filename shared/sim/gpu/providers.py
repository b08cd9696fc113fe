"""Managed Kubernetes services as their GPU nodes show them: identity, labels, NIC devices, transport.

``serve --service eks|gke|aks|oke|kind`` makes GPU nodes look as that service registers them, so the
programs' platform detection (providerID scheme, instance type, NIC resources, GPU product;
research/nvcre.md "Platform and GPU inference from nodes") and per-platform overrides meet what
they meet on the real thing. One YAML file per service under ``providers/`` holds the data:
providerID template, region and zone, the cloud's labels, and per GPU profile the machine type, the
NIC device-plugin resources and the :class:`Network` — the transport NCCL uses across nodes and
what a run's pods must request for it. Without that, NCCL falls back to ``NET/Socket`` at the
machine's ``socketBusGBps`` (research/workloads.md "How a wrong setup fails").

Templates may use ``{name}``, ``{index}``, ``{rack}``, ``{zone}``, ``{region}`` and stable ids
derived from them: ``{hex16}`` (the node), ``{rackhex}`` (its rack), ``{clusterhex}`` and ``{b32}``
(an OCID-style base32 suffix). Node names stay ``node-NNN`` whatever the service, so fault specs
and examples read the same everywhere. What is left out: addresses and DNS names in the cloud's
style, node pools of mixed machine types.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import uuid
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources as importlib_resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared import yamlio

WILDCARD = "*"
"""An env requirement satisfied by any value."""


class Service(StrEnum):
    EKS = "eks"
    GKE = "gke"
    AKS = "aks"
    OKE = "oke"
    KIND = "kind"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Network(_Strict):
    """How NCCL crosses nodes on this machine, and what a run's pods must ask for to get it."""

    transport: Literal["efa", "ib", "roce", "tcpxo", "socket"] = Field(
        description="The fast transport (socket: there is none, every run uses TCP)."
    )
    resources: list[str] = Field(default_factory=list, description="Extended resources every rank's pod requests.")
    annotations: list[str] = Field(default_factory=list, description="Annotations every rank's pod carries.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Values the ranks' environment must hold ('*': any value)."
    )
    socketBusGBps: float = Field(gt=0, description="Plateau all-reduce busbw over NET/Socket, GB/s.")


class Machine(_Strict):
    """One GPU profile's machine type on this service."""

    instanceType: str | None = None
    gpuMachine: str | None = Field(default=None, description="GPU feature discovery's nvidia.com/gpu.machine.")
    labels: dict[str, str] = Field(default_factory=dict)
    resources: dict[str, str] = Field(default_factory=dict, description="NIC and other device resources.")
    network: Network


class Provider(_Strict):
    service: Service
    platform: str = Field(description="What upstream's detection calls it (aws, gcp, azure, oci, onprem).")
    providerID: str
    region: str | None = None
    zone: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    machines: dict[str, Machine]

    def machine(self, profile: str) -> Machine:
        found = self.machines.get(profile)
        if found is None:
            raise ValueError(
                f"service {self.service} has no machine for GPU profile {profile!r}; "
                f"known: {', '.join(sorted(self.machines))}"
            )
        return found


def names() -> list[str]:
    return [s.value for s in Service]


@functools.cache
def load(service: str) -> Provider:
    """The provider called ``service``; ValueError lists the known ones."""
    if service not in names():
        raise ValueError(f"unknown service {service!r}; known: {', '.join(names())}")
    text = importlib_resources.files("shared.sim.gpu").joinpath("providers", f"{service}.yaml").read_text("utf-8")
    return Provider.model_validate(yamlio.loads(text, source=f"shared/sim/gpu/providers/{service}.yaml"))


@dataclass(frozen=True)
class Identity:
    """What the cloud puts on one node: providerID and labels."""

    provider_id: str
    labels: dict[str, str]


def _hex(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def _values(provider: Provider, *, name: str, index: int, rack: str) -> dict[str, Any]:
    digest = hashlib.sha256(f"{provider.service}/{name}".encode()).digest()
    return {
        "name": name,
        "index": index,
        "rack": rack,
        "zone": provider.zone or "",
        "region": provider.region or "",
        "hex16": _hex(provider.service, name)[:16],
        "rackhex": _hex(provider.service, "rack", rack)[:16],
        "clusterhex": _hex(provider.service, "cluster")[:16],
        "b32": base64.b32encode(digest + digest[:5]).decode().lower().rstrip("=")[:60],
    }


def identity(provider: Provider, machine: Machine, *, name: str, index: int, rack: str) -> Identity:
    values = _values(provider, name=name, index=index, rack=rack)
    labels = {k: v.format(**values) for k, v in {**provider.labels, **machine.labels}.items()}
    if machine.instanceType:
        labels["node.kubernetes.io/instance-type"] = machine.instanceType
    if provider.zone is not None:
        labels["topology.kubernetes.io/zone"] = provider.zone
    if provider.region is not None:
        labels["topology.kubernetes.io/region"] = provider.region
    return Identity(provider_id=provider.providerID.format(**values), labels=labels)


def clique_id(service: str, rack: str) -> str:
    """GPU feature discovery's ``nvidia.com/gpu.clique`` on a multi-node NVLink system:
    ``<NVLink domain cluster UUID>.<clique id>``, one domain per rack here."""
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, f'sim://{service}/nvlink/{rack}')}.32766"


# ------------------------------------------------------------------ what a run's pods asked for
def requested(pod: dict[str, Any], resource: str) -> bool:
    """Whether some container of ``pod`` requests ``resource`` (limits win, as for extended resources)."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        res = container.get("resources") or {}
        value = (res.get("limits") or {}).get(resource, (res.get("requests") or {}).get(resource))
        if value is not None and _positive(str(value)):
            return True
    return False


def _positive(quantity: str) -> bool:
    digits = quantity.rstrip("KMGTPEikmgtpe")
    try:
        return float(digits) > 0
    except ValueError:
        return False


def shortfall(network: Network, pods: list[dict[str, Any]], env: dict[str, str]) -> list[str]:
    """What keeps these pods' ranks off the fast transport (empty: nothing, they get it)."""
    if network.transport == "socket":
        return ["no RDMA-capable network on this machine"]
    missing: list[str] = []
    for pod in pods:
        name = pod["metadata"]["name"]
        missing += [f"pod {name} requests no {r}" for r in network.resources if not requested(pod, r)]
        notes = pod["metadata"].get("annotations") or {}
        missing += [f"pod {name} lacks annotation {a}" for a in network.annotations if a not in notes]
    for key, want in network.env.items():
        if key not in env or (want != WILDCARD and env[key] != want):
            missing.append(f"{key}={want} not in the ranks' environment")
    return missing
