"""Simulated hardware and lifecycles as data: GPU node profiles and the kubelet's stages.

``profiles/<name>.yaml`` describe a node type (GPU product and count, NICs, nominal bandwidths);
``<service>/<name>`` is the same node type as a managed service registers it (:mod:`.providers`);
``stages/workloads.yaml``, ``stages/faults.yaml`` and ``stages/repair.yaml`` hold the virtual
durations and factors the kubelet, the fabric model and the repair controller use. Each file is
parsed once into a strict pydantic model, so a typo in a YAML key fails at load with its path.
"""

from __future__ import annotations

import functools
from importlib import resources as importlib_resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared import yamlio
from shared.sim.gpu import providers


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ------------------------------------------------------------------ profiles
class GpuSpec(_Strict):
    product: str
    displayName: str
    family: str
    count: int = Field(ge=1)
    memoryMiB: int
    deviceId: str
    computeMajor: int
    computeMinor: int
    pciBusIds: list[str]
    peakTflops: float = Field(gt=0, description="Dense BF16 TFLOP/s of one GPU.")
    mfu: float = Field(gt=0, le=1, description="Model FLOPs utilisation a healthy training step reaches.")


class NicSpec(_Strict):
    count: int = Field(ge=1)
    device: str
    rateGbps: int
    rateText: str
    linkLayer: str


class Bandwidth(_Strict):
    nvlinkBusGBps: float = Field(gt=0, description="Plateau busbw inside one NVLink domain.")
    networkBusGBps: float = Field(gt=0, description="Plateau busbw of a group spanning NVLink domains.")


class Profile(_Strict):
    """One GPU node type."""

    name: str
    instanceType: str
    gpu: GpuSpec
    cliquePerRack: bool = Field(description="True: a rack is one NVLink domain (GB200 NVL72).")
    nic: NicSpec
    bandwidth: Bandwidth
    capacity: dict[str, str]
    provider: providers.Provider | None = Field(default=None, description="The service the node runs on.")

    @property
    def machine(self) -> providers.Machine | None:
        return self.provider.machine(self.name) if self.provider is not None else None


# ------------------------------------------------------------------ stages
class Collective(_Strict):
    busFactor: str = Field(pattern="^(allreduce|gather)$")
    bandwidth: float = Field(gt=0, le=1)
    redop: str


class NcclStage(_Strict):
    setupSeconds: float
    defaultMinBytes: int
    defaultMaxBytes: int
    defaultStepFactor: int
    defaultIters: int
    defaultWarmup: int
    halfSaturationBytes: dict[str, int]
    inPlaceFactor: float
    collectives: dict[str, Collective]


class DcgmStage(_Strict):
    levelSeconds: dict[int, float]
    version: str
    failureExitCode: int


class TrainingModel(_Strict):
    parameters: float


class TrainingStage(_Strict):
    binary: str
    startupSeconds: float
    commFraction: float
    defaultSteps: int
    defaultGlobalBatch: int
    defaultSeqLength: int
    models: dict[str, TrainingModel]


class Mpi(_Strict):
    resolveFailSeconds: float = Field(description="mpirun start to its exit when ssh cannot resolve a host.")
    connectAttemptSeconds: float = Field(description="Per ssh ConnectionAttempts try against a closed port.")
    allGpuImages: list[str] = Field(
        description="Image prefixes whose environment sets NVIDIA_VISIBLE_DEVICES=all: a container of "
        "one that requests no GPU still sees every GPU of its node (the NVIDIA runtime honours it)."
    )


class Workloads(_Strict):
    podStartSeconds: float
    otherSeconds: float
    mpi: Mpi
    nccl: NcclStage
    dcgm: DcgmStage
    training: TrainingStage


class Thermal(_Strict):
    bandwidthFactor: float
    computeFactor: float
    temperatureC: int


class FaultEffects(_Strict):
    thermal: Thermal
    rebootClears: list[str]
    resetClears: list[str]
    xidMessages: dict[int, str]
    defaultXidMessage: str
    fatalXids: list[int]


class Reboot(_Strict):
    signalSeconds: float
    downSeconds: float


class GpuReset(_Strict):
    seconds: float


class Repair(_Strict):
    reboot: Reboot
    gpuReset: GpuReset


# ------------------------------------------------------------------ loading
def _read(folder: str, name: str) -> Any:
    text = importlib_resources.files("shared.sim.gpu").joinpath(folder, name).read_text(encoding="utf-8")
    return yamlio.loads(text, source=f"shared/sim/{folder}/{name}")


def profile_names() -> list[str]:
    folder = importlib_resources.files("shared.sim.gpu").joinpath("profiles")
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))


@functools.cache
def profile(name: str) -> Profile:
    """The profile called ``name`` (``h100``), or as service ``eks`` runs it (``eks/h100``);
    ValueError lists the known ones."""
    service, _, base = name.rpartition("/")
    if service:
        provider = providers.load(service)
        provider.machine(base)
        return profile(base).model_copy(update={"provider": provider})
    if name not in profile_names():
        raise ValueError(f"unknown GPU profile {name!r}; known: {', '.join(profile_names())}")
    return Profile.model_validate(_read("profiles", f"{name}.yaml"))


@functools.cache
def workloads() -> Workloads:
    return Workloads.model_validate(_read("stages", "workloads.yaml"))


@functools.cache
def faults() -> FaultEffects:
    return FaultEffects.model_validate(_read("stages", "faults.yaml"))


@functools.cache
def repair() -> Repair:
    return Repair.model_validate(_read("stages", "repair.yaml"))
