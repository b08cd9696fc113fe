"""``nvsentinel manifests`` and ``nvcrectl manifests`` applied, as the guides say, to a fresh cluster.

Covers: the output piped to the pinned kubectl's ``apply -f -`` on a fresh simulated cluster
creates every object without one error (the release's Namespace comes first, then any other an
object is placed in; every CRD comes before any object of its group), for the default and a
chosen namespace;
``--create-namespace=false`` leaves the Namespace out (and kubectl then fails as it did before
the Namespace was emitted); a value other than true or false is refused with exit 2.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared import yamlio

DEFAULT_NAMESPACE = {"nvsentinel": "nvsentinel", "nvcrectl": "nvcre"}
CONTROLLER = {"nvsentinel": "nvsentinel-controller", "nvcrectl": "nvcre-controller"}


def _group(api_version: str) -> str:
    return api_version.split("/")[0] if "/" in api_version else ""


@pytest.mark.parametrize("program", ["nvsentinel", "nvcrectl"])
@pytest.mark.parametrize("args", [[], ["-n", "gpu-ops"]], ids=["default", "chosen"])
def test_the_output_applies_to_a_fresh_cluster_without_an_error(
    program: str, args: list[str], run_cli: Any, kubectl: Any
) -> None:
    printed = run_cli(program, "manifests", *args)
    assert printed.code == 0, printed.stderr
    namespace = args[1] if args else DEFAULT_NAMESPACE[program]
    objects = yamlio.loads_all(printed.stdout)
    assert (objects[0]["kind"], objects[0]["metadata"]["name"]) == ("Namespace", namespace)
    placed = {o["metadata"].get("namespace") for o in objects} - {None}
    namespaces = [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"]
    assert set(namespaces) == placed | {namespace}
    assert [o["kind"] for o in objects[: len(namespaces)]] == ["Namespace"] * len(namespaces)
    crd_groups = {o["spec"]["group"]: i for i, o in enumerate(objects) if o["kind"] == "CustomResourceDefinition"}
    assert crd_groups, "the program ships its CRDs"
    for index, obj in enumerate(objects):
        group = _group(obj["apiVersion"])
        assert group not in crd_groups or crd_groups[group] < index, f"{obj['kind']} before its CRD"
    applied = kubectl("apply", "-f", "-", input=printed.stdout, check=False)
    assert (applied.returncode, applied.stderr) == (0, ""), applied.stderr
    lines = applied.stdout.splitlines()
    assert lines[: len(namespaces)] == [f"namespace/{n} created" for n in namespaces]
    assert len(lines) == len(objects) and all(line.endswith(" created") for line in lines), lines
    deployments = kubectl("get", "deployments", "-n", namespace, "-o", "name").stdout.split()
    assert deployments == [f"deployment.apps/{CONTROLLER[program]}"]


def test_without_the_namespace_a_fresh_cluster_refuses_the_namespaced_objects(run_cli: Any, kubectl: Any) -> None:
    printed = run_cli("nvcrectl", "manifests", "--create-namespace=false")
    assert printed.code == 0, printed.stderr
    assert all(o["kind"] != "Namespace" for o in yamlio.loads_all(printed.stdout))
    applied = kubectl("apply", "-f", "-", input=printed.stdout, check=False)
    assert applied.returncode != 0
    assert 'namespaces "nvcre" not found' in applied.stderr


def test_a_create_namespace_value_other_than_true_or_false_is_refused(run_cli: Any) -> None:
    refused = run_cli("nvsentinel", "manifests", "--create-namespace=maybe")
    assert (refused.code, refused.stdout) == (2, "")
    assert refused.stderr == "error: --create-namespace: must be true or false, got 'maybe'\n"
