"""``aicr snapshot``, ``validate`` and ``diff`` against simulated clusters of 100, 1,000 and 10,000 nodes.

For each size a simulated cluster runs in its own process (``python -m shared.sim serve --nodes N
--gpu h100``, a rack per 64 nodes) and is seeded with the 19-component recipe of the seed example.
Each command is the real console script in a fresh process, so the figures include start-up; median
of 5 runs (3 at 10,000 nodes). Three figures per run:

- **wall**: real time of the command, what a user waits;
- **CPU**: user + system time of the command's own process (``os.wait4``), which the other work on
  a shared machine does not inflate much;
- **sim CPU**: user + system time the simulator process spent meanwhile (``/proc/<pid>/stat``), the
  API server's share of the wall time.

The seed is posted to the simulator's control endpoint here with a long timeout: at 10,000 nodes it
takes longer than the 10 s the ``shared.sim seed`` command waits.
"""

from __future__ import annotations

import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

NAME = "cluster"
SIZES = (100, 1000, 10_000)
RUNS = {100: 5, 1000: 5, 10_000: 3}
NODES_PER_RACK = 64
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
SEED = ["--service", "eks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "inference", "--platform", "dynamo"]
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    sim_cpu: float


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


LOADS: list[float] = []
"""The 1-minute load average seen before each timed command."""


def _timed(argv: list[str], sim_pid: int, *, ok: tuple[int, ...] = (0,)) -> Sample:
    LOADS.append(os.getloadavg()[0])
    sim_before = _proc_cpu(sim_pid)
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in ok:
        raise RuntimeError(f"{' '.join(argv)} exited {process.returncode}: {err[-500:]!r}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, _proc_cpu(sim_pid) - sim_before)


def _seed(config: Path, recipe: Path) -> float:
    from shared import yamlio
    from shared.sim import control, recipevalues
    from shared.sim.apiserver import kubeconfig

    target = kubeconfig.read(config)
    document = yamlio.load_file(recipe)
    body = {"recipe": document, "breaks": {}, "kernels": {}, "values": recipevalues.merged(document), "driver": None}
    request = urllib.request.Request(
        f"{target.server}{control.PREFIX}seed",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {target.token}"},
    )
    started = time.perf_counter()
    context = ssl.create_default_context(cadata=target.ca_pem)
    with urllib.request.urlopen(request, timeout=600, context=context) as response:
        response.read()
    return time.perf_counter() - started


COMMANDS = (
    ("snapshot", "`aicr snapshot -o file`", "≤ 5 s"),
    ("validate", "`aicr validate` (19 components, live snapshot)", "≤ 5 s"),
    ("diff-files", "`aicr diff` of two snapshot files", "≤ 2 s"),
    ("diff-live", "`aicr diff` baseline file vs live cluster", "—"),
)


def _size(nodes: int, recipe: Path, work: Path) -> tuple[dict[str, list[Sample]], dict[str, str]]:
    config = work / f"kubeconfig-{nodes}"
    racks = max(1, nodes // NODES_PER_RACK)
    serve = ["-m", "shared.sim", "serve", "--port", "0", "--nodes", str(nodes), "--gpu", "h100", "--racks", str(racks)]
    server = subprocess.Popen(
        [sys.executable, *serve, "--kubeconfig-out", str(config)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    facts: dict[str, str] = {}
    try:
        assert server.stdout is not None
        if not server.stdout.readline().startswith("ready "):
            raise RuntimeError("the simulated cluster did not start")
        facts["seed"] = f"{_seed(config, recipe):.1f} s"
        kc = ["--kubeconfig", str(config)]
        baseline = work / f"baseline-{nodes}.yaml"
        subprocess.run([str(BIN / "aicr"), "snapshot", *kc, "-o", str(baseline)], check=True)
        facts["snapshot size"] = f"{baseline.stat().st_size / 1e6:.1f} MB"
        argv = {
            "snapshot": [str(BIN / "aicr"), "snapshot", *kc, "-o", str(work / "s.yaml")],
            "validate": [str(BIN / "aicr"), "validate", "--recipe", str(recipe), *kc],
            "diff-files": [str(BIN / "aicr"), "diff", "--baseline", str(baseline), "--target", str(baseline)],
            "diff-live": [str(BIN / "aicr"), "diff", "--baseline", str(baseline), *kc],
        }
        samples: dict[str, list[Sample]] = {key: [] for key in argv}
        for _ in range(RUNS[nodes]):
            for key, command in argv.items():
                samples[key].append(_timed(command, server.pid))
    finally:
        server.terminate()
        server.communicate(timeout=120)
    return samples, facts


def _median(samples: list[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


def run() -> str:
    LOADS.clear()
    results: dict[int, dict[str, list[Sample]]] = {}
    facts: dict[int, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
        work = Path(folder)
        recipe = work / "recipe.yaml"
        subprocess.run([str(BIN / "aicr"), "recipe", *SEED, "-o", str(recipe)], check=True)
        for nodes in SIZES:
            results[nodes], facts[nodes] = _size(nodes, recipe, work)
    lines = [
        "Simulated H100 nodes (a rack per 64), 19 seeded components; real console scripts in fresh processes, "
        f"median of {RUNS[100]} ({RUNS[10_000]} at 10,000 nodes). Wall is real time; CPU is the command "
        "process's user + system time; sim CPU is what the simulator process (the API server) spent meanwhile. "
        "The 1-minute load average read "
        f"{min(LOADS):.1f}–{max(LOADS):.1f} (median {statistics.median(LOADS):.1f}) before the timed commands: "
        "wall times carry whatever else shares the 2 cores, CPU times much less.",
        "",
        "Seeding and baseline snapshot size: "
        + "; ".join(f"{n:,} nodes: seed {f['seed']}, snapshot {f['snapshot size']}" for n, f in facts.items())
        + " (the seed is the simulator's work, not aicr's)"
        + ".",
    ]
    for key, title, target in COMMANDS:
        lines += [
            "",
            f"{title} (target at 10,000 nodes: {target})",
            "",
            "| nodes | wall | CPU | sim CPU | added CPU per 1,000 added nodes |",
            "|---|---|---|---|---|",
        ]
        previous: tuple[int, float] | None = None
        for nodes in SIZES:
            s = results[nodes][key]
            wall, cpu, sim = (_median(s, f) for f in ("wall", "cpu", "sim_cpu"))
            worst = max(x.wall for x in s)
            marginal = f"{(cpu - previous[1]) / (nodes - previous[0]) * 1000:.3f} s" if previous else "—"
            lines.append(f"| {nodes:,} | {wall:.2f} s (max {worst:.2f}) | {cpu:.2f} s | {sim:.2f} s | {marginal} |")
            previous = (nodes, cpu)
    return "\n".join(lines)
