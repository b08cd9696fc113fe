"""The argocd-helm chart for the seed recipe.

Covers: Chart.yaml valid against SchemaStore's chart schema; values.yaml valid against the
chart's own values.schema.json (itself a valid draft-07 schema) and refused by it when a key is
misspelt; every template rendered with the chart's values giving an Application valid against Argo
CD's CRD, with its sync wave; a component switched off in values rendering nothing; the manifests
and the .helmignore that keeps them out of the chart.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema

from shared import yamlio
from tests.bundle import schemas
from tests.bundle.argocd_helm import gotemplate


def test_chart_yaml_validates_against_schemastore(seed_bundles: dict[str, Path], team_shared: Path) -> None:
    chart = yamlio.load_file(seed_bundles["argocd-helm"] / "Chart.yaml")
    assert schemas.json_schema_errors(team_shared, "schemastore-chart.json", chart) == []
    assert chart["apiVersion"] == "v2"


def test_values_validate_against_the_generated_schema_which_refuses_a_typo(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["argocd-helm"]
    schema = json.loads((root / "values.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    values = yamlio.load_file(root / "values.yaml")
    assert list(jsonschema.Draft7Validator(schema).iter_errors(values)) == []
    broken = copy.deepcopy(values)
    broken["components"]["gpu-operator"]["enabeld"] = False
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken)) != []


def test_every_template_renders_an_application_valid_against_the_crd(
    seed_bundles: dict[str, Path], seed_recipe: Path, team_shared: Path
) -> None:
    root = seed_bundles["argocd-helm"]
    values = yamlio.load_file(root / "values.yaml")
    order = yamlio.load_file(seed_recipe)["deploymentOrder"]
    assert sorted(p.stem for p in (root / "templates").iterdir()) == sorted(order)
    for position, name in enumerate(order, start=1):
        app = yamlio.loads(gotemplate.render((root / "templates" / f"{name}.yaml").read_text(), values))
        assert schemas.crd_errors(team_shared, app) == [], name
        assert app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == str(position)
        if "values" in values["components"][name]:
            assert app["spec"]["sources"][0]["helm"]["valuesObject"] == values["components"][name]["values"]


def test_a_component_switched_off_in_values_renders_nothing(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["argocd-helm"]
    values = yamlio.load_file(root / "values.yaml")
    values["components"]["gpu-operator"]["enabled"] = False
    assert gotemplate.render((root / "templates" / "gpu-operator.yaml").read_text(), values) == ""


def test_manifests_sit_outside_the_chart_and_are_a_source_of_their_application(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["argocd-helm"]
    values = yamlio.load_file(root / "values.yaml")
    folder = values["components"]["gpu-operator"]["manifests"]
    assert (root / folder / "dcgm-exporter.yaml").is_file()
    assert "manifests/" in (root / ".helmignore").read_text().splitlines()
