"""The certification controller beside an object it cannot read.

Covers: a Certification stored under a looser CRD (its spec no longer fits today's model) does not
stop the controller's pass: the readable Certification beside it is stepped, the unreadable one is
named in one warning (not one per pass) and counted in ``nvcrectl_unreadable_objects_total``, and
it is left untouched (no status written, no Lease taken) — as kubectl still lists the rest.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from shared import clock
from shared.certify import controller, resource
from shared.kube import rest
from shared.sim import SimServer
from tests.certify import clusterkit as kit

KIND = "apiVersion: nvcre.nvidia.com/v1alpha1, kind: Certification"
BAD = f"{{{KIND}, metadata: {{name: old}}, spec: {{categories: oops}}}}"


def test_an_unreadable_certification_is_named_once_and_the_others_still_run(
    gpu_sim: SimServer, api_client: Any, kubectl: Any, caplog: pytest.LogCaptureFixture
) -> None:
    gpu_sim.add_gpu_nodes(2)
    kit.create(api_client, kit.certification("good"))
    crd = json.loads(kubectl("get", "crd", resource.RESOURCE.name, "-o", "json").stdout)
    for version in crd["spec"]["versions"]:
        version["schema"]["openAPIV3Schema"]["properties"]["spec"] = {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
    kubectl("replace", "-f", "-", input=json.dumps(crd))
    kubectl("apply", "-f", "-", input=BAD)
    before = controller.UNREADABLE.value()
    replica = controller.Controller(api_client, "default", "replica-1", clock.for_api_client(api_client))
    with caplog.at_level(logging.WARNING, logger=controller.__name__):
        first = replica.reconcile()
        second = replica.reconcile()
    assert any(note.startswith("good: ") for note in first) and any(note.startswith("good: ") for note in second)
    warnings = [r.getMessage() for r in caplog.records if "skipping" in r.getMessage()]
    assert warnings == ["skipping certification default/old: spec.categories: Input should be a valid list"]
    assert controller.UNREADABLE.value() == before + 1
    stored = rest.get(api_client, resource.RESOURCE.path("default", "old"), what="old")
    assert "status" not in stored or not stored["status"]
    assert "old" not in replica.holding
