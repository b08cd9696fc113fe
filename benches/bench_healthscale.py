"""``nvsentinel run --enforce`` at 100, 1,000 and 10,000 simulated nodes: a storm of fatal events.

The same end-to-end run as the nvsentinel table (:func:`benches.bench_health._end_to_end`: the
simulated cluster and the controller in their own processes, 10 ms latency on every request,
metrics served, a CloudEvents sink for every outcome), at three cluster sizes with min(nodes,
1,000) fatal events. The storm is timed from the first publish to the last cordon once the
controller's node informer has made its one listing: the steady state, not the start-up. CPU
seconds of both processes during the storm are what the throughput costs whatever else shares the
machine; the load average says how much did.
"""

from __future__ import annotations

from typing import Any

from benches import bench_health

NAME = "health-scale"
SCALES = (100, 1000, 10000)
EVENTS = 1000
TARGET_RATE = 75.0
TARGET_RSS = 300.0


def _rate(run: dict[str, Any]) -> float:
    elapsed = float(run["elapsed"])
    return float(run["cordoned"]) / elapsed if elapsed > 0 else 0.0  # NaN: never all cordoned


def table(rows: list[dict[str, Any]]) -> list[str]:
    """The scaling table in markdown, a row per cluster size, each with its gap to the targets."""
    out = [
        "| nodes | fatal events | quarantine throughput | controller CPU | sim CPU | informer's first list "
        "| peak RSS | load (1 min) | target | gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in rows:
        rate = _rate(run)
        gap = []
        if rate < TARGET_RATE:
            gap.append(f"{TARGET_RATE - rate:.0f} nodes/s short")
        if run["rss"] > TARGET_RSS:
            gap.append(f"{run['rss'] - TARGET_RSS:.0f} MB over")
        ready = "—" if run["ready"] is None else f"{run['ready']:.1f} s"
        out.append(
            f"| {run['nodes']:,} | {run['events']:,} | {rate:.0f} nodes/s ({run['cordoned']:,} cordons in "
            f"{run['elapsed']:.1f} s) | {run['controller_cpu']:.1f} s | {run['sim_cpu']:.1f} s | {ready} "
            f"| {run['rss']:.0f} MB | {run['load']:.1f} | ≥ {TARGET_RATE:.0f} nodes/s, ≤ {TARGET_RSS:.0f} MB "
            f"| {'; '.join(gap) or 'met'} |"
        )
    return out


def run() -> str:
    rows = [
        bench_health._end_to_end(node_count=count, event_count=min(count, EVENTS), deadline_s=600) for count in SCALES
    ]
    return "\n".join(table(rows))
