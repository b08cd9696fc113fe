"""Parity with upstream AICR v0.11.1 when reading its catalog through ``--catalog``.

Covers: every golden recipe transcript (components with name, version, chart, namespace, source,
dependencyRefs; constraints; deploymentOrder; applied and excluded overlays; criteria), every row of
the overlay matrix, the query transcripts, and the documented exit-code differences for bad input.
Upstream's nondeterministic orders (overlays of equal rank, excluded overlays) compare as sets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from tests.recipe import golden

GOLDEN_DIR = "research/aicr-golden"
UPSTREAM_CATALOG = "reference/aicr-v0.11.1/recipes"
SUCCESS_RECIPES = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "17", "18"]
COMPONENT_KEYS = ("name", "version", "chart", "namespace", "source", "dependencyRefs")


def _transcript(team_shared: Path, number: str) -> golden.Transcript:
    (path,) = sorted((team_shared / GOLDEN_DIR).glob(f"{number}-*.txt"))
    return golden.read(path)


def _argv(team_shared: Path, transcript: golden.Transcript) -> list[str]:
    inputs = team_shared / GOLDEN_DIR / "inputs"
    argv = [a.replace("inputs/", f"{inputs}/") for a in transcript.argv]
    return [argv[0], "--catalog", str(team_shared / UPSTREAM_CATALOG), *argv[1:]]


def _parse(text: str) -> Any:
    return json.loads(text) if text.lstrip().startswith("{") else yamlio.loads(text)


def _components(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: {k: c.get(k) for k in COMPONENT_KEYS} for c in doc["componentRefs"]}


@pytest.mark.parametrize("number", SUCCESS_RECIPES)
def test_recipe_matches_upstream_golden(team_shared: Path, run_cli, number: str) -> None:  # type: ignore[no-untyped-def]
    transcript = _transcript(team_shared, number)
    result = run_cli("aicr", *_argv(team_shared, transcript))
    assert result.code == 0, result.stderr
    ours, theirs = _parse(result.stdout), _parse(transcript.stdout)
    assert _components(ours) == _components(theirs)
    assert ours.get("constraints", []) == theirs.get("constraints", [])
    assert ours["deploymentOrder"] == theirs["deploymentOrder"]
    assert ours["criteria"] == theirs["criteria"]
    assert ours.get("validation") == theirs.get("validation")
    assert set(ours["metadata"]["appliedOverlays"]) == set(theirs["metadata"]["appliedOverlays"])
    assert ours["metadata"]["appliedOverlays"][:2] == theirs["metadata"]["appliedOverlays"][:2]
    assert set(ours["metadata"].get("excludedOverlays", [])) == set(theirs["metadata"].get("excludedOverlays", []))
    warnings = {
        (w["overlay"], w["constraint"], w.get("actual")) for w in ours["metadata"].get("constraintWarnings", [])
    }
    assert warnings == {
        (w["overlay"], w["constraint"], w.get("actual")) for w in theirs["metadata"].get("constraintWarnings", [])
    }
    assert ours["apiVersion"] == "aicr.run/v1alpha2"


def _matrix_rows(team_shared: Path) -> list[tuple[str, list[str], list[str], int, list[str]]]:
    rows = []
    for line in (team_shared / GOLDEN_DIR / "overlay-matrix.md").read_text().splitlines():
        match = re.match(r"^\| (\S+) \| `([^`]*)` \| ([^|]+) \| (\d+) \| ([^|]+) \|$", line)
        if match:
            name, flags, applied, count, order = match.groups()
            rows.append(
                (
                    name,
                    flags.split(),
                    [a.strip() for a in applied.split(",")],
                    int(count),
                    [o.strip() for o in order.split(",")],
                )
            )
    return rows


def test_every_overlay_of_the_upstream_matrix_resolves_as_upstream(team_shared: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    rows = _matrix_rows(team_shared)
    assert len(rows) >= 36
    for name, flags, applied, count, order in rows:
        result = run_cli("aicr", "recipe", "--catalog", str(team_shared / UPSTREAM_CATALOG), *flags, "--format", "json")
        assert result.code == 0, (name, result.stderr)
        doc = json.loads(result.stdout)
        assert doc["metadata"]["appliedOverlays"] == applied, name
        assert len(doc["componentRefs"]) == count, name
        assert doc["deploymentOrder"] == order, name


@pytest.mark.parametrize("number", ["20", "21"])
def test_query_matches_upstream_golden(team_shared: Path, run_cli, number: str) -> None:  # type: ignore[no-untyped-def]
    transcript = _transcript(team_shared, number)
    result = run_cli("aicr", *_argv(team_shared, transcript))
    assert result.code == 0, result.stderr
    assert _parse(result.stdout) == _parse(transcript.stdout)


# Upstream exits 8 for bad criteria (it wraps them as internal errors); we exit 2, as for any bad input.
@pytest.mark.parametrize(
    ("number", "expected_code"), [("12", 2), ("13", 2), ("14", 2), ("15", 2), ("16", 2), ("22", 3)]
)
def test_bad_input_exit_codes(team_shared: Path, run_cli, number: str, expected_code: int) -> None:  # type: ignore[no-untyped-def]
    transcript = _transcript(team_shared, number)
    result = run_cli("aicr", *_argv(team_shared, transcript))
    assert result.code == expected_code, result.stderr
    assert result.stdout == ""
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(error_lines) == 1 and result.stderr.splitlines()[-1] == error_lines[0]


def test_upstream_catalog_loads_with_every_field_it_carries_modelled(
    team_shared: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from shared.recipe import catalog

    cat = catalog.load_directory(team_shared / UPSTREAM_CATALOG)
    assert not [r for r in caplog.records if "unknown field" in r.getMessage()]
    tcpxo = cat.registry["gke-nccl-tcpxo"]
    assert tcpxo.manifest is not None and tcpxo.manifest.defaultNamespace == "kube-system"
    assert any(c.healthCheck is not None and c.healthCheck.assertFile for c in cat.registry.values())


def test_an_unknown_field_in_an_upstream_catalog_is_refused_with_its_line(team_shared: Path, tmp_path: Path) -> None:
    import shutil

    from shared import errors
    from shared.recipe import catalog

    copy = tmp_path / "recipes"
    shutil.copytree(team_shared / UPSTREAM_CATALOG, copy)
    registry = copy / "registry.yaml"
    text = registry.read_text(encoding="utf-8")
    registry.write_text(text.replace("    manifest:\n", "    manifests:\n", 1), encoding="utf-8")
    line = yamlio.line_of(registry.read_text(encoding="utf-8"), "components[2].manifests")
    with pytest.raises(errors.InvalidInput) as caught:
        catalog.load_directory(copy)
    assert (
        caught.value.line()
        == f"error: {registry}:{line} components[2].manifests: unknown field 'components[2].manifests'"
    )
