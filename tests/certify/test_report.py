"""The report of a Certification as data: what ``report -o json|yaml`` and ``--results-file`` print.

Covers: the data of a failed run dumps to YAML and JSON alike (plain strings, no enum objects), with
``passed`` false and the failing node with its reason; the wide report adds the platform whose
overrides applied and each category's workload backend.
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


def test_the_wide_report_names_the_platform_and_each_categorys_backend() -> None:
    cert = models.Certification.model_validate(
        {
            "metadata": {"name": "eks", "namespace": "default"},
            "kind": "Certification",
            "spec": {"categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]},
            "status": {
                "phase": "Succeeded",
                "platform": "aws",
                "gpu": "h100",
                "categoryStatuses": [
                    {
                        "domain": "communication",
                        "variant": "nccl-all-reduce",
                        "status": "Succeeded",
                        "backend": "trainjob",
                    }
                ],
            },
        }
    )
    wide, narrow = report.text(cert, wide=True), report.text(cert)
    assert "Platform: aws (h100)" in wide and "Platform" not in narrow
    header, row = wide.splitlines()[2:4]
    assert header.split()[-1] == "BACKEND" and row.split()[-1] == "trainjob"
    assert (report.data(cert)["platform"], report.data(cert)["gpu"]) == ("aws", "h100")
