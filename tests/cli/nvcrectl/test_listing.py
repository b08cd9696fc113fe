"""``nvcrectl certification list`` with an object today's model cannot read, as kubectl lists.

Covers: a Certification stored under a looser CRD (an older install; the server does not validate
stored objects again when the CRD changes) is skipped with one warning naming it and its first
problem, the others are listed and the exit status is 0, in every format and across namespaces
(``-A``); ``--strict`` exits 1 with the same output; ``get`` of the unreadable one still fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CRD = "certifications.nvcre.nvidia.com"
GOOD = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  categories:
    - {{domain: communication, variant: nccl-all-reduce}}
"""
BAD = (
    "{apiVersion: nvcre.nvidia.com/v1alpha1, kind: Certification, metadata: {name: old, namespace: nvcre},"
    " spec: {categories: oops}}"
)
WARNING = "warning: skipping certification nvcre/old: spec.categories: Input should be a valid list\n"


@pytest.fixture()
def cluster(run_cli: Any, kubectl: Any, sim_kubeconfig: Path) -> Path:
    """Two readable Certifications in two namespaces and one stored under a spec-agnostic CRD."""
    assert run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    for namespace in ("nvcre", "lab"):
        kubectl("create", "namespace", namespace)
    kubectl("apply", "-f", "-", input=GOOD.format(name="rack-1", namespace="nvcre"))
    kubectl("apply", "-f", "-", input=GOOD.format(name="rack-2", namespace="lab"))
    crd = json.loads(kubectl("get", "crd", CRD, "-o", "json").stdout)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    strict_spec = schema["properties"]["spec"]
    schema["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    kubectl("replace", "-f", "-", input=json.dumps(crd))
    kubectl("apply", "-f", "-", input=BAD)
    installed = run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig))  # today's CRD again
    assert installed.code == 0, installed.stderr
    restored = json.loads(kubectl("get", "crd", CRD, "-o", "json").stdout)
    assert restored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] == strict_spec
    return sim_kubeconfig


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_an_unreadable_certification_is_skipped_with_a_warning_and_exit_0(
    run_cli: Any, cluster: Path, fmt: str
) -> None:
    result = run_cli("nvcrectl", "certification", "list", "-A", "-o", fmt, "-k", str(cluster))
    assert result.code == 0
    assert result.stderr == WARNING
    if fmt == "json":
        assert sorted(c["name"] for c in json.loads(result.stdout)) == ["rack-1", "rack-2"]
    else:
        assert "rack-1" in result.stdout and "rack-2" in result.stdout and "old" not in result.stdout


def test_one_namespace_warns_only_about_its_own(run_cli: Any, cluster: Path) -> None:
    lab = run_cli("nvcrectl", "certification", "list", "-n", "lab", "-k", str(cluster))
    assert (lab.code, lab.stderr) == (0, "")
    nvcre = run_cli("nvcrectl", "certification", "list", "-n", "nvcre", "-k", str(cluster), "-o", "json")
    assert (nvcre.code, nvcre.stderr) == (0, WARNING)
    assert [c["name"] for c in json.loads(nvcre.stdout)] == ["rack-1"]


def test_strict_exits_1_with_the_same_output(run_cli: Any, cluster: Path) -> None:
    lenient = run_cli("nvcrectl", "certification", "list", "-A", "-k", str(cluster))
    strict = run_cli("nvcrectl", "certification", "list", "-A", "--strict", "-k", str(cluster))
    assert strict.code == 1
    assert (strict.stdout, strict.stderr) == (lenient.stdout, lenient.stderr)


def test_getting_the_unreadable_one_still_fails(run_cli: Any, cluster: Path) -> None:
    result = run_cli("nvcrectl", "certification", "get", "old", "-n", "nvcre", "-k", str(cluster))
    assert result.code != 0
