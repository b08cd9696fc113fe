"""``nvsentinel validation list`` and ``events list`` with an object today's model cannot read.

Covers: a ValidationRequest, and a HealthEvent, stored under a looser CRD is skipped with one
warning naming it and its first problem (both were dropped without a word before), the readable
ones are listed, exit 0; ``--strict`` exits 1 with the same output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.nvsentinel.test_commands import EVENT

CRD = "validationrequests.nvsentinel.nvidia.com"
KIND = "apiVersion: nvsentinel.nvidia.com/v1alpha1, kind: ValidationRequest"
GOOD = f"{{{KIND}, metadata: {{name: vr-1}}, spec: {{nodes: [{{name: gpu-node-1}}]}}}}"
BAD = f"{{{KIND}, metadata: {{name: vr-old}}, spec: {{nodes: oops}}}}"
WARNING = "warning: skipping validationrequest vr-old: spec.nodes: Input should be a valid list\n"


@pytest.fixture()
def cluster(run_cli: Any, kubectl: Any, sim_kubeconfig: Path) -> Path:
    assert run_cli("nvsentinel", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    kubectl("apply", "-f", "-", input=GOOD)
    crd = json.loads(kubectl("get", "crd", CRD, "-o", "json").stdout)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    kubectl("replace", "-f", "-", input=json.dumps(crd))
    kubectl("apply", "-f", "-", input=BAD)
    assert run_cli("nvsentinel", "crds", "install", "-k", str(sim_kubeconfig)).code == 0  # today's CRD again
    return sim_kubeconfig


def test_an_unreadable_request_is_skipped_with_a_warning(run_cli: Any, cluster: Path) -> None:
    result = run_cli("nvsentinel", "validation", "list", "-o", "json", "-k", str(cluster))
    assert (result.code, result.stderr) == (0, WARNING)
    assert [r["metadata"]["name"] for r in json.loads(result.stdout)] == ["vr-1"]


def test_strict_exits_1_with_the_same_output(run_cli: Any, cluster: Path) -> None:
    lenient = run_cli("nvsentinel", "validation", "list", "-k", str(cluster))
    strict = run_cli("nvsentinel", "validation", "list", "--strict", "-k", str(cluster))
    assert (lenient.code, strict.code) == (0, 1)
    assert (strict.stdout, strict.stderr) == (lenient.stdout, lenient.stderr)
    assert "vr-1" in strict.stdout and "vr-old" not in strict.stdout


EVENT_CRD = "healthevents.nvsentinel.nvidia.com"
BAD_EVENT = (
    "{apiVersion: nvsentinel.nvidia.com/v1alpha1, kind: HealthEvent, metadata: {name: he-old}, spec: {isFatal: x}}"
)


def test_an_unreadable_health_event_is_named_and_strict_exits_1(
    run_cli: Any, kubectl: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    k = ["-k", str(sim_kubeconfig)]
    assert run_cli("nvsentinel", "crds", "install", *k).code == 0
    events = tmp_path / "e.json"
    events.write_text(json.dumps(EVENT), encoding="utf-8")
    assert run_cli("nvsentinel", "events", "publish", "-f", str(events), *k).code == 0
    crd = json.loads(kubectl("get", "crd", EVENT_CRD, "-o", "json").stdout)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    kubectl("replace", "-f", "-", input=json.dumps(crd))
    kubectl("apply", "-f", "-", input=BAD_EVENT)
    assert run_cli("nvsentinel", "crds", "install", *k).code == 0
    listed = run_cli("nvsentinel", "events", "list", "-o", "json", *k)
    assert listed.code == 0
    assert listed.stderr == "warning: skipping healthevent he-old: spec.agent: Field required (and 3 more)\n"
    assert [e["node"] for e in json.loads(listed.stdout)] == ["node-001"]
    strict = run_cli("nvsentinel", "events", "list", "-o", "json", "--strict", *k)
    assert (strict.code, strict.stdout, strict.stderr) == (1, listed.stdout, listed.stderr)
