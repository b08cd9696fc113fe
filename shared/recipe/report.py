"""Recipe, explanation and query results rendered as yaml, json or a table."""

from __future__ import annotations

from typing import Any

from shared import output
from shared.output import Format
from shared.recipe import resolver

RECIPE_FORMATS = (Format.YAML, Format.JSON, Format.TABLE)


def recipe_text(resolution: resolver.Resolution, fmt: Format) -> str:
    doc = resolution.document()
    if fmt is Format.JSON:
        return output.to_json(doc)
    if fmt is Format.TABLE:
        return recipe_table(doc)
    return output.to_yaml(doc)


def recipe_table(doc: dict[str, Any]) -> str:
    """Components in deployment order, then constraints: what a reviewer reads first."""
    by_name = {c["name"]: c for c in doc["componentRefs"]}
    crit = ", ".join(f"{k}={v}" for k, v in doc["criteria"].items())
    lines = [f"Criteria: {crit}", f"Overlays: {', '.join(doc['metadata']['appliedOverlays'])}", ""]
    rows = []
    for step, name in enumerate(doc["deploymentOrder"], start=1):
        comp = by_name[name]
        rows.append(
            [
                step,
                name,
                comp.get("version", "-"),
                comp.get("namespace", "-"),
                comp.get("chart", "-") if comp.get("source") else "(manifests)",
                ",".join(comp.get("dependencyRefs", [])) or "-",
            ]
        )
    headers = ["#", "component", "version", "namespace", "chart", "depends on"]
    text = "\n".join(lines) + "\n" + output.render_table(headers, rows)
    if doc.get("constraints"):
        text += "\n" + output.render_table(
            ["constraint", "value"], [[c["name"], c["value"]] for c in doc["constraints"]]
        )
    return text


def explain_rows(resolution: resolver.Resolution) -> list[dict[str, Any]]:
    """One row per component field (and constraint): its value and the overlay that set it."""
    document = resolution.document()
    doc = {c["name"]: c for c in document["componentRefs"]}
    constraints = {c["name"]: c["value"] for c in document.get("constraints", [])}
    rows: list[dict[str, Any]] = []
    for name, origin in resolution.component_origin.items():
        for field, setter in origin.items():
            value: Any = doc[name]
            for part in field.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            rows.append({"component": name, "field": field, "value": value, "setBy": setter})
    for constraint, setter in resolution.constraint_origin.items():
        rows.append(
            {
                "component": "(constraint)",
                "field": constraint,
                "value": constraints[constraint],
                "setBy": setter,
            }
        )
    return rows


def explain_text(resolution: resolver.Resolution, fmt: Format) -> str:
    rows = explain_rows(resolution)
    if fmt is Format.JSON:
        return output.to_json(rows)
    if fmt is Format.YAML:
        return output.to_yaml(rows)
    return output.render_table(
        ["component", "field", "value", "set by"],
        [[r["component"], r["field"], _short(r["value"]), r["setBy"]] for r in rows],
    )


def _short(value: Any, limit: int = 60) -> str:
    """One line for a table cell: structures as compact JSON, long text cut with an ellipsis."""
    import json

    text = json.dumps(value, separators=(",", ":")) if isinstance(value, dict | list) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def query_text(value: Any, fmt: Format) -> str:
    """Scalars print plain (JSON-encoded with --format json); maps and lists as YAML or JSON."""
    if fmt is Format.JSON:
        return output.to_json(value)
    if isinstance(value, dict | list):
        return output.to_yaml(value)
    if isinstance(value, bool):
        return ("true" if value else "false") + "\n"
    return ("null" if value is None else str(value)) + "\n"
