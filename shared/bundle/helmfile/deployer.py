"""Renders helmfile.yaml and the per-release values from a plan (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import __version__
from shared.bundle import _templating, hooks
from shared.bundle.plan import BundlePlan, ComponentPlan
from shared.bundle.result import BundleResult

TITLE = "helmfile bundle"
MANIFESTS_SUFFIX = "-manifests"


def _ref(c: ComponentPlan, release: str) -> str:
    """How ``needs:`` names a release: ``namespace/name`` when it has a namespace."""
    return f"{c.namespace}/{release}" if c.namespace else release


def releases(plan: BundlePlan) -> list[dict[str, Any]]:
    """Every release in deployment order, with what it needs (both releases of a dependency)."""
    out: list[dict[str, Any]] = []
    for c in plan.components:
        needs: list[str] = []
        for name in c.dependencies:
            dep = plan.component(name)
            if dep.has_chart:
                needs.append(_ref(dep, dep.name))
            if dep.manifests:
                needs.append(_ref(dep, dep.name + (MANIFESTS_SUFFIX if dep.has_chart else "")))
        if c.has_chart:
            out.append(
                {
                    "name": c.name,
                    "component": c,
                    "chart": f"{c.name}/{c.chart}",
                    "version": c.version,
                    "values_file": f"./{c.folder}/values.yaml",
                    "needs": needs,
                }
            )
        if c.manifests:
            name = c.name + (MANIFESTS_SUFFIX if c.has_chart else "")
            own = [_ref(c, c.name)] if c.has_chart else needs
            out.append(
                {
                    "name": name,
                    "component": c,
                    "chart": f"./{c.folder}/manifests",
                    "version": "",
                    "values_file": "",
                    "needs": own,
                }
            )
    return out


def render(plan: BundlePlan, out_dir: Path) -> BundleResult:
    """Write helmfile.yaml, the values files and the manifests."""
    plan.refuse_kustomize("helmfile")
    writer = _templating.Writer(out_dir, _templating.environment(_templating.templates_of(__file__)))
    for c in plan.components:
        writer.component_files(c, translate=hooks.plain("helmfile"))
    context: dict[str, Any] = {
        "plan": plan,
        "components": plan.components,
        "releases": releases(plan),
        "charts": [c for c in plan.components if c.has_chart],
        "version": __version__,
    }
    writer.template("helmfile.yaml", "helmfile.yaml.j2", **context)
    writer.template("README.md", "README.md.j2", **context)
    return BundleResult(deployer="helmfile", title=TITLE, files=writer.written, steps=["cd {output}", "helmfile apply"])
