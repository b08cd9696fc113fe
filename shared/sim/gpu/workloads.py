"""What a container does in the simulated cluster, decided by the binary its command runs.

The workload contract (docs/formats.md): the command starts with the binary, possibly behind a
launcher (``timeout``, ``mpirun … -x K=V``, ``sh -c "…"``): ``all_reduce_perf``,
``all_gather_perf``, ``alltoall_perf``, ``reduce_scatter_perf`` (also the ``_mpi`` builds) and
the training launcher ``train-bench`` are *group* workloads — the pods of one Job are one run, and
the pod with completion index 0 logs it; ``dcgmi diag`` runs on its own node; ``sleep N`` sleeps;
anything else succeeds after ``otherSeconds``. Results are computed by the fabric model for
exactly the nodes the pods landed on.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from shared.sim.gpu import dcgm_output, fabric, nccl_output, stages, training_output


class Kind(StrEnum):
    NCCL = "nccl"
    DCGM = "dcgm"
    TRAINING = "training"
    SLEEP = "sleep"
    OTHER = "other"


@dataclass(frozen=True)
class Workload:
    kind: Kind
    binary: str = ""
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @property
    def group(self) -> bool:
        return self.kind in (Kind.NCCL, Kind.TRAINING)


@dataclass(frozen=True)
class Result:
    log: str
    seconds: float
    exit_code: int


def _tokens(container: dict[str, Any]) -> list[str]:
    tokens = [str(t) for t in (container.get("command") or []) + (container.get("args") or [])]
    if len(tokens) >= 3 and tokens[0].rsplit("/", 1)[-1] in ("sh", "bash") and tokens[1] == "-c":
        try:
            return shlex.split(tokens[2]) + tokens[3:]
        except ValueError:
            return tokens
    return tokens


def classify(container: dict[str, Any]) -> Workload:
    tokens = _tokens(container)
    env = {str(e.get("name")): str(e.get("value", "")) for e in container.get("env") or [] if e.get("name")}
    nccl = stages.workloads().nccl.collectives
    trainer = stages.workloads().training.binary
    for i, token in enumerate(tokens):
        if token == "-x" and i + 1 < len(tokens) and "=" in tokens[i + 1]:
            key, _, value = tokens[i + 1].partition("=")
            env.setdefault(key, value)
        base = token.rsplit("/", 1)[-1].removesuffix("_mpi")
        if base in nccl:
            return Workload(Kind.NCCL, base, tuple(tokens[i + 1 :]), env)
        if base == trainer:
            return Workload(Kind.TRAINING, base, tuple(tokens[i + 1 :]), env)
        if base == "dcgmi" and i + 1 < len(tokens) and tokens[i + 1] == "diag":
            return Workload(Kind.DCGM, base, tuple(tokens[i + 2 :]), env)
    if tokens and tokens[0].rsplit("/", 1)[-1] == "sleep" and len(tokens) > 1:
        return Workload(Kind.SLEEP, "sleep", tuple(tokens[1:2]), env)
    return Workload(Kind.OTHER)


def _loopback(workload: Workload) -> bool:
    return workload.env.get("NCCL_P2P_DISABLE") == "1" and workload.env.get("NCCL_SHM_DISABLE") == "1"


def run_group(model: fabric.Fabric, names: list[str], workload: Workload, *, now: float) -> Result:
    """One run of a group workload on these nodes (rank 0 is ``names[0]``)."""
    nodes = [model.nodes[n] for n in names]
    crash = model.crash(names)
    try:
        if workload.kind is Kind.NCCL:
            args = nccl_output.parse_args(workload.binary, list(workload.argv))
            through_nics = _loopback(workload)
            path = "network" if through_nics or model.spans_domains(names) else "nvlink"
            peak = model.busbw(names, workload.binary, through_nics=through_nics)
            half = stages.workloads().nccl.halfSaturationBytes[path]
            run = nccl_output.render(args, nodes, peak=peak, crash=crash, half_bytes=half)
            return Result(run.text, run.seconds, run.exit_code)
        targs = training_output.parse_args(list(workload.argv))
        trun = training_output.render(model, names, targs, crash=crash, started=now)
        return Result(trun.text, trun.seconds, trun.exit_code)
    except ValueError as exc:
        return Result(f"{exc}\n", 1.0, 2)


def _dcgm_level(argv: list[str]) -> tuple[int, bool]:
    names = {"short": 1, "medium": 2, "long": 3, "xlong": 4}
    level, as_json = 1, False
    for i, token in enumerate(argv):
        if token in ("-j", "--json"):
            as_json = True
        value = None
        if token in ("-r", "--run") and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith("--run="):
            value = token.split("=", 1)[1]
        if value is not None:
            level = names.get(value) or (int(value) if value.isdigit() else 0)
    if level not in (1, 2, 3, 4):
        raise ValueError("dcgmi diag: --run must be 1-4 or short|medium|long|xlong")
    return level, as_json


def run_single(model: fabric.Fabric, name: str, workload: Workload, *, other_seconds: float) -> Result:
    """A workload that runs on its own node: dcgmi diag, sleep, or any other image."""
    stage = stages.workloads()
    if workload.kind is Kind.DCGM:
        try:
            level, as_json = _dcgm_level(list(workload.argv))
        except ValueError as exc:
            return Result(f"Error: {exc}\n", 1.0, 255)
        seconds = stage.dcgm.levelSeconds[level]
        if model.crash([name], dead_gpus=False) is not None:
            return Result(dcgm_output.crash_text(), seconds / 2, 255)
        node = model.nodes[name]
        verdicts = dcgm_output.verdicts(model, node, level)
        text = dcgm_output.json_text(node, level, verdicts) if as_json else dcgm_output.text(node, level, verdicts)
        return Result(text, seconds, stage.dcgm.failureExitCode if dcgm_output.failed(verdicts) else 0)
    if workload.kind is Kind.SLEEP:
        try:
            return Result("", float(workload.argv[0]), 0)
        except ValueError:
            return Result(f"sleep: invalid time interval '{workload.argv[0]}'\n", 0.0, 1)
    return Result("", other_seconds, 0)
