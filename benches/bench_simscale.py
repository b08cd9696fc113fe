"""The emulator's API rows of ``bench_sim`` with 10,000 nodes stored, against part 1's targets.

``bench_sim`` measures small GETs and patches on an empty store; here the same client (one
keep-alive HTTPS connection from a separate process) first creates 10,000 nodes, then reads and
patches nodes spread over all of them, and lists them with and without pages, so a cost that
grows with the store shows. Pods are not created (``bench_sim`` measures 100,000 of them).
"""

from __future__ import annotations

import json
import os
import statistics
import time

from benches import bench_sim

NAME = "sim-scale"
NODES = 10_000
GETS = 5000
PATCHES = 2000


def _gets(target: bench_sim.kubeconfig.Target, count: int) -> str:
    client = bench_sim.Client(target)
    started = time.perf_counter()
    for n in range(count):
        client.call("GET", f"/api/v1/nodes/node-{(n * 7919) % NODES:05d}")
    elapsed = time.perf_counter() - started
    client.close()
    return bench_sim.rate(count, elapsed)


def _patches(target: bench_sim.kubeconfig.Target, count: int) -> str:
    client = bench_sim.Client(target)
    started = time.perf_counter()
    for n in range(count):
        client.call(
            "PATCH",
            f"/api/v1/nodes/node-{(n * 7919) % NODES:05d}",
            {"metadata": {"labels": {"round": str(n)}}},
            "application/strategic-merge-patch+json",
        )
    elapsed = time.perf_counter() - started
    client.close()
    return bench_sim.rate(count, elapsed)


def _paged_list(target: bench_sim.kubeconfig.Target, limit: int) -> str:
    client = bench_sim.Client(target, timeout=300)
    times, pages, items = [], 0, 0
    for _ in range(3):
        started, token, pages, items = time.perf_counter(), "", 0, 0
        while True:
            page = json.loads(
                client.call("GET", f"/api/v1/nodes?limit={limit}" + (f"&continue={token}" if token else ""))
            )
            pages, items = pages + 1, items + len(page["items"])
            token = page["metadata"].get("continue") or ""
            if not token:
                break
        times.append(time.perf_counter() - started)
    client.close()
    return f"{statistics.median(times):.3f} s for {items} nodes in {pages} pages (median of 3)"


def run() -> str:
    loads = [os.getloadavg()[0]]
    rows = []
    with bench_sim.emulator() as (_process, target):
        took = bench_sim._create_many(target, [("/api/v1/nodes", bench_sim._node(n)) for n in range(NODES)])
        rows.append(("node creates, one keep-alive connection", bench_sim.rate(NODES, took), "—"))
        loads.append(os.getloadavg()[0])
        rows.append((f"GETs of single nodes among {NODES:,}, one connection", _gets(target, GETS), "≥ 2,000/s"))
        loads.append(os.getloadavg()[0])
        rows.append(
            (f"strategic-merge patches of nodes among {NODES:,}, one connection", _patches(target, PATCHES), "≥ 500/s")
        )
        loads.append(os.getloadavg()[0])
        rows.append(
            (f"list {NODES:,} nodes, pages of 500 (as `shared.kube.rest` reads)", _paged_list(target, 500), "—")
        )
        rows.append((f"list {NODES:,} nodes, pages of 5,000", _paged_list(target, 5000), "—"))
        loads.append(os.getloadavg()[0])
    lines = [
        f"One emulator process holding {NODES:,} nodes, driven from this process; 1-minute load average "
        f"{min(loads):.1f}–{max(loads):.1f} during the run.",
        "",
        "| measurement | ours | target |",
        "|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)
