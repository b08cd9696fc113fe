"""Renders the helm deployer's files from a plan (see the package docstring for the tree)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import __version__
from shared.bundle import _templating
from shared.bundle.plan import BundlePlan
from shared.bundle.result import BundleResult

TITLE = "Helm bundle"


def render(plan: BundlePlan, out_dir: Path) -> BundleResult:
    """Write scripts, values and manifests below ``out_dir``."""
    writer = _templating.Writer(out_dir, _templating.environment(_templating.templates_of(__file__)))
    context: dict[str, Any] = {
        "plan": plan,
        "components": plan.components,
        "total": len(plan.components),
        "version": __version__,
    }
    for component in plan.components:
        writer.component_files(component)
        writer.template(f"{component.folder}/install.sh", "install.sh.j2", executable=True, c=component, **context)
        writer.template(f"{component.folder}/uninstall.sh", "uninstall.sh.j2", executable=True, c=component, **context)
    writer.template("deploy.sh", "deploy.sh.j2", executable=True, **context)
    writer.template("undeploy.sh", "undeploy.sh.j2", executable=True, **context)
    writer.template("README.md", "README.md.j2", **context)
    return BundleResult(deployer="helm", title=TITLE, files=writer.written, steps=["cd {output}", "./deploy.sh"])
