"""Failure isolation: our default strategy against upstream's ``halving``, on one cost model.

Strategies are pure functions, so no cluster is needed: a fault oracle (shared/certify/isolate/
trial.py) answers each group test. Scenarios: N in {16, 64, 232, 1024} nodes (racks of 16; two of 8 at N = 16) x d in
{0, 1, 2, 5} hard-faulty nodes, a flaky set (2 nodes failing each test with p = 0.5) and a
rack-link set (one faulty link between two racks), 20 seeds each; medians per cell.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Sequence

from shared.certify.isolate import STRATEGIES, model, trial

NAME = "isolation"
SEEDS = 20
SIZES = (16, 64, 232, 1024)
FAULTS = (0, 1, 2, 5)
RACK = 16
STARTUP_MIN = 3.5
"""Minutes every test pays whatever its size: scheduling, image pull, NCCL bootstrap."""
PER_DOUBLING_MIN = 0.5
"""Extra minutes each time the group doubles (ring/tree steps of the collective)."""


def test_minutes(size: int) -> float:
    return STARTUP_MIN + PER_DOUBLING_MIN * math.log2(max(size, 1))


def _wall(groups: Sequence[tuple[str, ...]]) -> float:
    """A round's wall time: groups sharing a node wait for each other (greedy waves)."""
    waves: list[tuple[set[str], float]] = []
    for group in groups:
        for i, (used, longest) in enumerate(waves):
            if used.isdisjoint(group):
                used.update(group)
                waves[i] = (used, max(longest, test_minutes(len(group))))
                break
        else:
            waves.append((set(group), test_minutes(len(group))))
    return sum(longest for _, longest in waves)


def _cell(strategy: str, count: int, scenario: str, d: int, seed: int) -> tuple[float, ...]:
    per_rack = RACK if count > RACK else count // 2  # at least two racks, so a link can fail
    nodes = [model.Node(f"node-{i:04d}", f"rack-{i // per_rack}") for i in range(count)]
    names = [n.name for n in nodes]
    rng = random.Random(seed * 7919 + count)
    domain = {n.name: n.domain for n in nodes}
    hard, flaky, links = frozenset[str](), frozenset[str](), frozenset[tuple[str, str]]()
    if scenario == "hard":
        hard = frozenset(rng.sample(names, d))
    elif scenario == "flaky":
        flaky = frozenset(rng.sample(names, 2))
    else:
        racks = sorted(set(domain.values()))
        a, b = rng.sample(racks, 2)
        links = frozenset({(a, b)})
    oracle = trial.Oracle(hard=hard, flaky=flaky, links=links, domain=domain, rng=random.Random(seed))
    done = trial.run(STRATEGIES[strategy], nodes, oracle)
    bad = hard | flaky
    found = set(done.verdict.faulty)
    precision = len(found & bad) / len(found) if found else 1.0
    recall = len(found & bad) / len(bad) if bad else 1.0
    if links:
        recall = 1.0 if done.verdict.infrastructure else 0.0
        precision = 1.0 if not found else 0.0
    tests = [t for r in done.history for t in r.tests]
    node_minutes = sum(len(t.nodes) * test_minutes(len(t.nodes)) for t in tests)
    wall = sum(_wall([t.nodes for t in r.tests]) for r in done.history)
    return float(len(done.history)), float(len(tests)), node_minutes, wall, precision, recall


def _medians(strategy: str, count: int, scenario: str, d: int) -> tuple[float, ...]:
    cells = [_cell(strategy, count, scenario, d, seed) for seed in range(SEEDS)]
    return tuple(statistics.median(c[i] for c in cells) for i in range(6))


def run() -> str:
    started = time.perf_counter()
    lines = [
        "Cost model: a test of g nodes takes "
        f"{STARTUP_MIN} + {PER_DOUBLING_MIN}·log2(g) minutes (start-up plus a size-dependent run); "
        "node-minutes = Σ g × t(g); a round lasts as long as its longest test, and groups of one round "
        "that share a node run one after the other. Calibration: halving at 232 nodes with one "
        "hard fault takes 6 rounds and about 28 minutes (upstream's estimate: ~7 rounds, ~28 min).",
        "",
        "Medians over 20 seeds. Columns per strategy: rounds / tests / node-minutes / wall minutes / "
        "precision / recall. `ratio` is ours ÷ halving for wall and node-minutes.",
        "",
        "| N | faults | adaptive (ours) | halving (upstream) | ratio wall | ratio node-min |",
        "|---|---|---|---|---|---|",
    ]
    scenarios = [("hard", d) for d in FAULTS] + [("flaky", 2), ("link", 0)]
    for count in SIZES:
        for scenario, d in scenarios:
            ours = _medians("adaptive", count, scenario, d)
            theirs = _medians("halving", count, scenario, d)
            label = {"hard": f"d={d}", "flaky": "2 flaky (p=0.5)", "link": "rack link"}[scenario]

            def show(m: tuple[float, ...]) -> str:
                return f"{m[0]:.0f} / {m[1]:.0f} / {m[2]:.0f} / {m[3]:.1f} / {m[4]:.2f} / {m[5]:.2f}"

            lines.append(f"| {count} | {label} | {show(ours)} | {show(theirs)} | "
                         f"{ours[3] / theirs[3]:.0%} | {ours[2] / theirs[2]:.0%} |")
    lines += ["", f"_Computed in {time.perf_counter() - started:.0f} s._"]
    return "\n".join(lines)
