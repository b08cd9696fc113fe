"""The report of a Certification as data: what ``report -o json|yaml`` and ``--results-file`` print.

Covers: the data of a failed run dumps to YAML and JSON alike (plain strings, no enum objects), with
``passed`` false and the failing node with its reason.
"""

from __future__ import annotations

import json

from shared import output, yamlio
from shared.certify import models, report


def test_the_report_of_a_failed_run_is_plain_data_in_yaml_and_json() -> None:
    cert = models.Certification.model_validate(
        {
            "metadata": {"name": "rack-7", "namespace": "default"},
            "kind": "Certification",
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]},
        }
    )
    cert.status.phase = models.Phase.FAILED
    cert.status.categoryStatuses = [
        models.CategoryStatus(
            domain="communication",
            variant="nccl-all-reduce",
            status=models.Phase.FAILED,
            failedNodes=[
                models.FailedNode(name="node-002", reason=models.FailureReason.THRESHOLD, message="low", value=148.0)
            ],
        )
    ]
    data = report.data(cert)
    from_yaml = yamlio.loads(output.to_yaml(data))
    assert from_yaml == json.loads(output.to_json(data))
    assert (from_yaml["phase"], from_yaml["passed"]) == ("Failed", False)
    assert from_yaml["categories"][0]["failedNodes"] == [
        {"name": "node-002", "reason": "ThresholdViolation", "message": "low", "value": 148.0}
    ]
