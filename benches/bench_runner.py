"""The certification runner's own time per round at 1,024 nodes on the simulated cluster.

An in-process ``SimServer`` in paused virtual time holds 1,024 H100 nodes in 64 racks of 16 with
the workload operators installed; a Certification of ``communication/nccl-all-reduce`` under the
threshold ``busBandwidthGBps >= 300`` is stepped by ``shared.certify.runner.step`` as
``nvcrectl certification run --wait`` steps it, the cluster running 20 virtual seconds between two
steps. Scenarios: no fault (one full-scale round) and two slow NICs (``nic=0.4``, seeded), which
the runner isolates over several rounds.

**Runner time** is the CPU time of the thread that calls ``runner.step`` (``time.thread_time``):
its own planning, rendering, request encoding and response decoding. The simulator answers in
other threads of the same process, so its work is not counted, nor is the time the runner waits
for it; **step wall** is the real time of the ``step`` calls, the simulator's work included. Both
are summed over the steps of each round (a round's steps plan it, launch its groups, poll them
and collect them).
"""

from __future__ import annotations

import functools
import os
import statistics
import time
from collections import defaultdict
from typing import Any

from benches.bench_isolation import gpu_cluster

NAME = "runner"
NODES = 1024
RACK = 16
LIMIT = {"busBandwidthGBps": "value >= 300"}
STEP_SECONDS = 20.0
SETTLE_SECONDS = 600.0
SCENARIOS = (("no fault", ()), ("2 slow NICs", ("node-0137:nic=0.4", "node-0802:nic=0.4")))


def _run(server: Any, faults: tuple[str, ...]) -> tuple[list[tuple[int, int, float, float]], str]:
    """Per round: (round, steps, runner CPU seconds, step wall seconds); and the verdict."""
    from shared import clock
    from shared.certify import models, resource, runner
    from shared.kube import crds

    with gpu_cluster(
        server, nodes=NODES, racks=NODES // RACK, faults=list(faults), seed=1, prefix="bench-runner-"
    ) as api:
        # 1,024 pods started in one step of the kubelet take longer than its default 20 s to settle
        server.kubelet.settle = functools.partial(server.kubelet.settle, timeout=SETTLE_SECONDS)
        cert = models.Certification.model_validate(
            {
                "metadata": {"name": "scale"},
                "kind": "Certification",
                "spec": {
                    "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}],
                    "thresholds": LIMIT,
                    "maxBytes": "1G",
                },
            }
        )
        crds.install(api, resource.RESOURCE)
        resource.create(api, cert, "default")
        ticker = clock.for_api_client(api)
        per_round: dict[int, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        in_progress = 1
        while True:
            cpu, wall = time.thread_time(), time.perf_counter()
            progress = runner.step(api, namespace="default", name="scale", clock=ticker)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            # A step counts in the round it started in: the one that plans round n + 1 closes round n.
            row = per_round[in_progress]
            row[0], row[1], row[2] = row[0] + 1, row[1] + cpu, row[2] + wall
            status = resource.get(api, "default", "scale")[0].status
            in_progress = max(1, len(status.categoryStatuses[0].rounds) if status.categoryStatuses else 0)
            if progress.done:
                break
            server.advance(STEP_SECONDS)
        category = status.categoryStatuses[0]
        verdict = ", ".join(f.name for f in category.failedNodes) or category.message or "passed"
    rows = [(n, int(r[0]), r[1], r[2]) for n, r in sorted(per_round.items())]
    return rows, verdict


def run() -> str:
    from shared.sim import SimServer

    loads = [os.getloadavg()[0]]
    lines = [
        f"{NODES:,} simulated H100 nodes in {NODES // RACK} racks of {RACK}; `communication/nccl-all-reduce` under "
        f"`busBandwidthGBps >= 300`, the runner stepping every {STEP_SECONDS:.0f} virtual seconds. Runner CPU: CPU "
        "time of the thread calling `runner.step` (the in-process simulator's threads excluded); step wall: real "
        "time of those calls, the simulator's answers included. Summed over each round's steps; target ≤ 5 s of "
        "runner time per round.",
        "",
        "| scenario | round | steps | runner CPU | step wall | verdict |",
        "|---|---|---|---|---|---|",
    ]
    with SimServer() as server:
        for label, faults in SCENARIOS:
            rows, verdict = _run(server, faults)
            loads.append(os.getloadavg()[0])
            for number, steps, cpu, wall in rows:
                lines.append(f"| {label} | {number} | {steps} | {cpu:.2f} s | {wall:.2f} s | {verdict} |")
            cpus = [r[2] for r in rows]
            lines.append(
                f"| {label} | all {len(rows)} | {sum(r[1] for r in rows)} | {sum(cpus):.2f} s "
                f"(median {statistics.median(cpus):.2f} per round) | {sum(r[3] for r in rows):.2f} s | |"
            )
    lines += [
        "",
        f"1-minute load average {min(loads):.1f}–{max(loads):.1f} during the run (other work on the 2 cores "
        "inflates step wall far more than runner CPU).",
    ]
    return "\n".join(lines)
