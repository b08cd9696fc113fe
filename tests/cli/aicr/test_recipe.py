"""``aicr recipe`` and ``aicr query`` end to end through the entry wrapper.

Covers: each bad input of the issue (exit 2, one stderr line, nothing written), -o atomic file
output, the three formats, --explain, criteria file with flag overrides, query scalars, maps,
JSON and bad selectors (exit 3), and the global --debug traceback switch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from tests.recipe import minicatalog


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


def _only_error_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_recipe_writes_the_file_atomically_and_prints_nothing(run_cli, cat_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "recipe.yaml"
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "-o", str(target))
    assert result.code == 0, result.stderr
    assert result.stdout == ""
    doc = yamlio.load_file(target)
    assert doc["apiVersion"] == "aicr.run/v1alpha2" and doc["kind"] == "RecipeResult"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_recipe_output_is_byte_identical_across_runs(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    runs = [run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks").stdout for _ in range(3)]
    assert runs[0] and runs[0] == runs[1] == runs[2]


def test_json_and_table_formats(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    as_json = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "--format", "json")
    assert json.loads(as_json.stdout)["deploymentOrder"] == ["alpha", "beta", "gamma"]
    table = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "-t", "table")
    assert table.code == 0
    lines = table.stdout.splitlines()
    assert lines[0] == "Criteria: service=eks, accelerator=any, intent=any, os=any, platform=any"
    assert lines[3].split() == ["#", "COMPONENT", "VERSION", "NAMESPACE", "CHART", "DEPENDS", "ON"]
    assert lines[4].split() == ["1", "alpha", "1.1.0", "ns-alpha", "alpha", "-"]


def test_explain_prints_who_set_each_field(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(
        "aicr",
        "recipe",
        "--catalog",
        str(cat_dir),
        "--service",
        "eks",
        "--intent",
        "training",
        "--explain",
        "-t",
        "json",
    )
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert {"component": "alpha", "field": "version", "value": "1.1.0", "setBy": "eks"} in rows
    assert {
        "component": "alpha",
        "field": "valuesFile",
        "value": "components/alpha/values-train.yaml",
        "setBy": "eks-training",
    } in rows


@pytest.mark.parametrize(
    ("fmt", "load"),
    [([], yamlio.load_file), (["-t", "json"], lambda p: json.loads(p.read_text()))],
    ids=["yaml", "json"],
)
def test_explain_with_an_output_writes_the_recipe_there_and_the_explanation_to_stderr(
    run_cli,  # type: ignore[no-untyped-def]
    cat_dir: Path,
    tmp_path: Path,
    fmt: list[str],
    load: Any,
) -> None:
    target = tmp_path / "r.yaml"
    args = ["recipe", "--catalog", str(cat_dir), "--service", "eks", "--intent", "training", "--explain", *fmt]
    result = run_cli("aicr", *args, "-o", str(target))
    assert result.code == 0, result.stderr
    assert result.stdout == ""
    plain = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "--intent", "training", *fmt)
    assert target.read_text() == plain.stdout
    assert load(target)["kind"] == "RecipeResult"
    lines = result.stderr.splitlines()
    assert lines[0].split() == ["COMPONENT", "FIELD", "VALUE", "SET", "BY"]
    assert ["alpha", "valuesFile", "components/alpha/values-train.yaml", "eks-training"] in [ln.split() for ln in lines]


def test_flags_override_the_criteria_file(run_cli, cat_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    crit = tmp_path / "c.yaml"
    crit.write_text("kind: RecipeCriteria\napiVersion: aicr.run/v1alpha2\nspec:\n  service: aks\n  intent: training\n")
    result = run_cli(
        "aicr", "recipe", "--catalog", str(cat_dir), "--criteria", str(crit), "--service", "eks", "--format", "json"
    )
    doc = json.loads(result.stdout)
    assert doc["criteria"]["service"] == "eks" and doc["criteria"]["intent"] == "training"
    assert doc["metadata"]["appliedOverlays"] == ["base", "eks", "eks-training"]


BAD_INPUT = [
    ("missing-criteria-file", ["--criteria", "{tmp}/none.yaml"], "error: {tmp}/none.yaml: file does not exist"),
    ("invalid-yaml", ["--criteria", "{tmp}/broken.yaml"], "error: {tmp}/broken.yaml:2: invalid YAML: "),
    (
        "unknown-value",
        ["--service", "ecs"],
        "error: --service: invalid service 'ecs': allowed values are aks, eks, gke, kind, oke",
    ),
    (
        "bad-format",
        ["--service", "eks", "--format", "xml"],
        "error: --format: unknown output format 'xml', valid formats are: yaml, json, table",
    ),
    ("repeated-flag", ["--service", "eks", "--service", "gke"], "error: flag --service can only be specified once"),
    ("repeated-flag-equals", ["--service=eks", "--service=gke"], "error: flag --service can only be specified once"),
    ("no-criteria", [], "error: no criteria given: "),
    ("negative-nodes", ["--service", "eks", "--nodes", "-2"], "error: --nodes: invalid nodes count -2 (must be >= 0)"),
]


@pytest.mark.parametrize(("args", "expected"), [(a, e) for _, a, e in BAD_INPUT], ids=[n for n, _, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    run_cli,
    cat_dir: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
    args: list[str],
    expected: str,
) -> None:
    (tmp_path / "broken.yaml").write_text("spec:\n  service: [eks\n")
    target = tmp_path / "out" / "recipe.yaml"
    target.parent.mkdir()
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), *argv, "-o", str(target))
    assert result.code == 2
    assert _only_error_line(result.stderr).startswith(expected.replace("{tmp}", str(tmp_path)))
    assert list(target.parent.iterdir()) == []


def test_a_broken_catalog_exits_2_and_writes_nothing(run_cli, cat_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (cat_dir / "overlays" / "eks.yaml").write_text((cat_dir / "overlays" / "eks.yaml").read_text() + "extra: 1\n")
    target = tmp_path / "r.yaml"
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "-o", str(target))
    assert result.code == 2
    assert "unknown field 'extra'" in _only_error_line(result.stderr)
    assert not target.exists()


def test_debug_adds_a_traceback(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "--debug", "recipe", "--catalog", str(cat_dir), "--service", "ecs")
    assert result.code == 2
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: --service: invalid service")


@pytest.mark.parametrize(
    ("selector", "fmt", "expected"),
    [
        ("components.alpha.values.replicas", "yaml", "3\n"),
        ("components.alpha.version", "yaml", "1.1.0\n"),
        ("components.alpha.values.image", "yaml", "tag: v1\n"),
        ("components.alpha.values.list", "json", "[\n  9\n]\n"),
        ("deploymentOrder.0", "yaml", "alpha\n"),
        ("criteria.nodes", "json", "0\n"),
    ],
    ids=["scalar", "version", "map-as-yaml", "list-as-json", "list-index", "scalar-json"],
)
def test_query_prints_scalars_plain_and_trees_as_documents(
    run_cli,
    cat_dir: Path,
    selector: str,  # type: ignore[no-untyped-def]
    fmt: str,
    expected: str,
) -> None:
    result = run_cli(
        "aicr",
        "query",
        "--catalog",
        str(cat_dir),
        "--service",
        "eks",
        "--intent",
        "training",
        "--selector",
        selector,
        "--format",
        fmt,
    )
    assert result.code == 0, result.stderr
    assert result.stdout == expected


def test_a_bad_selector_exits_3_naming_the_failing_part(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(
        "aicr",
        "query",
        "--catalog",
        str(cat_dir),
        "--service",
        "eks",
        "--selector",
        "components.alpha.values.nope.deeper",
    )
    assert result.code == 3
    assert _only_error_line(result.stderr) == (
        "error: selector 'components.alpha.values.nope.deeper': key 'nope' not found under "
        "components.alpha.values; available keys: a, b, image, list, replicas"
    )


UNMATCHED = [
    (
        "nothing-but-base",
        ["--service", "aks", "--intent", "training"],
        "criteria matched no overlay: service=aks, intent=training (the recipe uses base only)",
    ),
    (
        "one-of-two",
        ["--service", "eks", "--intent", "inference"],
        "criteria matched no overlay: intent=inference (the recipe uses base, eks only)",
    ),
    (
        "open-field-hint",
        ["--intent", "training"],
        "criteria matched no overlay: intent=training (the recipe uses base only); "
        "with service=eks it would also match eks-training",
    ),
]


@pytest.mark.parametrize(("args", "expected"), [(a, e) for _, a, e in UNMATCHED], ids=[n for n, _, _ in UNMATCHED])
def test_criteria_that_match_no_overlay_are_named_on_stderr(
    run_cli,  # type: ignore[no-untyped-def]
    cat_dir: Path,
    args: list[str],
    expected: str,
) -> None:
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), *args)
    assert result.code == 0, result.stderr
    assert yamlio.loads(result.stdout)["kind"] == "RecipeResult"
    assert result.stderr.splitlines() == [f"[aicr] warning: {expected}"]


def test_criteria_that_all_chose_an_overlay_give_no_warning(run_cli, cat_dir: Path) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "recipe", "--catalog", str(cat_dir), "--service", "eks", "--intent", "training")
    assert result.code == 0
    assert result.stderr == ""


def test_the_shipped_catalog_says_gke_needs_os_cos(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("aicr", "recipe", "--service", "gke", "--accelerator", "h100", "--intent", "training")
    assert result.code == 0
    assert result.stderr.splitlines() == [
        "[aicr] warning: criteria matched no overlay: service=gke, accelerator=h100, intent=training "
        "(the recipe uses base, monitoring-hpa only); "
        "with os=cos it would also match gke-cos, gke-cos-training, h100-gke-cos-training"
    ]


def test_criteria_a_snapshot_detected_name_the_overlays_its_constraints_excluded(run_cli, team_shared: Path) -> None:  # type: ignore[no-untyped-def]
    snapshot = team_shared / "research/aicr-golden/inputs/snapshot-old-k8s-gb200.yaml"
    result = run_cli("aicr", "recipe", "--snapshot", str(snapshot), "--intent", "training")
    assert result.code == 0
    assert result.stderr.splitlines()[-1] == (
        "[aicr] warning: criteria matched no overlay: accelerator=gb200, os=ubuntu "
        "(the recipe uses base, monitoring-hpa, eks, eks-training only); "
        "the snapshot's constraints excluded gb200-eks-training, gb200-eks-ubuntu-training"
    )
