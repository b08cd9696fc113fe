"""Renders the argocd deployer's files from a plan (see the package docstring for the tree)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import __version__
from shared.bundle import _templating, hooks
from shared.bundle.plan import BundlePlan
from shared.bundle.result import BundleResult

TITLE = "Argo CD applications"
PLACEHOLDER_REPO = "https://github.com/YOUR-ORG/YOUR-REPO.git"
REVISION = "HEAD"
GIT = "your Git repository"
ARGOCD_NAMESPACE = "argocd"
APP_OF_APPS = "nvidia-stack"


def render(plan: BundlePlan, out_dir: Path) -> BundleResult:
    """Write one Application per component, their values and manifests, and the app-of-apps."""
    writer = _templating.Writer(out_dir, _templating.environment(_templating.templates_of(__file__)))
    context: dict[str, Any] = {
        "plan": plan,
        "components": plan.components,
        "repo": plan.repo or PLACEHOLDER_REPO,
        "revision": REVISION,
        "argocd_namespace": ARGOCD_NAMESPACE,
        "app_of_apps": APP_OF_APPS,
        "version": __version__,
    }
    for component in plan.components:
        writer.component_files(component, translate=hooks.argocd("argocd"))
        writer.template(f"{component.folder}/application.yaml", "application.yaml.j2", c=component, **context)
    writer.template("app-of-apps.yaml", "app-of-apps.yaml.j2", **context)
    writer.template("README.md", "README.md.j2", **context)
    notes = (
        []
        if plan.repo
        else [
            f"--repo not set: replace {PLACEHOLDER_REPO} in every application.yaml and app-of-apps.yaml before applying"
        ]
    )
    return BundleResult(
        deployer="argocd",
        title=TITLE,
        files=writer.written,
        notes=notes,
        steps=[
            f"Push the contents of {{output}} to the root of {plan.repo or 'your Git repository'}",
            "kubectl apply -f {output}/app-of-apps.yaml",
        ],
    )
