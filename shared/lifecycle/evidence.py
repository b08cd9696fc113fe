"""What a decided Certification attempt proved, kept after its Certification is deleted.

A ValidationRequest deletes each attempt's Certification once the verdict is written
(``attempts.delete_decided``), and with it went the measurements: the bandwidth a re-certified node
reached was nowhere to be found afterwards. Before that, the Certification's report (phase,
measurements per category, failed nodes with reasons, isolation rounds; ``shared.certify.report.data``)
is written to a ConfigMap in the provider's namespace, named ``<certification>-evidence`` and
labelled with the request. A ConfigMap, because a real cluster keeps it until someone deletes it;
Events expire (an hour by default, kube-apiserver ``--event-ttl``). It has no owner on purpose: the
evidence outlives the request too. The Job provider keeps none (a Job has no measurements).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from shared.kube import errors as kube_errors
from shared.kube import rest

if TYPE_CHECKING:
    from shared.certify.models import Certification
    from shared.kube.api import KubeApi

EVIDENCE_LABEL = "nvsentinel.nvidia.com/evidence"
KEY = "report.json"
"""The ConfigMap key holding the report, as ``nvcrectl certification report -o json`` prints it."""


def name_for(certification: str) -> str:
    return f"{certification}-evidence"


def document(cert: Certification, *, namespace: str, request: str, request_label: str) -> dict[str, Any]:
    from shared.certify import report

    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name_for(cert.name),
            "namespace": namespace,
            "labels": {request_label: request, EVIDENCE_LABEL: "certification"},
        },
        "data": {KEY: json.dumps(report.data(cert), indent=2, sort_keys=True) + "\n"},
    }


def keep(api: KubeApi, cert: Certification, *, namespace: str, request: str, request_label: str) -> str:
    """Create the evidence ConfigMap; its name. On a replayed step it exists already and holds the
    same decided run (an attempt's Certification is never run twice), so it is left as it is."""
    body = document(cert, namespace=namespace, request=request, request_label=request_label)
    name = str(body["metadata"]["name"])
    with contextlib.suppress(kube_errors.AlreadyExists):
        rest.create(api, rest.core_path("configmaps", namespace), body, what=f"configmap {namespace}/{name}")
    return name


def read(api: KubeApi, *, namespace: str, name: str) -> dict[str, Any]:
    """The report a kept ConfigMap holds."""
    found = rest.get(api, rest.core_path("configmaps", namespace, name), what=f"configmap {namespace}/{name}")
    data: dict[str, Any] = json.loads((found.get("data") or {})[KEY])
    return data
