"""Control endpoints for the simulated hardware (``/sim/v1/…``), behind the sim CLI's commands.

- ``GET clock`` → ``{"now": "2026-11-29T18:00:00.000000Z", "speed": 60.0}`` (any identity);
  ``PUT clock {"advance": S, "speed": X}`` moves or re-paces virtual time (admin);
- ``GET hardware`` → nodes, racks and active faults;
- ``POST inject {"specs": [...]}``, ``POST clear {"specs": [...], "all": false}``;
- ``POST upgrade-driver {"version": V, "nodes": [...] | null}``;
- ``POST seed {"recipe": {...}, "breaks": {component: mode}, "kernels": {node: version},
  "values": {component: merged values}, "driver": V | null}``.

Bad specs and unknown nodes are 400s with the parser's message, so the CLI can exit 2 with it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from shared.sim.apiserver import apierrors, patchtypes
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.gpu import faultspec, gpunodes, helmseed

if TYPE_CHECKING:
    from shared.sim.server import SimServer

ENDPOINTS = frozenset({"clock", "hardware", "inject", "clear", "upgrade-driver", "seed"})
DRIVER_DAEMONSET = "nvidia-driver-daemonset"


def clock(sim: SimServer) -> dict[str, Any]:
    """The virtual time, its speed, and (while the clock waits for the kubelet loop's work) the
    ``until`` it cannot pass before that work is done, so a reader extrapolating stops there."""
    until = sim.vclock.held_until()
    answer = {"now": _rfc3339(sim.vclock.time()), "speed": sim.vclock.speed}
    return answer if until is None else {**answer, "until": _rfc3339(until)}


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hardware(sim: SimServer) -> dict[str, Any]:
    with sim.fabric.lock:
        return {
            "nodes": len(sim.fabric.nodes),
            "racks": sim.fabric.racks(),
            "faults": [str(f) for f in sim.fabric.faults],
        }


def _bad(exc: Exception) -> ApiError:
    return ApiError(400, "BadRequest", str(exc))


def _set_clock(sim: SimServer, body: dict[str, Any]) -> dict[str, Any]:
    if body.get("speed") is not None:
        sim.vclock.set_speed(float(body["speed"]))
    if body.get("advance"):
        sim.advance(float(body["advance"]))
    return clock(sim)


def _inject(sim: SimServer, body: dict[str, Any]) -> dict[str, Any]:
    faults = [f for spec in body.get("specs") or [] for f in faultspec.parse(str(spec))]
    sim.fabric.inject(faults)
    return hardware(sim)


def _clear(sim: SimServer, body: dict[str, Any]) -> dict[str, Any]:
    selectors = [faultspec.parse_selector(str(s)) for s in body.get("specs") or []]
    if body.get("all"):
        selectors = [faultspec.Selector(node=f.node, racks=f.racks) for f in list(sim.fabric.faults)]
    for selector in selectors:
        sim.fabric.remove(selector)
    return hardware(sim)


def _seed(sim: SimServer, body: dict[str, Any]) -> dict[str, Any]:
    return helmseed.seed(
        sim,
        body.get("recipe") or {},
        breaks=body.get("breaks") or {},
        kernels=body.get("kernels") or {},
        values=body.get("values") or None,
        driver=body.get("driver") or None,
    )


_ROUTES: dict[tuple[str, str], Callable[[SimServer, dict[str, Any]], dict[str, Any]]] = {
    ("clock", "PUT"): _set_clock,
    ("clock", "POST"): _set_clock,
    ("hardware", "GET"): lambda sim, _body: hardware(sim),
    ("inject", "POST"): _inject,
    ("clear", "POST"): _clear,
    ("upgrade-driver", "POST"): lambda sim, body: upgrade_driver(
        sim, str(body.get("version") or ""), body.get("nodes")
    ),
    ("seed", "POST"): _seed,
}
"""(endpoint, method) -> what answers it; bad input raises ValueError or TypeError."""


def handle(sim: SimServer, method: str, what: str, body: dict[str, Any]) -> tuple[int, Any]:
    route = _ROUTES.get((what, method))
    if route is None:
        raise ApiError(404, "NotFound", f"no control endpoint {method} {what}")
    try:
        return 200, route(sim, body)
    except (ValueError, TypeError) as exc:
        raise _bad(exc) from exc


def upgrade_driver(sim: SimServer, version: str, only: list[str] | None) -> dict[str, Any]:
    """A new NVIDIA driver: feature-discovery labels, the module banner, the driver DaemonSet's image."""
    if not version or not all(part.isdigit() for part in version.split(".")):
        raise ValueError(f"driver version must look like 570.158.01, got {version!r}")
    names = list(only) if only else sorted(sim.fabric.nodes)
    missing = [n for n in names if sim.fabric.node(n) is None]
    if missing:
        raise ValueError(f"no GPU node {missing[0]!r}")
    nodes_r = sim.table.by_group_resource("", "nodes")
    assert nodes_r is not None
    for name in names:
        hw = sim.fabric.nodes[name]
        hw.driver = version
        sim.api.patch(nodes_r, None, name, patchtypes.MERGE, {"metadata": {"labels": gpunodes.driver_labels(version)}})
        sim.noderoot.driver_loaded(hw)
    images = _roll_driver_daemonsets(sim, version)
    return {"version": version, "nodes": names, "images": images}


def _retag(image: str, version: str) -> str:
    repo, _, tag = image.rpartition(":")
    if not repo:
        return f"{image}:{version}"
    rest = tag.split("-", 1)[1] if "-" in tag else ""
    return f"{repo}:{version}-{rest}" if rest else f"{repo}:{version}"


def _roll_driver_daemonsets(sim: SimServer, version: str) -> list[str]:
    ds_r = sim.table.by_group_resource("apps", "daemonsets")
    pods_r = sim.table.by_group_resource("", "pods")
    assert ds_r is not None and pods_r is not None
    images = []
    for entry in list(sim.store.scan(ds_r.group_resource, None)):
        if entry.name != DRIVER_DAEMONSET:
            continue
        ds = entry.object()
        containers = ds["spec"]["template"]["spec"].get("containers") or []
        patch = [{"name": c["name"], "image": _retag(c.get("image", ""), version)} for c in containers]
        images += [c["image"] for c in patch]
        try:
            sim.api.patch(
                ds_r,
                entry.namespace,
                entry.name,
                patchtypes.STRATEGIC,
                {"spec": {"template": {"spec": {"containers": patch}}}},
            )
        except apierrors.ApiError:
            continue
        for pod in list(sim.store.scan(pods_r.group_resource, entry.namespace)):
            if any(ref.get("uid") == entry.uid for ref in pod.object()["metadata"].get("ownerReferences") or []):
                helmseed.set_pod_images(sim, pods_r, pod.namespace, pod.name, patch)
    return images
