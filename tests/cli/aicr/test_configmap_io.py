"""Recipes and criteria in ConfigMaps (``cm://NAMESPACE/NAME``), against the simulated cluster over HTTP.

Covers: ``aicr recipe -o cm://`` creates the ConfigMap with the key ``recipe.yaml`` by server-side
apply (field manager aicr), prints nothing, and ``aicr bundle --recipe cm://`` reads it back; a
second write updates it in place and keeps a key another manager (kubectl) added; ``-t json``
writes ``recipe.json`` and drops the ``recipe.yaml`` it wrote before; ``-t table`` and a missing
namespace are refused with one line and nothing written; ``--criteria cm://`` reads
``criteria.yaml``; a reader takes ``<kind>.yaml`` before upstream's ``snapshot.yaml``, and upstream's
layout (a recipe under ``snapshot.yaml``) still reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared import refs, yamlio
from shared.kube import rest
from tests.simfixtures import Kubectl

RECIPE_ARGS = ("recipe", "--service", "eks", "--accelerator", "h100", "--intent", "training")


def _configmap(api: Any, name: str, namespace: str = "default") -> dict[str, Any]:
    return rest.get(api, rest.core_path("configmaps", namespace, name))


def _create(api: Any, name: str, data: dict[str, str]) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}
    rest.create(api, rest.core_path("configmaps", "default"), body)


def test_a_recipe_is_applied_to_a_configmap_and_bundled_from_it(
    run_cli,  # type: ignore[no-untyped-def]
    sim_kubeconfig: Path,
    api_client: Any,
    tmp_path: Path,
) -> None:
    kc = ("--kubeconfig", str(sim_kubeconfig))
    expected = run_cli("aicr", *RECIPE_ARGS).stdout
    written = run_cli("aicr", *RECIPE_ARGS, "-o", "cm://default/gpu-recipe", *kc)
    assert written.code == 0, written.stderr
    assert written.stdout == ""
    cm = _configmap(api_client, "gpu-recipe")
    assert cm["data"] == {"recipe.yaml": expected, "format": "yaml"}
    assert cm["metadata"]["labels"] == {"app.kubernetes.io/name": "aicr", "app.kubernetes.io/component": "recipe"}
    assert [(m["manager"], m["operation"]) for m in cm["metadata"]["managedFields"]] == [("aicr", "Apply")]
    out = tmp_path / "bundle"
    bundled = run_cli(
        "aicr", "bundle", "--recipe", "cm://default/gpu-recipe", *kc, "--deployer", "helmfile", "-o", str(out)
    )
    assert bundled.code == 0, bundled.stderr
    assert (out / "recipe.yaml").read_text() == expected


def test_writing_again_updates_in_place_and_keeps_what_others_added(
    run_cli,  # type: ignore[no-untyped-def]
    sim_kubeconfig: Path,
    api_client: Any,
    kubectl: Kubectl,
) -> None:
    kc = ("--kubeconfig", str(sim_kubeconfig))
    assert run_cli("aicr", *RECIPE_ARGS, "-o", "cm://default/r", *kc).code == 0
    kubectl("patch", "configmap", "r", "-n", "default", "--type", "merge", "-p", '{"data":{"owner":"platform-team"}}')
    first = _configmap(api_client, "r")
    again = run_cli("aicr", "recipe", "--service", "eks", "--intent", "inference", "-o", "cm://default/r", *kc)
    assert again.code == 0, again.stderr
    cm = _configmap(api_client, "r")
    assert cm["metadata"]["uid"] == first["metadata"]["uid"]
    assert cm["data"]["owner"] == "platform-team"
    assert yamlio.loads(cm["data"]["recipe.yaml"])["criteria"]["intent"] == "inference"
    unchanged = run_cli("aicr", "recipe", "--service", "eks", "--intent", "inference", "-o", "cm://default/r", *kc)
    assert unchanged.code == 0
    assert _configmap(api_client, "r")["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]


def test_json_goes_under_recipe_json_and_replaces_the_yaml_key(
    run_cli,  # type: ignore[no-untyped-def]
    sim_kubeconfig: Path,
    api_client: Any,
) -> None:
    kc = ("--kubeconfig", str(sim_kubeconfig))
    assert run_cli("aicr", *RECIPE_ARGS, "-o", "cm://default/r", *kc).code == 0
    assert run_cli("aicr", *RECIPE_ARGS, "-t", "json", "-o", "cm://default/r", *kc).code == 0
    data = _configmap(api_client, "r")["data"]
    assert sorted(data) == ["format", "recipe.json"]
    assert data["format"] == "json"
    assert json.loads(data["recipe.json"])["kind"] == "RecipeResult"


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (
            ["-t", "table", "-o", "cm://default/r"],
            2,
            "error: cm://default/r: a ConfigMap holds the recipe as YAML or JSON, not a table: drop --format table",
        ),
        (["-o", "cm://nowhere/r"], 3, "error: "),
        (["-o", "cm://default/Bad_Name"], 2, "error: cm://default/Bad_Name: expected cm://NAMESPACE/NAME"),
    ],
    ids=["table", "missing-namespace", "bad-name"],
)
def test_a_configmap_that_cannot_be_written_is_one_line_and_nothing_is_created(
    run_cli,  # type: ignore[no-untyped-def]
    sim_kubeconfig: Path,
    api_client: Any,
    args: list[str],
    code: int,
    expected: str,
) -> None:
    result = run_cli("aicr", *RECIPE_ARGS, *args, "--kubeconfig", str(sim_kubeconfig))
    assert result.code == code, result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(expected), result.stderr
    if code == 3:
        assert "nowhere" in result.stderr
    names = [cm["metadata"]["name"] for cm in rest.list_items(api_client, rest.core_path("configmaps", "default"))]
    assert "r" not in names


def test_criteria_are_read_from_a_configmap(run_cli, sim_kubeconfig: Path, api_client: Any) -> None:  # type: ignore[no-untyped-def]
    _create(api_client, "crit", {"criteria.yaml": "spec:\n  service: eks\n  intent: training\n"})
    result = run_cli("aicr", "recipe", "--criteria", "cm://default/crit", "--kubeconfig", str(sim_kubeconfig))
    assert result.code == 0, result.stderr
    assert yamlio.loads(result.stdout)["criteria"]["intent"] == "training"


def test_each_kind_reads_its_own_key_and_upstream_layout_still_reads(sim_kubeconfig: Path, api_client: Any) -> None:
    _create(api_client, "both", {"recipe.yaml": "kind: RecipeResult\n", "snapshot.yaml": "kind: Snapshot\n"})
    _create(api_client, "upstream", {"snapshot.yaml": "kind: RecipeResult\n", "format": "yaml"})

    def factory() -> Any:
        return api_client

    assert refs.read_text("cm://default/both", api=factory, kind="recipe") == (
        "kind: RecipeResult\n",
        "cm://default/both recipe.yaml",
    )
    assert refs.read_text("cm://default/both", api=factory, kind="snapshot") == (
        "kind: Snapshot\n",
        "cm://default/both snapshot.yaml",
    )
    assert refs.read_text("cm://default/upstream", api=factory, kind="recipe")[0] == "kind: RecipeResult\n"


def test_a_document_larger_than_a_configmap_holds_is_refused_before_the_server_is_asked(api_client: Any) -> None:
    from shared import errors

    big = "nodes:\n" + "- name: node-00000\n" * (refs.CONFIGMAP_MAX_BYTES // 18)
    with pytest.raises(errors.InvalidInput) as caught:
        refs.write_text("cm://default/huge-snapshot", big, api=lambda: api_client, component="snapshot")
    assert caught.value.where == "cm://default/huge-snapshot"
    assert "does not fit a ConfigMap" in str(caught.value)
    names = [cm["metadata"]["name"] for cm in rest.list_items(api_client, rest.core_path("configmaps", "default"))]
    assert "huge-snapshot" not in names
    # the size is the real server's: the simulated cluster refuses the same object with 422
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "huge-snapshot", "namespace": "default"},
        "data": {"snapshot.yaml": big},
    }
    with pytest.raises(errors.ToolError):
        rest.create(api_client, rest.core_path("configmaps", "default"), body)
