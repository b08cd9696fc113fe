"""Failure isolation: our default strategy against upstream's ``halving``, on one cost model, and
live on the simulated cluster beside that model.

Strategies are pure functions, so no cluster is needed: a fault oracle (shared/certify/isolate/
trial.py) answers each group test. Scenarios: N in {16, 64, 232, 1024} nodes (racks of 16; two of 8 at N = 16) x d in
{0, 1, 2, 5} hard-faulty nodes, a flaky set (2 nodes failing each test with p = 0.5) and a
rack-link set (one faulty link between two racks), 20 seeds each; medians per cell.

Live: the same scenarios at 16 and 64 nodes (plus one flaky node, the case of issue 15's "Done
when") run by the certification runner on the simulated cluster (an in-process SimServer in
virtual time, simulator seeds 1-20), beside the model started the same way: a full-scale first
round, isolation only when it failed. Hard faults are slow NICs (``nic=0.4``) under the threshold
``busBandwidthGBps >= 300``, flaky nodes ``flaky=0.5``, the link ``rack-a/rack-b:link=0.3``.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    lines += [*checks, "", LIMITS, "", f"_Computed in {time.perf_counter() - started:.0f} s._", ""]
    return "\n".join([*lines, live()])


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


# Live on the simulated cluster, beside the model ---------------------------------------------

LIVE_SIZES = (16, 64)
LIVE_SEEDS = range(1, 21)
LIVE_SCENARIOS = (*(("hard", d) for d in FAULTS), ("flaky", 2), ("flaky", 1), ("link", 0))
LIMIT = {"busBandwidthGBps": "value >= 300"}
STEP_SECONDS = 20.0
"""Virtual seconds the cluster runs between two runner steps (as ``certification run --wait`` polls)."""


@dataclass(frozen=True)
class Scenario:
    """One cell's topology and faults, chosen as the model's cells choose them."""

    nodes: tuple[model.Node, ...]
    hard: frozenset[str] = frozenset()
    flaky: frozenset[str] = frozenset()
    link: tuple[str, str] | None = None

    @property
    def names(self) -> list[str]:
        return [n.name for n in self.nodes]

    @property
    def racks(self) -> int:
        return len({n.domain for n in self.nodes})

    def specs(self) -> list[str]:
        """The faults as ``serve --fault`` specs."""
        specs = [f"{n}:nic=0.4" for n in sorted(self.hard)] + [f"{n}:flaky=0.5" for n in sorted(self.flaky)]
        return specs + ([f"{self.link[0]}/{self.link[1]}:link=0.3"] if self.link else [])


def _scenario(count: int, kind: str, d: int, seed: int) -> Scenario:
    per_rack = RACK if count > RACK else count // 2
    nodes = tuple(model.Node(f"node-{i:03d}", f"rack-{i // per_rack}") for i in range(count))
    names = [n.name for n in nodes]
    rng = random.Random(seed * 7919 + count)
    if kind == "hard":
        return Scenario(nodes, hard=frozenset(rng.sample(names, d)))
    if kind == "flaky":
        return Scenario(nodes, flaky=frozenset(rng.sample(names, d)))
    a, b = sorted(rng.sample(sorted({n.domain for n in nodes}), 2))
    return Scenario(nodes, link=(a, b))


def _score(scenario: Scenario, found: set[str], infrastructure: list[tuple[set[str], set[str]]]) -> tuple[float, float]:
    """Precision and recall as the model's cells count them (a link: named with its two sides)."""
    if scenario.link is not None:
        sides = {frozenset(n.name for n in scenario.nodes if n.domain == rack) for rack in scenario.link}
        named = [{frozenset(x), frozenset(y)} for x, y in infrastructure]
        return (1.0 if not found and all(p == sides for p in named) else 0.0), (1.0 if sides in named else 0.0)
    bad = scenario.hard | scenario.flaky
    precision = len(found & bad) / len(found) if found else 1.0
    return precision, (len(found & bad) / len(bad) if bad else 1.0)


@dataclass(frozen=True)
class Outcome:
    rounds: int
    tests: int
    minutes: float
    precision: float
    recall: float
    showed: int
    """Flaky nodes that failed at least one test."""
    caught: int
    """Of those, the ones blamed."""


def _outcome(
    scenario: Scenario,
    rounds: list[list[tuple[tuple[str, ...], bool]]],
    minutes: float,
    found: set[str],
    infrastructure: list[tuple[set[str], set[str]]],
) -> Outcome:
    failed = {n for r in rounds for nodes, passed in r if not passed for n in nodes}
    showed = scenario.flaky & failed
    precision, recall = _score(scenario, found, infrastructure)
    return Outcome(
        len(rounds), sum(len(r) for r in rounds), minutes, precision, recall, len(showed), len(showed & found)
    )


def _model_run(scenario: Scenario, seed: int) -> Outcome:
    domain = {n.name: n.domain for n in scenario.nodes}
    links = frozenset({scenario.link}) if scenario.link else frozenset[tuple[str, str]]()
    oracle = trial.Oracle(hard=scenario.hard, flaky=scenario.flaky, links=links, domain=domain, rng=random.Random(seed))
    done = trial.run(STRATEGIES["adaptive"], scenario.nodes, oracle, first=[scenario.names])
    rounds = [[(t.nodes, t.passed) for t in r.tests] for r in done.history]
    wall = sum(model.round_minutes([t.nodes for t in r.tests]) for r in done.history)
    sides = [(set(a), set(b)) for a, b in done.verdict.infrastructure]
    return _outcome(scenario, rounds, wall, set(done.verdict.faulty), sides)


@contextmanager
def gpu_cluster(
    server: Any, *, nodes: int, racks: int, faults: list[str], seed: int, prefix: str = "bench-isolation-"
) -> Iterator[Any]:
    """The server reset to ``nodes`` GPU nodes in ``racks`` racks with ``faults`` (``serve --fault``
    specs, dice seeded), in paused virtual time, groups run as TrainJobs as on a cluster with
    Trainer; an API client. Also the runner bench's cluster."""
    from shared.kube import client
    from shared.sim import operators
    from shared.sim.gpu import fabric

    server.reset()
    server.vclock.set_speed(0)
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        server.noderoot.root = Path(folder) / "nodes"
        server.repair.install_crds()
        server.operators.install(operators.DEFAULT)
        server.kubelet.start()
        try:
            server.add_gpu_nodes(nodes, racks=racks)
            server.fabric.rng.seed(seed)
            server.fabric.inject(fabric.parse_all(faults))
            api = client.new_client(kubeconfig=server.write_kubeconfig(Path(folder) / "kubeconfig"))
            try:
                yield api
            finally:
                client.close(api)
        finally:
            server.kubelet.stop()


def _live_run(server: Any, scenario: Scenario, seed: int) -> Outcome:
    from shared import clock
    from shared.certify import models, resource, runner
    from shared.kube import crds

    with gpu_cluster(
        server, nodes=len(scenario.nodes), racks=scenario.racks, faults=scenario.specs(), seed=seed
    ) as api:
        cert = models.Certification.model_validate(
            {
                "metadata": {"name": "isolation"},
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
        began = server.vclock.time()
        while not runner.step(api, namespace="default", name="isolation", clock=ticker).done:
            server.advance(STEP_SECONDS)
        wall = (server.vclock.time() - began) / 60
        category = resource.get(api, "default", "isolation")[0].status.categoryStatuses[0]
    rounds = [[(tuple(g.nodes), bool(g.passed)) for g in r.groups] for r in category.rounds]
    sides = [(set(f.sideA), set(f.sideB)) for f in category.infrastructureFaults]
    found = {f.name for f in category.failedNodes}
    return _outcome(scenario, rounds, wall, found, sides)


def _medians(outcomes: list[Outcome]) -> str:
    def m(values: Iterable[float]) -> float:
        return statistics.median(values)

    return (
        f"{m(o.rounds for o in outcomes):.0f} / {m(o.tests for o in outcomes):.0f} / "
        f"{m(o.minutes for o in outcomes):.1f} / {m(o.precision for o in outcomes):.2f} / "
        f"{m(o.recall for o in outcomes):.2f}"
    )


def _flaky_note(outcomes: list[Outcome]) -> str:
    showed = sum(o.showed for o in outcomes)
    caught = sum(o.caught for o in outcomes)
    wrong = sum(1 for o in outcomes if o.precision < 1.0)
    return f"{caught} of {showed} blamed, {wrong} run(s) blame a healthy node"


def live() -> str:
    """The live section: per cell the medians live and in the model, and for flaky cells the blame rule."""
    from shared.sim import SimServer

    started = time.perf_counter()
    lines = [
        "### Live on the simulated cluster, beside the model",
        "",
        f"Medians over simulator seeds {LIVE_SEEDS.start}-{LIVE_SEEDS.stop - 1}. Columns: rounds (the full-scale "
        "first round included) / tests / wall minutes / precision / recall; live wall is the simulated "
        f"cluster's virtual time from create to verdict, the runner stepping every {STEP_SECONDS:.0f} s; model wall is "
        "the cost model's. "
        "For flaky cells: flaky nodes blamed of those that failed at least one test, and runs that blame a "
        "healthy node. A run whose full-scale round passes ends there, live and in the model.",
        "",
        "| N | faults | live | model | flaky, live | flaky, model |",
        "|---|---|---|---|---|---|",
    ]
    with SimServer() as server:
        for count in LIVE_SIZES:
            for kind, d in LIVE_SCENARIOS:
                label = {"hard": f"d={d}", "flaky": f"{d} flaky (p=0.5)", "link": "rack link"}[kind]
                cases = [(_scenario(count, kind, d, seed), seed) for seed in LIVE_SEEDS]
                ours = [_live_run(server, scenario, seed) for scenario, seed in cases]
                theirs = [_model_run(scenario, seed) for scenario, seed in cases]
                notes = (_flaky_note(ours), _flaky_note(theirs)) if kind == "flaky" else ("-", "-")
                lines.append(f"| {count} | {label} | {_medians(ours)} | {_medians(theirs)} | {notes[0]} | {notes[1]} |")
    lines += ["", f"_Computed in {time.perf_counter() - started:.0f} s._"]
    return "\n".join(lines)
