"""Failure isolation: our default strategy against upstream's ``halving``, on one cost model.

Strategies are pure functions, so no cluster is needed: a fault oracle (shared/certify/isolate/
trial.py) answers each group test. Scenarios: N in {16, 64, 232, 1024} nodes (racks of 16; two of 8 at N = 16) x d in
{0, 1, 2, 5} hard-faulty nodes, a flaky set (2 nodes failing each test with p = 0.5) and a
rack-link set (one faulty link between two racks), 20 seeds each; medians per cell.
"""

from __future__ import annotations

import random
import statistics
import time

from shared.certify.isolate import STRATEGIES, model, trial

NAME = "isolation"
SEEDS = 20
SIZES = (16, 64, 232, 1024)
FAULTS = (0, 1, 2, 5)
RACK = 16
STARTUP_MIN, PER_DOUBLING_MIN = model.STARTUP_MIN, model.PER_DOUBLING_MIN
"""The one cost model (shared/certify/isolate/model.py), shared with ``certification render``."""


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
        ((a, b),) = links
        sides = {frozenset(n for n in names if domain[n] == rack) for rack in (a, b)}
        named = [{frozenset(x), frozenset(y)} for x, y in done.verdict.infrastructure]
        recall = 1.0 if sides in named else 0.0
        precision = 1.0 if not found and all(pair == sides for pair in named) else 0.0
    tests = [t for r in done.history for t in r.tests]
    node_minutes = model.node_minutes([t.nodes for t in tests])
    wall = sum(model.round_minutes([t.nodes for t in r.tests]) for r in done.history)
    return float(len(done.history)), float(len(tests)), node_minutes, wall, precision, recall


Cell = tuple[tuple[float, ...], ...]
"""Per seed: rounds, tests, node-minutes, wall minutes, precision, recall."""


def _cells(strategy: str, count: int, scenario: str, d: int) -> Cell:
    return tuple(_cell(strategy, count, scenario, d, seed) for seed in range(SEEDS))


def _median(cells: Cell, i: int) -> float:
    return statistics.median(c[i] for c in cells)


def _show(cells: Cell) -> str:
    m = [_median(cells, i) for i in range(6)]
    return f"{m[0]:.0f} / {m[1]:.0f} / {m[2]:.0f} / {m[3]:.1f} / {m[4]:.2f} / {m[5]:.2f}"


def _check(scenario: str, d: int, ours: Cell, theirs: Cell) -> tuple[str, str, bool]:
    """(target, measured, met) for one cell, as the issue states the targets (medians per cell)."""
    wall = _median(ours, 3) / _median(theirs, 3)
    node_min = _median(ours, 2) / _median(theirs, 2)
    p, r = _median(ours, 4), _median(ours, 5)
    if scenario == "hard" and d == 0:
        return "wall ≤ 100 %", f"{wall:.0%}", wall <= 1.0
    if scenario == "hard":
        return (
            "wall ≤ 50 %, node-min ≤ 100 %, P = R = 1",
            f"{wall:.0%}, {node_min:.0%}, {p:.2f} / {r:.2f}",
            wall <= 0.5 and node_min <= 1.0 and p == 1.0 and r == 1.0,
        )
    mean_p = statistics.mean(c[4] for c in ours)
    mean_r = statistics.mean(c[5] for c in ours)
    if scenario == "flaky":
        wrong = sum(1 for c in ours if c[4] < 1.0)
        return (
            "P = 1, R ≥ 0.95",
            f"{p:.2f} / {r:.2f} (mean {mean_p:.2f} / {mean_r:.2f}; {wrong} of {SEEDS} runs blame a healthy node)",
            p == 1.0 and r >= 0.95,
        )
    found = sum(1 for c in ours if c[5] == 1.0 and c[4] == 1.0)
    return (
        "link reported with its two sides, no node blamed",
        f"{found} of {SEEDS} runs (wall {wall:.0%})",
        found == SEEDS,
    )


def run() -> str:
    started = time.perf_counter()
    scenarios = [("hard", d) for d in FAULTS] + [("flaky", 2), ("link", 0)]
    results = {
        (count, scenario, d): (_cells("adaptive", count, scenario, d), _cells("halving", count, scenario, d))
        for count in SIZES
        for scenario, d in scenarios
    }
    calibration = results[(232, "hard", 1)][1]
    lines = [
        f"Cost model (`model.test_minutes`): a test of g nodes takes {STARTUP_MIN} + {PER_DOUBLING_MIN}·log2(g) "
        "minutes (start-up plus a size-dependent run); node-minutes = Σ g × t(g); a round lasts as long as its "
        "longest test, and groups of one round that share a node run one after the other. Calibration: halving "
        f"at 232 nodes with one hard fault takes {_median(calibration, 0):.0f} rounds and "
        f"{_median(calibration, 3):.0f} minutes (upstream's estimate: ~7 rounds, ~28 min).",
        "",
        f"Medians over {SEEDS} seeds. Columns per strategy: rounds / tests / node-minutes / wall minutes / "
        "precision / recall. `ratio` is ours ÷ halving for wall and node-minutes.",
        "",
        "| N | faults | adaptive (ours) | halving (upstream) | ratio wall | ratio node-min |",
        "|---|---|---|---|---|---|",
    ]
    checks = [
        "",
        "Targets (medians per cell, ours against halving):",
        "",
        "| N | faults | target | measured | met |",
        "|---|---|---|---|---|",
    ]
    for (count, scenario, d), (ours, theirs) in results.items():
        label = {"hard": f"d={d}", "flaky": "2 flaky (p=0.5)", "link": "rack link"}[scenario]
        lines.append(
            f"| {count} | {label} | {_show(ours)} | {_show(theirs)} | "
            f"{_median(ours, 3) / _median(theirs, 3):.0%} | {_median(ours, 2) / _median(theirs, 2):.0%} |"
        )
        target, measured, met = _check(scenario, d, ours, theirs)
        checks.append(f"| {count} | {label} | {target} | {measured} | {'yes' if met else '**no**'} |")
    lines += [*checks, "", LIMITS, "", f"_Computed in {time.perf_counter() - started:.0f} s._"]
    return "\n".join(lines)


LIMITS = """What the model allows, and why two figures are not 1.0 in every run:

- **Flaky recall is met as a median, not as a mean.** A flaky node that passes every test it is in
  cannot be told from a healthy one. With nothing failing, a strategy must stop within halving's
  d = 0 wall time (9 minutes at 16 nodes), and every test lasts at least 3.5 minutes, so each node is
  in at most two tests: both flaky nodes pass all of them in 1/16 of the runs. And when one flaky
  node fails twice in a row (screening, then beside a reference), the history is exactly that of one
  hard fault, after which the strategy must stop within halving's node-minutes: at 1,024 nodes
  halving spends about 6 node-minutes per node and any second test of every node costs at least 8,
  so most nodes are tested once and the other flaky node, if it passed its one test (1/2), goes
  unseen. These two cases alone keep the mean recall near 0.8 for any strategy that meets the
  hard-fault targets; the median (half the runs or more find both) is 1.0.
- **A healthy node can be blamed in a flaky run, rarely.** In hard mode a node is blamed after one
  failure beside a node that passed (a hard-faulty node never passes, so this is exact for hard
  faults, and it is what makes two rounds possible). Two flaky nodes can fake it: one fails screening
  beside a healthy node and then passes, while the other, used as that node's reference, had passed
  screening and now fails. A second, different reference would cost a third round, which the 50 %
  wall target does not leave at 16 nodes (halving's 17.5 minutes allow two rounds of 4). The
  column above counts such runs; none of the hard-fault runs can be fooled this way, and from the
  first result hard faults cannot explain, the strategy switches to flaky mode, which blames only
  after two failures beside different references.
- **d = 0 costs more node-minutes than halving** (no target there): when nothing fails, the nodes are
  screened once more with new partners, since on a cluster the isolation starts from a failed run
  and an all-pass screening means that failure went unexplained."""
