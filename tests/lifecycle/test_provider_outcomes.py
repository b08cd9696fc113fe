"""What a ValidationRequest leaves when its Certification provider cannot run, and what it keeps when it can.

Covers, on the simulated cluster in virtual time: a request whose provider's CRD (Certification) is
not installed ends Failed with a Failed condition (reason ProviderNotInstalled) naming the CRD and
``nvcrectl crds install`` instead of staying without a phase, and its nodes stay gated; a
re-certification's measurements survive the deletion of its Certification in a ConfigMap named in
the attempt's status (``evidence``), labelled with the request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.kube import rest
from shared.lifecycle import evidence, models, providers
from shared.lifecycle import resource as vresource
from tests.lifecycle import kit

Phase = models.Phase


def test_a_request_whose_provider_crd_is_missing_fails_saying_so(gpu_sim: Any, api_client: Any, tmp_path: Path) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    ctl = kit.make(api_client, tmp_path, "", certification_crds=False)
    vresource.create(api_client, "vr-nocrd", names, ["dcgm-diag"], source="test")
    vr = kit.drive(gpu_sim, ctl, "vr-nocrd", passes=5)
    assert vr.status.phase is Phase.FAILED
    failed = next(c for c in vr.status.conditions if c.type == "Failed")
    assert (failed.status, failed.reason) == ("True", "ProviderNotInstalled")
    assert "certifications.nvcre.nvidia.com is not installed" in failed.message
    assert "nvcrectl crds install" in failed.message
    assert all(kit.state(api_client, n)[1] for n in names)  # never validated: still gated


def test_recertification_measurements_are_kept_after_the_certification_is_deleted(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    names = gpu_sim.add_gpu_nodes(2)
    ctl = kit.make(api_client, tmp_path, "")
    vresource.create(api_client, "vr-keep", names, ["nccl-all-reduce"], source="test")
    vr = kit.drive(gpu_sim, ctl, "vr-keep", seconds=20)
    assert vr.status.phase is Phase.SUCCEEDED, vr.status.message
    certs = rest.group_path("nvcre.nvidia.com", "v1alpha1", "certifications", "nvsentinel")
    assert rest.list_items(api_client, certs) == []  # the attempt's Certification is gone
    attempt = vr.status.testGroups[0].attempts[-1]
    assert attempt.evidence == f"{attempt.objectName}-evidence"
    kept = rest.get(api_client, rest.core_path("configmaps", "nvsentinel", attempt.evidence))
    assert kept["metadata"]["labels"][providers.REQUEST_LABEL] == "vr-keep"
    report = evidence.read(api_client, namespace="nvsentinel", name=attempt.evidence)
    assert report["passed"] is True and report["name"] == attempt.objectName
    assert report["categories"][0]["measurements"]["busBandwidthGBps"] > 0
