"""Renders the argocd-helm chart from a plan (see the package docstring for the tree).

values.yaml and values.schema.json are dumped from data; the Helm templates are written by jinja2
with ``[[ ]]`` delimiters so that Helm's own ``{{ }}`` pass through, and they read every value
from ``.Values`` at install time, where ``toYaml``/``quote`` keep it inert.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared import __version__
from shared.bundle import _templating, hooks
from shared.bundle.plan import BundlePlan, ComponentPlan
from shared.bundle.result import BundleResult

TITLE = "Argo CD app-of-apps Helm chart"
CHART_NAME = "aicr-stack"
PLACEHOLDER_REPO = "https://github.com/YOUR-ORG/YOUR-REPO.git"
GIT = "your Git repository"
HELMIGNORE = "manifests/\nrecipe.yaml\nchecksums.txt\nREADME.md\n"


def _component_values(c: ComponentPlan) -> dict[str, Any]:
    entry: dict[str, Any] = {"enabled": True}
    if c.namespace:
        entry["namespace"] = c.namespace
    if c.has_chart:
        entry.update(repoURL=c.oci_host_path if c.is_oci else c.source, chart=c.chart, version=c.version)
    elif c.is_kustomize:
        entry.update(repoURL=c.source, path=c.path, version=c.tag)
    entry["syncWave"] = c.position
    if c.manifests:
        entry["manifests"] = f"manifests/{c.folder}"
    if c.has_chart:
        entry["values"] = c.values
    return entry


def values_document(plan: BundlePlan) -> dict[str, Any]:
    return {
        "repoURL": plan.repo or PLACEHOLDER_REPO,
        "targetRevision": "HEAD",
        "argocd": {"namespace": "argocd", "project": "default"},
        "destination": {"server": "https://kubernetes.default.svc"},
        "components": {c.name: _component_values(c) for c in plan.components},
    }


def _component_schema(c: ComponentPlan) -> dict[str, Any]:
    properties: dict[str, Any] = {"enabled": {"type": "boolean"}, "syncWave": {"type": "integer"}}
    keys = [k for k in _component_values(c) if k not in ("enabled", "syncWave")]
    for key in keys:
        properties[key] = {"type": "object"} if key == "values" else {"type": "string", "minLength": 1}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["enabled", "syncWave", *keys],
        "properties": properties,
    }


def values_schema(plan: BundlePlan) -> dict[str, Any]:
    """The JSON Schema Helm checks values against: the same keys, types and components as values.yaml."""
    text = {"type": "string", "minLength": 1}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": f"{CHART_NAME} values",
        "type": "object",
        "additionalProperties": False,
        "required": ["repoURL", "targetRevision", "argocd", "destination", "components"],
        "properties": {
            "repoURL": text,
            "targetRevision": text,
            "argocd": {
                "type": "object",
                "additionalProperties": False,
                "required": ["namespace", "project"],
                "properties": {"namespace": text, "project": text},
            },
            "destination": {
                "type": "object",
                "additionalProperties": False,
                "required": ["server"],
                "properties": {"server": text},
            },
            "components": {
                "type": "object",
                "additionalProperties": False,
                "required": [c.name for c in plan.components],
                "properties": {c.name: _component_schema(c) for c in plan.components},
            },
        },
    }


def render(plan: BundlePlan, out_dir: Path) -> BundleResult:
    """Write the chart, its values and schema, one template per component, and the manifests."""
    folder = _templating.templates_of(__file__)
    writer = _templating.Writer(out_dir, _templating.environment(folder))
    helm_templates = _templating.Writer(out_dir, _templating.environment(folder, go_delimiters=True))
    context: dict[str, Any] = {
        "plan": plan,
        "components": plan.components,
        "chart": CHART_NAME,
        "version": __version__,
        "repo": plan.repo or PLACEHOLDER_REPO,
    }
    writer.template("Chart.yaml", "Chart.yaml.j2", **context)
    writer.data("values.yaml", values_document(plan))
    writer.text("values.schema.json", json.dumps(values_schema(plan), indent=2) + "\n")
    writer.text(".helmignore", HELMIGNORE)
    translate = hooks.argocd("argocd-helm")
    for component in plan.components:
        helm_templates.template(f"templates/{component.name}.yaml", "application.yaml.gotmpl.j2", c=component)
        for manifest in component.manifests:
            writer.text(f"manifests/{component.folder}/{manifest.name}", translate(manifest).text)
    writer.template("README.md", "README.md.j2", **context)
    notes = (
        []
        if plan.repo
        else [
            f"--repo not set: pass --set repoURL=<your repository> when installing the chart "
            f"(default {PLACEHOLDER_REPO})"
        ]
    )
    return BundleResult(
        deployer="argocd-helm",
        title=TITLE,
        files=writer.written + helm_templates.written,
        notes=notes,
        steps=[
            f"Push the contents of {{output}} to the root of {plan.repo or 'your Git repository'}",
            "helm install aicr-stack {output} --namespace argocd",
        ],
    )
