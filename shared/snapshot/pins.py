"""What a recipe pins on each node, checked node by node so that a failure names its nodes.

A recipe pins the GPU driver through its GPU Operator's values (``driver.version``, unless
``driver.enabled`` is false) and constrains node facts — kernel, OS, container runtime, kubelet —
through its constraints. A snapshot's aggregate (``GPU.smi.driver: 570.158.01 | 580.105.08``) can
only say that some node is off; the per-node lists under ``NodeTopology`` say which ones. A
constraint on anything that is not a node fact (the server's version) is left to the aggregate
check, as is a node constraint against a snapshot that has no per-node lists (one written before
they existed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from shared.recipe import catalog as catalog_mod
from shared.recipe import constraints, models, values
from shared.recipe.snapshot import Snapshot
from shared.snapshot import nodes

DRIVER_PATH = "GPU.smi.driver"
_GPU_NODES = "nvidia.com/gpu.present=true"


@dataclass(frozen=True)
class NodeFact:
    """How a measurement path reads node by node: its name for people, the ``NodeTopology``
    subtype holding it, and whether only GPU nodes count (as the aggregate counts them)."""

    what: str
    fact: str
    gpu_only: bool


NODE_PATHS: dict[str, NodeFact] = {
    DRIVER_PATH: NodeFact("driver", "driver", True),
    "OS.sysctl./proc/sys/kernel/osrelease": NodeFact("kernel", "kernel", True),
    "OS.release.ID": NodeFact("OS", "os-id", True),
    "OS.release.VERSION_ID": NodeFact("OS version", "os-version", True),
    "K8s.node.kernel-version": NodeFact("kernel", "kernel", False),
    "K8s.node.os-image": NodeFact("OS image", "os-image", False),
    "K8s.node.container-runtime-version": NodeFact("container runtime", "container-runtime", False),
    "K8s.node.kubelet-version": NodeFact("kubelet", "kubelet", False),
}
"""Every measurement path a recipe may pin that is a fact of each node."""


@dataclass(frozen=True)
class Pin:
    """One thing the recipe holds every node to: an exact pin (the driver) or a constraint."""

    path: str
    expression: str
    exact: bool = False

    @property
    def what(self) -> str:
        return NODE_PATHS[self.path].what


@dataclass(frozen=True)
class Miss:
    """A value some nodes have that the pin refuses, with those nodes (sorted)."""

    value: str
    nodes: list[str]
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    pin: Pin
    checked: int
    misses: list[Miss] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.checked > 0 and not self.misses

    @property
    def nodes(self) -> list[str]:
        return sorted({n for m in self.misses for n in m.nodes})

    def message(self) -> str:
        """``driver 570.158.01 on node-001..node-016 does not match the recipe's 580.105.08``."""
        if self.checked == 0:
            return f"no node reports its {self.pin.what}"
        parts = []
        for miss in self.misses:
            where = f"{self.pin.what} {miss.value} on {node_range(miss.nodes)}"
            if self.pin.exact:
                parts.append(f"{where} does not match the recipe's {self.pin.expression}")
            elif miss.error:
                parts.append(f"{where}: {miss.error} ({self.pin.path} {self.pin.expression})")
            else:
                parts.append(f"{where} does not satisfy the recipe's {self.pin.path} {self.pin.expression}")
        return "; ".join(parts)


def pinned_driver(recipe: models.RecipeResult, cat: catalog_mod.Catalog) -> str | None:
    """The driver version the recipe's GPU Operator installs, or None (no GPU Operator, or a
    driver it does not manage)."""
    ref = recipe.component("gpu-operator")
    if ref is None:
        return None
    driver = values.component_values(ref, cat).get("driver")
    if not isinstance(driver, dict) or driver.get("enabled", True) is False or not driver.get("version"):
        return None
    return str(driver["version"])


def recipe_pins(recipe: models.RecipeResult, *, driver: str | None) -> list[Pin]:
    """The pinned driver first, then each recipe constraint on a node fact, in recipe order."""
    pins = [Pin(DRIVER_PATH, driver, exact=True)] if driver else []
    pins += [Pin(c.name, c.value) for c in recipe.constraints if c.name in NODE_PATHS]
    return pins


def _subtype(snapshot: Snapshot, kind: str, subtype: str) -> dict[str, str] | None:
    for measurement in snapshot.measurements:
        if measurement.type == kind:
            for entry in measurement.subtypes:
                if entry.subtype == subtype:
                    return {k: "" if v is None else str(v) for k, v in entry.data.items()}
    return None


def _split(node_list: str) -> list[str]:
    return [n for n in node_list.split(",") if n]


def node_values(snapshot: Snapshot, fact: NodeFact) -> dict[str, list[str]] | None:
    """Value → the nodes that have it, from the snapshot's per-node lists; None when it has none."""
    source = "os-image" if fact.fact in ("os-id", "os-version") else fact.fact
    listed = _subtype(snapshot, "NodeTopology", source)
    if listed is None:
        return None
    gpu_nodes = set(_split((_subtype(snapshot, "NodeTopology", "label") or {}).get(_GPU_NODES, "")))
    found: dict[str, set[str]] = {}
    for value, node_list in listed.items():
        if fact.fact == "os-id":
            value = nodes.os_release(value)[0]
        elif fact.fact == "os-version":
            value = nodes.os_release(value)[1]
        for node in _split(node_list):
            if not fact.gpu_only or not gpu_nodes or node in gpu_nodes:
                found.setdefault(value, set()).add(node)
    return {value: sorted(names) for value, names in sorted(found.items())}


def evaluate(pin: Pin, snapshot: Snapshot) -> Verdict | None:
    """The pin node by node; None when the snapshot has no per-node lists for it."""
    by_value = node_values(snapshot, NODE_PATHS[pin.path])
    if by_value is None:
        return None
    misses = []
    for value, names in by_value.items():
        try:
            held = value == pin.expression if pin.exact else constraints.holds(pin.expression, value)
            error = None
        except Exception as exc:  # a value that is no version cannot satisfy a version constraint
            held, error = False, str(exc)
        if not held:
            misses.append(Miss(value, names, error))
    return Verdict(pin, checked=sum(len(n) for n in by_value.values()), misses=misses)


def _numbered(name: str) -> tuple[str, int, int] | None:
    """(prefix, number, digits) of ``node-007``; None for a name not ending in digits."""
    stem = name.rstrip("0123456789")
    digits = name[len(stem) :]
    return (stem, int(digits), len(digits)) if digits else None


def _same_style(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    """Both zero-padded to one width (``node-009``, ``node-010``) or neither padded (``node-9``, ``node-10``)."""
    return a[2] == b[2] or (len(str(a[1])) == a[2] and len(str(b[1])) == b[2])


def node_range(names: Iterable[str]) -> str:
    """``node-001..node-016``, ``node-003, node-007..node-009``: consecutive numbers folded."""
    ordered = sorted(set(names), key=lambda n: (n.rstrip("0123456789"), len(n), n))
    out: list[str] = []
    i = 0
    while i < len(ordered):
        j, start = i, _numbered(ordered[i])
        while start is not None and j + 1 < len(ordered):
            nxt = _numbered(ordered[j + 1])
            if nxt is None or nxt[0] != start[0] or nxt[1] != start[1] + (j + 1 - i) or not _same_style(start, nxt):
                break
            j += 1
        out.append(ordered[i] if j == i else f"{ordered[i]}..{ordered[j]}")
        i = j + 1
    return ", ".join(out)
