"""Renders the flux deployer's files from a plan (see the package docstring for the tree)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from shared import __version__
from shared.bundle import _templating, hooks
from shared.bundle.plan import BundlePlan, ComponentPlan
from shared.bundle.result import BundleResult

TITLE = "Flux bundle"
FLUX_NAMESPACE = "flux-system"
GIT_SOURCE = "flux-system"


def manifests_name(c: ComponentPlan) -> str:
    return f"{c.name}-manifests"


def nearest(plan: BundlePlan, c: ComponentPlan, has: Callable[[ComponentPlan], bool]) -> list[str]:
    """The dependencies of ``c`` that own an object of the wanted kind, looking through those that
    do not (a release cannot wait for a manifest-only component, but can for what it waits for)."""
    found: list[str] = []
    pending = list(c.dependencies)
    seen: set[str] = set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        dep = plan.component(name)
        if has(dep):
            found.append(name)
        else:
            pending.extend(dep.dependencies)
    return sorted(found, key=lambda n: plan.component(n).position)


def render(plan: BundlePlan, out_dir: Path) -> BundleResult:
    """Write sources, HelmReleases, manifest Kustomizations and the kustomization.yaml listing them."""
    plan.refuse_kustomize("flux")
    writer = _templating.Writer(out_dir, _templating.environment(_templating.templates_of(__file__)))
    context: dict[str, Any] = {
        "plan": plan,
        "components": plan.components,
        "namespace": FLUX_NAMESPACE,
        "git_source": GIT_SOURCE,
        "version": __version__,
    }
    resources: list[str] = []
    translate = hooks.plain("flux")
    for c in plan.components:
        if c.has_chart:
            writer.template(f"{c.folder}/source.yaml", "source.yaml.j2", c=c, **context)
            writer.template(
                f"{c.folder}/helmrelease.yaml",
                "helmrelease.yaml.j2",
                c=c,
                depends_on=nearest(plan, c, lambda d: d.has_chart),
                **context,
            )
            resources += [f"{c.folder}/source.yaml", f"{c.folder}/helmrelease.yaml"]
        if c.manifests:
            for manifest in c.manifests:
                writer.text(f"{c.folder}/manifests/{manifest.name}", translate(manifest).text)
            writer.template(
                f"{c.folder}/manifests/kustomization.yaml", "manifests-kustomization.yaml.j2", c=c, **context
            )
            writer.template(
                f"{c.folder}/manifests-sync.yaml",
                "manifests-sync.yaml.j2",
                c=c,
                name=manifests_name(c),
                depends_on=[manifests_name(plan.component(n)) for n in nearest(plan, c, lambda d: bool(d.manifests))],
                **context,
            )
            resources.append(f"{c.folder}/manifests-sync.yaml")
    writer.template("kustomization.yaml", "kustomization.yaml.j2", resources=resources, **context)
    writer.template("README.md", "README.md.j2", **context)
    return BundleResult(
        deployer="flux",
        title=TITLE,
        files=writer.written,
        steps=[
            "Push the contents of {output} to the root of the repository Flux syncs "
            f"(GitRepository {FLUX_NAMESPACE}/{GIT_SOURCE})",
            "kubectl apply -k {output}   (or let a Flux Kustomization reconcile the folder)",
        ],
    )
