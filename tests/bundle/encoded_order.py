"""Reading the dependency order back out of a rendered bundle, and checking it against the recipe.

Each deployer encodes order its own way (script order, sync waves, dependsOn, needs); each reader
below recovers it from the files alone, and ``check`` asserts it respects every dependency of the
plan, transitively, with no dangling reference and no cycle.
"""

from __future__ import annotations

import re
from pathlib import Path

from shared import yamlio
from shared.bundle.plan import BundlePlan


def _ancestors(plan: BundlePlan, name: str) -> set[str]:
    seen: set[str] = set()
    pending = list(plan.component(name).dependencies)
    while pending:
        dep = pending.pop()
        if dep not in seen:
            seen.add(dep)
            pending.extend(plan.component(dep).dependencies)
    return seen


def _closure(graph: dict[str, list[str]], start: str) -> set[str]:
    seen: set[str] = set()
    pending = list(graph[start])
    while pending:
        node = pending.pop()
        assert node in graph, f"dangling reference to {node}"
        if node not in seen:
            seen.add(node)
            pending.extend(graph[node])
    assert start not in seen, f"cycle through {start}"
    return seen


def _check_positions(plan: BundlePlan, position: dict[str, int]) -> None:
    assert set(position) == {c.name for c in plan.components}
    for c in plan.components:
        for dep in _ancestors(plan, c.name):
            assert position[dep] < position[c.name], (dep, c.name)


def _check_graph(plan: BundlePlan, graph: dict[str, list[str]], owner: dict[str, str]) -> None:
    """``graph``: object → objects it waits for; ``owner``: object → component. Every object must
    (transitively) wait for every object of every ancestor component that has one."""
    objects: dict[str, set[str]] = {}
    for obj, component in owner.items():
        objects.setdefault(component, set()).add(obj)
    for obj, component in owner.items():
        waits = _closure(graph, obj)
        for ancestor in _ancestors(plan, component):
            assert objects.get(ancestor, set()) <= waits, (obj, ancestor)


def check(plan: BundlePlan, deployer: str, root: Path) -> None:
    if deployer == "helm":
        order = re.findall(r"^\"\$\{HERE\}/\"\d+-([a-z0-9-]+)/install\.sh$", (root / "deploy.sh").read_text(), re.M)
        _check_positions(plan, {name: i for i, name in enumerate(order)})
        undo = re.findall(r"^\"\$\{HERE\}/\"\d+-([a-z0-9-]+)/uninstall\.sh$", (root / "undeploy.sh").read_text(), re.M)
        assert undo == list(reversed(order))
    elif deployer == "argocd":
        apps = [yamlio.load_file(p) for p in root.glob("*/application.yaml")]
        _check_positions(
            plan,
            {a["metadata"]["name"]: int(a["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]) for a in apps},
        )
    elif deployer == "argocd-helm":
        components = yamlio.load_file(root / "values.yaml")["components"]
        _check_positions(plan, {name: c["syncWave"] for name, c in components.items()})
    elif deployer == "flux":
        objects = [yamlio.load_file(root / rel) for rel in yamlio.load_file(root / "kustomization.yaml")["resources"]]
        for kind in ("HelmRelease", "Kustomization"):
            chosen = [o for o in objects if o["kind"] == kind]
            graph = {o["metadata"]["name"]: [d["name"] for d in o["spec"].get("dependsOn", [])] for o in chosen}
            _check_graph(
                plan,
                graph,
                {name: name.removesuffix("-manifests") if kind == "Kustomization" else name for name in graph},
            )
    elif deployer == "helmfile":
        releases = yamlio.load_file(root / "helmfile.yaml")["releases"]

        def key(r: dict[str, str]) -> str:
            return f"{r['namespace']}/{r['name']}" if "namespace" in r else r["name"]

        graph = {key(r): list(r.get("needs", [])) for r in releases}
        _check_graph(plan, graph, {key(r): r["name"].removesuffix("-manifests") for r in releases})
    else:
        raise AssertionError(f"no order reader for {deployer}")
