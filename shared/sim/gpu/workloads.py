"""What a container does in the simulated cluster, decided by the binary its command runs.

The command names the binary, possibly behind a wrapper (``timeout``, ``sh -c "…"``, ``mpirun
… -x K=V``): ``all_reduce_perf``, ``all_gather_perf``, ``alltoall_perf``, ``reduce_scatter_perf``
(also the ``_mpi`` builds) are NCCL tests; ``train-bench`` is the training launcher; ``dcgmi
diag`` runs on its own node; ``sshd`` serves until the pod is stopped (an MPI worker); ``sleep N``
sleeps; anything else succeeds after ``otherSeconds``. Behind ``mpirun`` an NCCL test runs where
mpirun puts its ranks (:mod:`.launcher` resolves the hostfile; :attr:`Workload.launch`); run
directly it is one process on its own node. The pods of one Indexed Job running ``train-bench``
are one torchrun rendezvous (:func:`run_group`). Results come from the fabric model for exactly
the nodes the ranks run on.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from shared.sim.gpu import dcgm_output, fabric, mpirun, nccl_output, stages, training_output


class Kind(StrEnum):
    NCCL = "nccl"
    DCGM = "dcgm"
    TRAINING = "training"
    SSHD = "sshd"
    SLEEP = "sleep"
    OTHER = "other"


@dataclass(frozen=True)
class Workload:
    kind: Kind
    binary: str = ""
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    """The container's env with mpirun's ``-x`` values over it."""
    launch: mpirun.Launch | None = None
    """The mpirun command line the binary runs under, if any."""
    problem: str = ""
    """Why mpirun would refuse its command line (empty: it would not)."""
    deadline: float | None = None
    """Seconds after which a ``timeout`` wrapper kills the command."""

    @property
    def group(self) -> bool:
        return self.kind in (Kind.NCCL, Kind.TRAINING)

    @property
    def has_hosts(self) -> bool:
        """mpirun was told where to run (a hostfile or ``-H``), beyond its own node."""
        return self.launch is not None and (self.launch.hostfile is not None or bool(self.launch.hosts))


@dataclass(frozen=True)
class Result:
    log: str
    seconds: float
    exit_code: int
    timed: tuple[tuple[float, str], ...] = ()
    """The log's lines with when each is written (seconds from the start), for a log that grows."""


def _tokens(container: dict[str, Any]) -> list[str]:
    tokens = [str(t) for t in (container.get("command") or []) + (container.get("args") or [])]
    if len(tokens) >= 3 and tokens[0].rsplit("/", 1)[-1] in ("sh", "bash") and tokens[1] == "-c":
        try:
            return shlex.split(tokens[2]) + tokens[3:]
        except ValueError:
            return tokens
    return tokens


def container_env(container: dict[str, Any]) -> dict[str, str]:
    """The container's literal env values (``valueFrom`` entries are not resolved)."""
    return {str(e.get("name")): str(e.get("value", "")) for e in container.get("env") or [] if e.get("name")}


def _launch(tokens: list[str], env: dict[str, str]) -> tuple[mpirun.Launch | None, str]:
    at = mpirun.index(tokens)
    if at is None:
        return None, ""
    try:
        return mpirun.parse(tokens[at + 1 :], env), ""
    except ValueError as exc:
        return None, str(exc)


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def deadline(tokens: list[str]) -> float | None:
    """``timeout [-k D] [-s SIG] [--preserve-status] [--foreground] DURATION …`` → DURATION in seconds."""
    if not tokens or tokens[0].rsplit("/", 1)[-1] != "timeout":
        return None
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in ("-k", "-s", "--kill-after", "--signal") else 1
    if i >= len(tokens):
        return None
    text = tokens[i]
    unit = _UNITS.get(text[-1:], 1.0)
    try:
        return float(text.rstrip("smhd")) * unit
    except ValueError:
        return None


def classify(container: dict[str, Any]) -> Workload:
    tokens = _tokens(container)
    env = container_env(container)
    launch, problem = _launch(tokens, env)
    limit = deadline(tokens)
    if launch is not None:
        env = {**env, **launch.exported}
    nccl = stages.workloads().nccl.collectives
    trainer = stages.workloads().training.binary
    for i, token in enumerate(tokens):
        base = token.rsplit("/", 1)[-1].removesuffix("_mpi")
        if base in nccl:
            return Workload(Kind.NCCL, base, tuple(tokens[i + 1 :]), env, launch, problem, limit)
        if base == trainer:
            return Workload(Kind.TRAINING, base, tuple(tokens[i + 1 :]), env, launch, problem)
        if base == "dcgmi" and i + 1 < len(tokens) and tokens[i + 1] == "diag":
            return Workload(Kind.DCGM, base, tuple(tokens[i + 2 :]), env)
    if tokens and tokens[0].rsplit("/", 1)[-1] == "sleep" and len(tokens) > 1:
        return Workload(Kind.SLEEP, "sleep", tuple(tokens[1:2]), env)
    if any(t.rsplit("/", 1)[-1] == "sshd" for t in tokens):
        return Workload(Kind.SSHD, "sshd", (), env)
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
        trun = training_output.render(model, names, targs, crash=crash, started=now, stalled=model.stalled(names))
        return Result(trun.text, trun.seconds, trun.exit_code, trun.timed)
    except ValueError as exc:
        return Result(f"{exc}\n", 1.0, 2)


def dcgm_host(argv: list[str]) -> str | None:
    """The hostengine ``dcgmi`` connects to (``--host``), None for its default (localhost)."""
    for i, token in enumerate(argv):
        if token == "--host" and i + 1 < len(argv):
            return argv[i + 1]
        if token.startswith("--host="):
            return token.split("=", 1)[1]
    return None


def dcgm_unreachable(host: str) -> Result:
    """What dcgmi prints when no hostengine answers at ``host``."""
    return Result(
        f"Error: unable to establish a connection to the specified host: {host}\n"
        "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n",
        1.0,
        255,
    )


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
