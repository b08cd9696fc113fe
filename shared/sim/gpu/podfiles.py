"""Files a container sees through its pod's ConfigMap and Secret volumes, as the kubelet mounts them.

A launcher finds its hostfile at ``/etc/mpi/hostfile`` because the operator mounted a ConfigMap
volume there (research/workloads.md §1.2, §3.2); the simulated kubelet reads the file the same
way: the container's ``volumeMounts`` (longest mount path that holds the file, ``subPath``
honoured), the pod's volume (``configMap``, ``secret``, or ``projected`` sources of those), its
``items`` (key → relative path) or every key as a file. Before a container starts, every
non-optional ConfigMap and Secret it mounts must exist, or the kubelet keeps the pod in
ContainerCreating with a ``FailedMount`` Event (``kubelet:pkg/volume/configmap/configmap.go``:
``configmap "<name>" not found``). Left out: downward API, emptyDir and host paths (they hold no
file a workload here reads), live updates of mounted keys.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import store


@dataclass(frozen=True)
class _Source:
    kind: str  # configmaps | secrets
    name: str
    items: list[dict[str, Any]] | None
    optional: bool


def _sources(volume: dict[str, Any]) -> list[_Source]:
    found: list[_Source] = []
    if (cm := volume.get("configMap")) is not None:
        found.append(_Source("configmaps", str(cm.get("name", "")), cm.get("items"), bool(cm.get("optional"))))
    if (secret := volume.get("secret")) is not None:
        found.append(
            _Source("secrets", str(secret.get("secretName", "")), secret.get("items"), bool(secret.get("optional")))
        )
    for part in (volume.get("projected") or {}).get("sources") or []:
        found += _sources({k: v for k, v in part.items() if k in ("configMap", "secret")})
    return found


def _data(objects: store.Store, namespace: str, source: _Source) -> dict[str, str] | None:
    entry = objects.get(("", source.kind), namespace, source.name)
    if entry is None:
        return None
    obj = entry.object()
    if source.kind == "configmaps":
        return {**{str(k): str(v) for k, v in (obj.get("data") or {}).items()}}
    decoded: dict[str, str] = {}
    for key, value in (obj.get("data") or {}).items():
        try:
            decoded[str(key)] = base64.b64decode(str(value)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            decoded[str(key)] = ""
    return decoded


def missing(objects: store.Store, pod: dict[str, Any]) -> tuple[str, str] | None:
    """(volume name, ``configmap "x" not found``) for the first mount the kubelet cannot set up."""
    namespace = pod["metadata"]["namespace"]
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        for source in _sources(volume):
            if not source.optional and objects.get(("", source.kind), namespace, source.name) is None:
                what = "configmap" if source.kind == "configmaps" else "secret"
                return str(volume.get("name", "")), f'{what} "{source.name}" not found'
    return None


def read(objects: store.Store, pod: dict[str, Any], container: dict[str, Any], path: str) -> str | None:
    """The text of ``path`` as ``container`` sees it, or None when no mounted volume holds it."""
    path = posixpath.normpath(path)
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    mounts = sorted(
        (m for m in container.get("volumeMounts") or [] if m.get("mountPath")),
        key=lambda m: len(str(m["mountPath"])),
        reverse=True,
    )
    for mount in mounts:
        root = posixpath.normpath(str(mount["mountPath"]))
        if path != root and not path.startswith(root.rstrip("/") + "/"):
            continue
        relative = posixpath.relpath(path, root) if path != root else ""
        inside = posixpath.normpath(posixpath.join(str(mount.get("subPath") or ""), relative))
        volume = volumes.get(mount.get("name"))
        return _file(objects, pod["metadata"]["namespace"], volume, inside) if volume else None
    return None


def _file(objects: store.Store, namespace: str, volume: dict[str, Any], inside: str) -> str | None:
    for source in _sources(volume):
        data = _data(objects, namespace, source)
        if data is None:
            continue
        if source.items is None:
            if inside in data:
                return data[inside]
            continue
        for item in source.items:
            if posixpath.normpath(str(item.get("path", ""))) == inside and item.get("key") in data:
                return data[str(item["key"])]
    return None
