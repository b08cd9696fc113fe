"""Per-platform overrides as data, and the platform and GPU architecture read from the nodes.

One YAML file per override under ``shared/certify/platforms/`` (research/workloads.md §4.6): when
it applies (platform, GPU architectures) and what it changes (image, mpirun path, the directory of
the nccl-tests binaries, worker resources, pod annotations, tolerations, the env exported to the
ranks with ``-x``, a ComputeDomain). All matching overrides apply in ``order``; a later one's image,
mpirun and programDir win, maps merge. Detection follows upstream's rules (NVCRE
``pkg/controller/workflow_detect.go``, research/nvcre.md "Platform and GPU inference from nodes"):
platform from ``spec.providerID``, GPU architecture by majority vote over ``nvidia.com/gpu.product``
(a tie goes to the architecture of the first node by name). Left out: mistral, forge and onprem
overrides, azure a100 and gcp rtxpro6000 fragments (not read upstream either).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared import errors, yamlio

NONE = "none"
PLATFORMS = ("aws", "gcp", "azure", "oci", "onprem", "togetherai", "mistral", "forge", "nscale")
GPU_PRODUCT = "nvidia.com/gpu.product"


class Override(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    order: int
    platform: str | None = None
    gpuIn: list[str] = Field(default_factory=list)
    gpuNotIn: list[str] = Field(default_factory=list)
    image: str | None = None
    mpirun: str | None = None
    programDir: str | None = None
    workerResources: dict[str, str] = Field(default_factory=dict)
    podAnnotations: dict[str, str] = Field(default_factory=dict)
    tolerations: list[dict[str, str]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    computeDomain: bool = False

    def applies(self, platform: str, gpu: str) -> bool:
        if self.platform is not None and self.platform != platform:
            return False
        if self.gpuIn and gpu not in self.gpuIn:
            return False
        return gpu not in self.gpuNotIn


@dataclass(frozen=True)
class Platform:
    """Where a run goes: the platform, its GPU architecture and the overrides that apply there."""

    name: str
    gpu: str
    overrides: tuple[Override, ...]

    @property
    def image(self) -> str | None:
        return next((o.image for o in reversed(self.overrides) if o.image), None)

    @property
    def mpirun(self) -> str | None:
        return next((o.mpirun for o in reversed(self.overrides) if o.mpirun), None)

    @property
    def program_dir(self) -> str | None:
        return next((o.programDir for o in reversed(self.overrides) if o.programDir), None)

    def merged(self, field: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for o in self.overrides:
            out.update(getattr(o, field))
        return out

    @property
    def tolerations(self) -> list[dict[str, str]]:
        return next((list(o.tolerations) for o in reversed(self.overrides) if o.tolerations), [])

    @property
    def compute_domain(self) -> bool:
        return any(o.computeDomain for o in self.overrides)


GENERIC = Platform(NONE, "unknown", ())


@functools.cache
def overrides() -> tuple[Override, ...]:
    """Every override file, in order."""
    folder = resources.files("shared.certify").joinpath("platforms")
    found = [
        Override.model_validate(yamlio.loads(f.read_text("utf-8"), source=f"shared/certify/platforms/{f.name}"))
        for f in folder.iterdir()
        if f.name.endswith(".yaml")
    ]
    return tuple(sorted(found, key=lambda o: (o.order, o.name)))


def resolve(platform: str, gpu: str) -> Platform:
    """``platform`` on ``gpu`` with every override that applies; ``none`` is the generic shape."""
    if platform == NONE:
        return Platform(NONE, gpu, ())
    if platform not in PLATFORMS:
        raise errors.InvalidInput(
            f"unknown platform {platform!r}; known: {', '.join((*PLATFORMS, NONE))}", where="--platform"
        )
    return Platform(platform, gpu, tuple(o for o in overrides() if o.applies(platform, gpu)))


_SCHEMES = (("aws://", "aws"), ("gce://", "gcp"), ("azure://", "azure"), ("ocid1.", "oci"), ("metal3://", "mistral"))


def node_platform(node: dict[str, Any]) -> str:
    """Upstream's platform of one node, from its providerID (then allocatable, labels, hostname)."""
    provider_id = str((node.get("spec") or {}).get("providerID") or "")
    labels = (node.get("metadata") or {}).get("labels") or {}
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    for prefix, name in _SCHEMES:
        if provider_id.startswith(prefix):
            return name
    if provider_id.startswith("openstack://"):
        return "nscale" if "nscale.com/rdmashare" in allocatable else "onprem"
    if provider_id.startswith("kubevirt://"):
        return "togetherai" if "node-role.together.ai/worker" in labels else "onprem"
    hostname = str(labels.get("kubernetes.io/hostname") or (node.get("metadata") or {}).get("name") or "")
    if not provider_id and ("forge" in hostname or "nke.nvidia.com/site-name" in labels):
        return "forge"
    return "onprem"


_ARCH = re.compile(r"(gb300|gb200|h200|h100|a100|l40s|l40|b200|b300|rtxpro6000)")


def parse_product(product: str) -> str:
    """``NVIDIA-H100-80GB-HBM3`` → h100, ``NVIDIA-GB200`` → gb200 (upstream ``gpu.ParseProduct``)."""
    found = _ARCH.search(product.lower().replace("-", "").replace(" ", ""))
    return found[1] if found else "unknown"


def gpu_arch(nodes: list[dict[str, Any]]) -> str:
    """Majority vote over the labelled nodes; a tie goes to the first node's by name."""
    ordered = sorted(nodes, key=lambda n: n["metadata"]["name"])
    votes = [
        parse_product(str(labels[GPU_PRODUCT]))
        for n in ordered
        if GPU_PRODUCT in (labels := n["metadata"].get("labels") or {})
    ]
    if not votes:
        return "unknown"
    counts = Counter(votes)
    top = max(counts.values())
    return next(v for v in votes if counts[v] == top)


def detect(nodes: list[dict[str, Any]]) -> Platform:
    """The platform of ``nodes``; nodes on different platforms are InvalidInput (HeterogeneousPlatform)."""
    if not nodes:
        return GENERIC
    found = sorted({node_platform(n) for n in nodes})
    if len(found) > 1:
        raise errors.InvalidInput(f"HeterogeneousPlatform: the target nodes span {', '.join(found)}")
    return resolve(found[0], gpu_arch(nodes))


def choose(nodes: list[dict[str, Any]], explicit: str | None) -> Platform:
    """``explicit`` (``spec.platform``, ``--platform``) on the nodes' GPU, else what the nodes say."""
    if explicit is None:
        return detect(nodes)
    return resolve(explicit, gpu_arch(nodes))
