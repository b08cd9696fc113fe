"""Benchmark of the simulated GPU cluster (issue 5): Jobs in virtual time, and the API under load.

One ``python -m shared.sim serve --nodes 1000 --gpu h100 --racks 32`` process at the default
speed; this process drives it over keep-alive HTTPS on 127.0.0.1:

- real seconds for a 64-node Indexed all-reduce Job (``-b 8 -e 8G``) from create to Complete
  (target ≤ 2 s), and the virtual seconds it took;
- with 100 training Jobs of 10 nodes running at once (all 1,000 nodes busy), small GETs/s and
  strategic-merge patches/s on one connection (targets of part 1: ≥ 2,000 and ≥ 500), and the
  real time until all 100 complete.

Run: ``python -m benches fabric`` (rewrites its section of docs/benchmarks.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benches.bench_sim import Client, rate  # noqa: E402 - after the path set-up
from shared.sim.apiserver import kubeconfig  # noqa: E402 - after the path set-up

NAME = "fabric"
NODES, RACKS = 1000, 32
JOBS, JOB_NODES = 100, 10


@contextmanager
def cluster() -> Iterator[tuple[kubeconfig.Target, float]]:
    with tempfile.TemporaryDirectory(prefix="bench-fabric-") as folder:
        config = Path(folder) / "kubeconfig"
        started = time.perf_counter()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "shared.sim",
                "serve",
                "--port",
                "0",
                "--kubeconfig-out",
                str(config),
                "--nodes",
                str(NODES),
                "--gpu",
                "h100",
                "--racks",
                str(RACKS),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            if not process.stdout.readline().startswith("ready "):
                raise RuntimeError("the simulated cluster did not start")
            yield kubeconfig.read(config), time.perf_counter() - started
        finally:
            process.terminate()
            process.communicate(timeout=60)


def _job(name: str, nodes: list[str], command: list[str]) -> dict[str, Any]:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}
                ]
            }
        }
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completionMode": "Indexed",
            "completions": len(nodes),
            "parallelism": len(nodes),
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": affinity,
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/pytorch:26.01-py3",
                            "command": command,
                            "resources": {"limits": {"nvidia.com/gpu": "8"}},
                        }
                    ],
                }
            },
        },
    }


def _finished(client: Client, name: str) -> str | None:
    job = json.loads(client.call("GET", f"/apis/batch/v1/namespaces/default/jobs/{name}"))
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition["type"] in ("Complete", "Failed") and condition["status"] == "True":
            return str(condition["type"])
    return None


def _virtual(client: Client) -> float:
    from datetime import datetime

    now = json.loads(client.call("GET", "/sim/v1/clock"))["now"]
    return datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp()


def bench_allreduce(target: kubeconfig.Target) -> tuple[str, str]:
    client = Client(target)
    names = [f"node-{i:03d}" for i in range(64)]
    job = _job("ar64", names, ["all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"])
    v0 = _virtual(client)
    started = time.perf_counter()
    client.call("POST", "/apis/batch/v1/namespaces/default/jobs", job)
    outcome = None
    while outcome is None and time.perf_counter() - started < 60:
        time.sleep(0.01)
        outcome = _finished(client, "ar64")
    real = time.perf_counter() - started
    virtual = _virtual(client) - v0
    client.close()
    return f"{real:.2f} s ({outcome}; {virtual:.0f} virtual s)", outcome or "timeout"


def _gets(client: Client, count: int) -> str:
    t0 = time.perf_counter()
    for _ in range(count):
        client.call("GET", "/api/v1/namespaces/default")
    return rate(count, time.perf_counter() - t0)


def _all_running(client: Client) -> bool:
    pods = json.loads(client.call("GET", "/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DRunning"))
    return len(pods["items"]) >= JOBS * JOB_NODES


def bench_under_load(target: kubeconfig.Target) -> tuple[str, str, str, str]:
    client = Client(target)
    command = ["train-bench", "--model", "nemotron5-8b", "--steps", "500"]
    started = time.perf_counter()
    for j in range(JOBS):
        nodes = [f"node-{i:03d}" for i in range(j * JOB_NODES, (j + 1) * JOB_NODES)]
        client.call("POST", "/apis/batch/v1/namespaces/default/jobs", _job(f"train-{j:03d}", nodes, command))
    burst = _gets(client, 2000)
    while not _all_running(client) and time.perf_counter() - started < 60:
        time.sleep(0.05)
    ramp = time.perf_counter() - started
    gets = _gets(client, 5000)
    count = 2000
    t0 = time.perf_counter()
    for n in range(count):
        client.call(
            "PATCH",
            "/api/v1/nodes/node-999",
            {"metadata": {"labels": {"round": str(n)}}},
            "application/strategic-merge-patch+json",
        )
    patches = rate(count, time.perf_counter() - t0)
    active = sum(1 for j in range(JOBS) if _finished(client, f"train-{j:03d}") is None)
    left = {f"train-{j:03d}" for j in range(JOBS)}
    while left and time.perf_counter() - started < 300:
        time.sleep(0.2)
        left = {name for name in left if _finished(client, name) is None}
    took = time.perf_counter() - started
    client.close()
    return (
        f"{burst}",
        f"{gets}; {active}/{JOBS} Jobs still running after the patches",
        f"{patches}",
        f"{took:.1f} s for {JOBS - len(left)}/{JOBS} Jobs ({ramp:.1f} s until all 1,000 pods Running)",
    )


def run() -> str:
    with cluster() as (target, start_seconds):
        allreduce, _ = bench_allreduce(target)
        burst, gets, patches, all_done = bench_under_load(target)
    rows = [
        (f"start `serve --nodes {NODES} --gpu h100 --racks {RACKS}` (ready line)", f"{start_seconds:.2f} s", "—"),
        ("64-node all-reduce Job (`-b 8 -e 8G`), create → Complete, speed 60", allreduce, "≤ 2 s"),
        (f"small GETs while {JOBS} Jobs × {JOB_NODES} nodes start (1,000 pods created, bound, started)", burst, "—"),
        (f"small GETs, one connection, {JOBS} training Jobs × {JOB_NODES} nodes running", gets, "≥ 2,000/s"),
        ("strategic-merge node patches, one connection, same load", patches, "≥ 500/s"),
        (f"{JOBS} concurrent 500-step training Jobs, create → all Complete", all_done, "—"),
    ]
    lines = ["| measurement | ours | target |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
