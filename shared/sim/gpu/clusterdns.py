"""Names a pod resolves, as cluster DNS (CoreDNS over EndpointSlices) and the pod's /etc/hosts answer.

A launcher reaches its workers by the names in its hostfile; this module says which pod, if any, a
name reaches. The rules (Kubernetes docs "DNS for Services and Pods"):

- a pod with ``spec.hostname`` and ``spec.subdomain`` has the record
  ``<hostname>.<subdomain>.<namespace>.svc.cluster.local`` only while a headless Service named
  ``<subdomain>`` in its namespace selects it and lists it as an endpoint: the pod has an IP
  (Running) and is Ready, or the Service publishes not-ready addresses (JobSet's default, not the
  MPI Operator's unless ``runLauncherAsWorker``; research/workloads.md §2.2, §3.2);
- a short name is tried under each search domain (the pod's ``dnsConfig.searches``, then
  ``<namespace>.svc.cluster.local``, ``svc.cluster.local``, ``cluster.local``; ndots 5), so
  ``tj-node-0-0.tj`` in the hostfile resolves in the launcher's namespace;
- the pod's own hostname, its FQDN and ``localhost`` are in its /etc/hosts.

Service names (``nvidia-dcgm.gpu-operator.svc``) resolve when the Service exists. Left out:
Service ClusterIP routing, ExternalName, hostNetwork pods' node resolvers.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from shared.sim.apiserver import store

DOMAIN = "cluster.local"


def _searches(pod: dict[str, Any]) -> list[str]:
    ns = pod["metadata"]["namespace"]
    own = [str(s) for s in ((pod.get("spec") or {}).get("dnsConfig") or {}).get("searches") or []]
    return [*own, f"{ns}.svc.{DOMAIN}", f"svc.{DOMAIN}", DOMAIN]


def candidates(pod: dict[str, Any], name: str) -> list[str]:
    """Fully qualified names tried for ``name``, in resolver order (ndots 5)."""
    name = name.rstrip(".")
    expanded = [f"{name}.{s}" for s in _searches(pod)]
    return [*expanded, name] if name.count(".") < 5 else [name, *expanded]


def _own_names(pod: dict[str, Any]) -> set[str]:
    spec = pod.get("spec") or {}
    host = str(spec.get("hostname") or pod["metadata"]["name"])
    names = {"localhost", host}
    if spec.get("subdomain"):
        names.add(f"{host}.{spec['subdomain']}.{pod['metadata']['namespace']}.svc.{DOMAIN}")
    return names


def _selects(service: dict[str, Any], pod: dict[str, Any]) -> bool:
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = pod["metadata"].get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _endpoint(service: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Whether the endpoints controller lists ``pod`` as an address of ``service``."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed") or not status.get("podIP"):
        return False
    if pod["metadata"].get("deletionTimestamp"):
        return False
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return ready or bool((service.get("spec") or {}).get("publishNotReadyAddresses"))


def _headless(objects: store.Store, namespace: str, name: str) -> dict[str, Any] | None:
    entry = objects.get(("", "services"), namespace, name)
    if entry is None:
        return None
    service = entry.object()
    return service if (service.get("spec") or {}).get("clusterIP") == "None" else None


def resolve(objects: store.Store, pod: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The pod ``name`` reaches from ``pod`` (itself for its own names), or None (NXDOMAIN)."""
    if name.rstrip(".") in _own_names(pod):
        return pod
    for fqdn in candidates(pod, name):
        labels = fqdn.split(".")
        if len(labels) != 6 or ".".join(labels[3:]) != f"svc.{DOMAIN}":
            continue
        host, subdomain, namespace = labels[0], labels[1], labels[2]
        service = _headless(objects, namespace, subdomain)
        if service is None:
            continue
        for entry in objects.scan(("", "pods"), namespace):
            other = entry.object()
            spec = other.get("spec") or {}
            named = spec.get("hostname") == host and spec.get("subdomain") == subdomain
            if named and _selects(service, other) and _endpoint(service, other):
                return other
    return None


def service_exists(objects: store.Store, pod: dict[str, Any], address: str) -> bool:
    """Whether ``address`` (``host[:port]``) names an existing Service from ``pod``'s namespace; an
    IP address or ``localhost`` is taken as reachable (no Service involved)."""
    host = address.rsplit(":", 1)[0] if address.count(":") == 1 else address
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        pass
    if host == "localhost":
        return True
    for fqdn in candidates(pod, host):
        labels = fqdn.split(".")
        service = len(labels) == 5 and ".".join(labels[2:]) == f"svc.{DOMAIN}"
        if service and objects.get(("", "services"), labels[1], labels[0]) is not None:
            return True
    return False
