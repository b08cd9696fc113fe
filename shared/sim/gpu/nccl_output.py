"""nccl-tests output, as the MPI rank 0 of a real run prints it, computed from the fabric model.

The layout is the current nccl-tests one (the GCP H100 sample in reference/samples/nccl): a
``# nThread …`` header, one ``#  Rank`` line per GPU naming the node it ran on, the two-half
table (out-of-place, in-place) with ``redop``, ``root`` and ``#wrong`` columns, ``# Out of
bounds values`` and ``# Avg bus bandwidth``. Bandwidth rises with message size and reaches the
model's plateau busbw exactly at the largest size:

    busbw(s) = peak * s / (s + h) * (smax + h) / smax,    time(s) = s * busFactor / busbw(s)

with h the half-saturation size of the path (NVLink or network). A crash prints what NCCL and
mpirun print when a rank dies: before any row for a dead GPU, half-way for a flaky node.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.sim.gpu import fabric, stages
from shared.sim.gpu.faultspec import Kind

TYPE_SIZES = {
    "int8": 1,
    "uint8": 1,
    "char": 1,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "float": 4,
    "float32": 4,
    "int32": 4,
    "int": 4,
    "uint32": 4,
    "double": 8,
    "float64": 8,
    "int64": 8,
    "uint64": 8,
}
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


@dataclass(frozen=True)
class Args:
    """The nccl-tests flags the model uses."""

    binary: str
    min_bytes: int
    max_bytes: int
    factor: int
    iters: int
    warmup: int
    gpus_per_proc: int
    check: int
    dtype: str


def _bytes(text: str) -> int:
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in _SUFFIX:
        return int(float(text[:-1]) * _SUFFIX[text[-1]])
    return int(text)


def parse_args(binary: str, argv: list[str]) -> Args:
    """Read -b/-e/-f/-n/-w/-g/-c/-d (and their long forms); unknown flags are ignored, as harmless."""
    stage = stages.workloads().nccl
    values = {
        "b": str(stage.defaultMinBytes),
        "e": str(stage.defaultMaxBytes),
        "f": str(stage.defaultStepFactor),
        "n": str(stage.defaultIters),
        "w": str(stage.defaultWarmup),
        "g": "1",
        "c": "1",
        "d": "float",
    }
    long = {
        "--minbytes": "b",
        "--maxbytes": "e",
        "--stepfactor": "f",
        "--iters": "n",
        "--warmup_iters": "w",
        "--ngpus": "g",
        "--check": "c",
        "--datatype": "d",
    }
    i = 0
    while i < len(argv):
        token = argv[i]
        key = long.get(token.split("=")[0]) or (token[1:2] if token.startswith("-") and len(token) >= 2 else None)
        if key in values:
            if "=" in token:
                values[key] = token.split("=", 1)[1]
            elif token.startswith("-") and not token.startswith("--") and len(token) > 2:
                values[key] = token[2:]
            elif i + 1 < len(argv):
                values[key] = argv[i + 1]
                i += 1
        i += 1
    try:
        args = Args(
            binary=binary,
            min_bytes=_bytes(values["b"]),
            max_bytes=_bytes(values["e"]),
            factor=max(int(values["f"]), 1),
            iters=int(values["n"]),
            warmup=int(values["w"]),
            gpus_per_proc=max(int(values["g"]), 1),
            check=int(values["c"]),
            dtype=values["d"],
        )
    except ValueError as exc:
        raise ValueError(f"{binary}: bad argument ({exc})") from None
    if args.dtype not in TYPE_SIZES:
        raise ValueError(f"{binary}: unknown datatype {args.dtype!r}")
    if args.min_bytes > args.max_bytes:
        raise ValueError(f"{binary}: minBytes above maxBytes")
    return args


def sizes(args: Args) -> list[int]:
    found, size = [], args.min_bytes
    while size <= args.max_bytes:
        found.append(size)
        if args.factor <= 1:
            break
        size *= args.factor
    return found


def bus_factor(kind: str, ranks: int) -> float:
    if ranks <= 1:
        return 1.0
    return 2 * (ranks - 1) / ranks if kind == "allreduce" else (ranks - 1) / ranks


def _time(us: float) -> str:
    if us >= 10000:
        return f"{us:7.0f}"
    if us >= 100:
        return f"{us:7.1f}"
    return f"{us:7.2f}"


@dataclass(frozen=True)
class Run:
    text: str
    seconds: float
    exit_code: int


def render(
    args: Args,
    nodes: list[fabric.Node],
    *,
    peak: float,
    crash: fabric.Crash | None,
    half_bytes: int,
    hosts: list[tuple[str, int]] | None = None,
    preamble: tuple[str, ...] = (),
) -> Run:
    """The rank-0 log of one run on ``nodes`` whose plateau busbw is ``peak``.

    ``hosts``: per node, the host name its processes print (the pod's hostname) and the GPUs the
    run uses there; by default the node's name and all its GPUs. ``preamble``: NCCL INFO lines
    printed after initialisation (the network NCCL chose), without their ``host:pid:tid`` prefix.
    """
    stage = stages.workloads().nccl
    collective = stage.collectives[args.binary]
    placed = hosts or [(node.name, node.profile.gpu.count) for node in nodes]
    named = {node.name: host for node, (host, _) in zip(nodes, placed, strict=True)}
    ranks = sum(gpus for _, gpus in placed)
    bf = bus_factor(collective.busFactor, ranks)
    tsize = TYPE_SIZES[args.dtype]
    per_rank = collective.busFactor != "allreduce"
    lines = [
        f"# nThread 1 nGpus {args.gpus_per_proc} minBytes {args.min_bytes} maxBytes {args.max_bytes} "
        f"step: {args.factor}(factor) warmup iters: {args.warmup} iters: {args.iters} agg iters: 1 "
        f"validation: {args.check} graph: 0",
        "#",
        "# Using devices",
    ]
    pids: dict[str, int] = {}
    rank = 0
    for n, (node, (host, gpus)) in enumerate(zip(nodes, placed, strict=True)):
        for g in range(gpus):
            pid = 6000 + 37 * n + g
            pids.setdefault(host, pid)
            lines.append(
                f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host} device {g:2d} "
                f"[{node.profile.gpu.pciBusIds[g % node.profile.gpu.count]}] {node.profile.gpu.displayName}"
            )
            rank += 1
    first = placed[0][0]
    lines.append("#")
    lines += [f"{first}:{pids[first]}:{pids[first]} [0] NCCL INFO {line}" for line in preamble]
    lines.append(f"{first}:{pids[first]}:{pids[first]} [0] NCCL INFO Launch mode Parallel")
    lines += [
        "#                                                              out-of-place                       "
        "in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
        "   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
        "  (GB/s)       ",
    ]
    counts = [s // (tsize * ranks) if per_rank else s // tsize for s in sizes(args)]
    printed = [c * tsize * ranks if per_rank else c * tsize for c in counts]
    smax = max(printed) if printed else 0
    total_us = 0.0
    bandwidths: list[float] = []
    rows = len(printed)
    crash_after = 0 if crash is None or crash.kind is Kind.GPU_DEAD else rows // 2
    wrong = "0" if args.check else "N/A"
    for row, (size, count) in enumerate(zip(printed, counts, strict=True)):
        if crash is not None and row >= crash_after:
            break
        halves = []
        for factor in (1.0, stage.inPlaceFactor):
            if size == smax and factor == 1.0:
                busbw = peak
            else:
                busbw = peak * factor * size / (size + half_bytes) * (smax + half_bytes) / smax if smax else 0.0
            time_us = bf * (size + half_bytes) * smax / (peak * factor * (smax + half_bytes) * 1e3)
            total_us += time_us * (args.iters + args.warmup)
            bandwidths.append(round(busbw, 2))
            halves.append(f"  {_time(time_us)}  {busbw / bf:6.2f}  {busbw:6.2f}  {wrong:>5}")
        lines.append(f"{size:12d}  {count:12d}  {args.dtype:>8}  {collective.redop:>6}  {-1:6d}" + "".join(halves))
    seconds = stage.setupSeconds + total_us / 1e6
    if crash is not None:
        lines += _crash_lines(crash, [named[n.name] for n in nodes], named.get(crash.node, crash.node), pids)
        return Run("\n".join(lines) + "\n", seconds, 1)
    average = sum(bandwidths) / len(bandwidths) if bandwidths else 0.0
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {average:g} ", "#"]
    return Run("\n".join(lines) + "\n", seconds, 0)


def cut_at(run: Run, args: Args, deadline: float) -> Run:
    """The run killed ``deadline`` seconds after its start (``timeout`` sends SIGTERM, exit 124):
    the rows printed by then, no summary. A run that ends in time is returned as is."""
    if run.seconds <= deadline:
        return run
    elapsed = stages.workloads().nccl.setupSeconds
    kept: list[str] = []
    for line in run.text.splitlines():
        words = line.split()
        if words and words[0].isdigit() and len(words) >= 13:
            elapsed += (float(words[5]) + float(words[9])) * (args.iters + args.warmup) / 1e6
            if elapsed > deadline:
                break
        elif line.startswith("# Out of bounds"):
            break
        kept.append(line)
    return Run("\n".join(kept) + "\n", deadline, 124)


def _crash_lines(crash: fabric.Crash, hosts: list[str], host: str, pids: dict[str, int]) -> list[str]:
    pid = pids.get(host, 6000) + (crash.gpu or 0)
    if crash.kind is Kind.GPU_DEAD:
        cause = [
            f"{host}:{pid}:{pid + 90} [{crash.gpu}] NCCL WARN Cuda failure 'unspecified launch failure'",
            f"{host}: Test CUDA failure common.cu:1279 'unspecified launch failure'",
        ]
    else:
        peer = next((h for h in hosts if h != host), host)
        cause = [
            f"{host}:{pid}:{pid + 90} [0] NCCL WARN NET/IB : Got completion from peer {peer} with status=12 "
            "opcode=0 len=0 vendor err 129 (Recv)",
            f"{host}: Test NCCL failure common.cu:1279 'remote process exited or there was a network error / '",
        ]
    return [
        *cause,
        f" .. {host} pid {pid}: Test failure common.cu:1105",
        "--------------------------------------------------------------------------",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "--------------------------------------------------------------------------",
    ]
