"""The closed vocabularies of recipe criteria, kept free of heavy imports for ``--help``.

Each criterion is a ``StrEnum``; its values drive the CLI help and the error that lists the allowed
values. ``any`` is the wildcard; aliases are upstream AICR's.
"""

from __future__ import annotations

from enum import StrEnum

ANY = "any"

API_VERSION = "aicr.run/v1alpha2"
"""The apiVersion of our recipe documents (catalog files, criteria files, resolved recipes)."""
UPSTREAM_API_VERSION = "aicr.nvidia.com/v1alpha1"
"""Upstream AICR's, which every reader of those documents also takes."""
API_VERSIONS = (API_VERSION, UPSTREAM_API_VERSION)


class Service(StrEnum):
    ANY = "any"
    AKS = "aks"
    EKS = "eks"
    GKE = "gke"
    KIND = "kind"
    OKE = "oke"


class Accelerator(StrEnum):
    ANY = "any"
    A100 = "a100"
    B200 = "b200"
    GB200 = "gb200"
    H100 = "h100"
    L40 = "l40"


class Intent(StrEnum):
    ANY = "any"
    INFERENCE = "inference"
    TRAINING = "training"


class OS(StrEnum):
    ANY = "any"
    AMAZONLINUX = "amazonlinux"
    COS = "cos"
    RHEL = "rhel"
    UBUNTU = "ubuntu"


class Platform(StrEnum):
    ANY = "any"
    DYNAMO = "dynamo"
    KUBEFLOW = "kubeflow"


FIELDS: dict[str, type[StrEnum]] = {
    "service": Service,
    "accelerator": Accelerator,
    "intent": Intent,
    "os": OS,
    "platform": Platform,
}

ALIASES: dict[str, dict[str, str]] = {
    "service": {"": ANY, "self-managed": ANY, "self": ANY, "vanilla": ANY},
    "accelerator": {"": ANY, "gpu-h100": "h100"},
    "intent": {"": ANY},
    "os": {"": ANY, "al2": "amazonlinux", "al2023": "amazonlinux"},
    "platform": {"": ANY},
}


def allowed_values(field: str) -> list[str]:
    """Values a user may give for ``field`` (without the wildcard), sorted, for help and errors."""
    return sorted(v.value for v in FIELDS[field] if v.value != ANY)
