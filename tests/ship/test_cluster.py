"""The rendered objects, accepted by a cluster: the simulated one through the official client, and
``kubectl apply --dry-run=server`` against it.

Covers: every object of the chart (all components on) is created with the ``kubernetes`` client's
generic ``create_from_dict`` and reads back with its spec intact; each program's ``manifests``
output passes ``kubectl apply --dry-run=server -f -`` (CRDs first, then the rest, as on a real
cluster) and creates nothing; applied for real in one stream (as the docs show), the workloads
exist; a second apply changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.chart import manifests
from shared.kube import rest
from tests.simfixtures import Kubectl

NS = "dsx"
ALL_ON = ("monitors.csp.enabled=true",)


def _namespaces(api_client: Any, objects: list[dict[str, Any]]) -> None:
    """The release namespace and every other one the objects go to (the lifecycle providers')."""
    for name in sorted({NS} | {o["metadata"].get("namespace") or NS for o in objects} - {"default"}):
        rest.create(
            api_client,
            rest.core_path("namespaces"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )


def test_every_object_is_created_through_the_official_client_and_reads_back(sim: Any, api_client: Any) -> None:
    from kubernetes import client as k8s
    from kubernetes import utils

    objects = manifests.render(manifests.Request(set_values=ALL_ON, namespace=NS))
    _namespaces(api_client, objects)
    for obj in objects:
        utils.create_from_dict(api_client, obj)
    apps = k8s.AppsV1Api(api_client)
    for obj in objects:
        if obj["kind"] == "Deployment":
            got = apps.read_namespaced_deployment(obj["metadata"]["name"], NS)
        elif obj["kind"] == "DaemonSet":
            got = apps.read_namespaced_daemon_set(obj["metadata"]["name"], NS)
        else:
            continue
        # The server fills in its defaults (terminationMessagePath, fieldRef.apiVersion, ...);
        # everything the chart wrote must read back as written.
        stored = api_client.sanitize_for_serialization(got.spec.template.spec)["containers"]
        assert _within(obj["spec"]["template"]["spec"]["containers"], stored)
    rbac = k8s.RbacAuthorizationV1Api(api_client)
    role = rbac.read_cluster_role("nvsentinel-controller")
    assert role.rules[0].resources == ["nodes"]
    served = k8s.ApiextensionsV1Api(api_client).list_custom_resource_definition()
    assert {c.metadata.name for c in served.items} >= {
        o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition"
    }


def _within(written: Any, stored: Any) -> bool:
    """``written`` is part of ``stored``: every key it has, with the same value, at every depth."""
    if isinstance(written, dict):
        return isinstance(stored, dict) and all(k in stored and _within(v, stored[k]) for k, v in written.items())
    if isinstance(written, list):
        return isinstance(stored, list) and len(written) == len(stored) and all(map(_within, written, stored))
    return bool(written == stored)


def _split(text: str) -> tuple[str, str]:
    """(the CRDs, everything else) as two YAML streams: a CRD must exist before kinds that use it."""
    docs = yamlio.loads_all(text)
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    rest_ = [d for d in docs if d["kind"] != "CustomResourceDefinition"]
    return yamlio.dumps_all(crds), yamlio.dumps_all(rest_)


@pytest.mark.parametrize("program", ["nvsentinel", "nvcrectl"])
def test_manifests_pass_kubectl_server_side_dry_run_and_apply_cleanly(
    program: str, kubectl: Kubectl, api_client: Any, run_cli: Any, tmp_path: Path
) -> None:
    result = run_cli(program, "manifests", "-n", NS, "--set", ",".join(ALL_ON))
    assert result.code == 0, result.stderr
    _namespaces(api_client, yamlio.loads_all(result.stdout))
    crds, others = _split(result.stdout)
    dry = kubectl("apply", "--dry-run=server", "-f", "-", input=crds)
    assert "(server dry run)" in dry.stdout
    assert kubectl("get", "crd", "-o", "name").stdout.strip() == ""  # a dry run creates nothing
    kubectl("apply", "-f", "-", input=crds)  # the rest's dry run needs them (a real apply takes one stream)
    dry = kubectl("apply", "--dry-run=server", "-f", "-", input=others)
    lines = dry.stdout.strip().splitlines()
    assert len(lines) == len(yamlio.loads_all(others)) and all(line.endswith("(server dry run)") for line in lines)
    assert kubectl("get", "deployments", "-n", NS, "-o", "name").stdout.strip() == ""
    kubectl("apply", "-f", "-", input=result.stdout)
    expected = {
        "nvsentinel": ["deployment.apps/nvsentinel-controller"],
        "nvcrectl": ["deployment.apps/nvcre-controller"],
    }[program]
    assert kubectl("get", "deployments", "-n", NS, "-o", "name").stdout.split() == expected
    again = kubectl("apply", "-f", "-", input=result.stdout)
    assert all(line.endswith(" unchanged") for line in again.stdout.strip().splitlines()), again.stdout
