"""The training launcher's log (``train-bench``, docs/formats.md), computed from the fabric model.

A step's time is the model's FLOPs over the group's GPUs at the profile's peak times its MFU,
divided by the slowest member's compute factor (thermal throttling), and, when the job spans
NVLink domains, with its collective share stretched by how far the group's all-reduce busbw falls
below nominal:

    step = 6 * params * batch * seq / (gpus * peakTflops * mfu * 1e12) / compute
           * ((1 - comm) + comm * nominal_busbw / busbw)

The first iteration also pays a warm-up (3 steps' worth); goodput is ideal step time times
steps over everything the job spent, start-up included.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime

from shared.sim.gpu import fabric, stages


@dataclass(frozen=True)
class Args:
    model: str
    steps: int
    global_batch: int
    seq_length: int


def parse_args(argv: list[str]) -> Args:
    stage = stages.workloads().training
    values = {
        "--model": "nemotron5-8b",
        "--steps": str(stage.defaultSteps),
        "--global-batch-size": str(stage.defaultGlobalBatch),
        "--seq-length": str(stage.defaultSeqLength),
    }
    i = 0
    while i < len(argv):
        key, _, inline = argv[i].partition("=")
        if key in values:
            if inline:
                values[key] = inline
            elif i + 1 < len(argv):
                values[key] = argv[i + 1]
                i += 1
        i += 1
    if values["--model"] not in stage.models:
        raise ValueError(f"train-bench: unknown model {values['--model']!r}; known: {', '.join(stage.models)}")
    try:
        return Args(
            values["--model"], int(values["--steps"]), int(values["--global-batch-size"]), int(values["--seq-length"])
        )
    except ValueError as exc:
        raise ValueError(f"train-bench: bad argument ({exc})") from None


@dataclass(frozen=True)
class Run:
    text: str
    seconds: float
    """When the run ends (``math.inf`` for a run that hangs)."""
    exit_code: int
    step_seconds: float
    timed: tuple[tuple[float, str], ...] = ()
    """Each line and when it is written, in seconds from the start: the log grows as the run goes."""


def step_seconds(model: fabric.Fabric, names: list[str], args: Args) -> tuple[float, float]:
    """(step time, ideal step time) of ``args`` on exactly these nodes."""
    stage = stages.workloads().training
    node = model.nodes[names[0]]
    gpus = len(names) * node.profile.gpu.count
    flops = 6 * stage.models[args.model].parameters * args.global_batch * args.seq_length
    ideal = flops / (gpus * node.profile.gpu.peakTflops * node.profile.gpu.mfu * 1e12)
    compute = min(model.thermal_factor(n, compute=True) for n in names)
    stretch = 1.0
    if model.spans_domains(names):
        nominal = node.profile.bandwidth.networkBusGBps
        stretch = (1 - stage.commFraction) + stage.commFraction * nominal / model.busbw(names, "all_reduce_perf")
    return ideal / compute * stretch, ideal


def render(
    model: fabric.Fabric,
    names: list[str],
    args: Args,
    *,
    crash: fabric.Crash | None,
    started: float,
    stalled: str | None = None,
) -> Run:
    """The log of one run. ``stalled`` names the node whose fault hangs it: the steps stop half-way,
    nothing more is printed and the processes never exit (a hung collective, as NCCL's default
    has no timeout)."""
    stage = stages.workloads().training
    node = model.nodes[names[0]]
    gpn = node.profile.gpu.count
    world = len(names) * gpn
    step, ideal = step_seconds(model, names, args)
    flops = 6 * stage.models[args.model].parameters * args.global_batch * args.seq_length
    lines = [
        f"[train-bench] model={args.model} nodes={len(names)} gpus_per_node={gpn} world_size={world} "
        f"global_batch_size={args.global_batch} seq_length={args.seq_length} steps={args.steps}"
    ]
    when = [0.0]
    clock = started + stage.startupSeconds
    steps_run = args.steps if crash is None and stalled is None else max(args.steps // 2, 1)
    spent = stage.startupSeconds
    for n in range(1, steps_run + 1):
        seconds = step * 3 if n == 1 else step
        clock += seconds
        spent += seconds
        tflops = flops / seconds / world / 1e12
        loss = 11.0 * (0.97**n) + 1.5
        moment = datetime.fromtimestamp(clock, UTC)
        lines.append(
            f" [{moment:%Y-%m-%d %H:%M:%S}] iteration {n:8d}/{args.steps:8d} | consumed samples: "
            f"{n * args.global_batch:12d} | elapsed time per iteration (ms): {seconds * 1000:.1f} | "
            f"throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | learning rate: 1.000000E-04 | "
            f"global batch size: {args.global_batch:5d} | lm loss: {loss:.6E} | loss scale: 1.0 | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |"
        )
        when.append(spent)
    if stalled is not None and crash is None:
        return Run("\n".join(lines) + "\n", math.inf, 0, step, tuple(zip(when, lines, strict=True)))
    if crash is not None:
        rank = names.index(crash.node) * gpn + (crash.gpu or 0) if crash.node in names else 0
        reason = (
            "CUDA error: unspecified launch failure"
            if crash.gpu is not None
            else "NCCL error: remote process exited or there was a network error"
        )
        lines.append(f"[train-bench] error: rank {rank} on {crash.node} failed: {reason}")
        when.append(spent)
        return Run("\n".join(lines) + "\n", spent, 1, step, tuple(zip(when, lines, strict=True)))
    goodput = ideal * args.steps / spent
    average = step  # iterations after the first all take ``step``
    lines.append(
        f"[train-bench] done: steps={args.steps} avg_step_time_s={average:.4f} "
        f"avg_tflops_per_gpu={flops / average / world / 1e12:.1f} goodput={goodput:.4f} "
        f"elapsed_s={spent:.1f}"
    )
    when.append(spent)
    return Run("\n".join(lines) + "\n", spent, 0, step, tuple(zip(when, lines, strict=True)))


def command_line(args: Args) -> str:
    return shlex.join([stages.workloads().training.binary, "--model", args.model, "--steps", str(args.steps)])
