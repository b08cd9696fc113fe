"""What an isolation strategy sees and says: nodes with their topology, tests, plans and verdicts.

A strategy sees only which groups passed or failed (never a fault set), so the same strategy runs
on a cluster, in a unit test and in the benchmark. Everything here is plain frozen data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

STARTUP_MIN = 3.5
"""Minutes every test pays whatever its size: scheduling, image pull, NCCL bootstrap."""
PER_DOUBLING_MIN = 0.5
"""Extra minutes each time the group doubles (ring/tree steps of the collective)."""


@dataclass(frozen=True)
class Node:
    name: str
    domain: str = "default"
    """Topology domain: the NVLink clique when it spans nodes, else the rack."""


@dataclass(frozen=True)
class Test:
    """One group's result: ``passed`` is False for an error or a missed threshold alike."""

    nodes: tuple[str, ...]
    passed: bool


@dataclass(frozen=True)
class RoundResult:
    stage: str
    tests: tuple[Test, ...]


@dataclass(frozen=True)
class Settings:
    min_group_size: int = 2
    """Upstream's bisection stop size."""
    max_rounds: int = 20
    """A safety net: a verdict is returned by then whatever the results."""
    screen_size: int | None = None
    """Screening group size; None lets the strategy choose from the node count."""


@dataclass(frozen=True)
class Plan:
    """The next round: disjoint groups to run at once."""

    stage: str
    groups: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Verdict:
    """The end: nodes found faulty (node -> evidence), infrastructure faults and the cleared nodes."""

    faulty: dict[str, str] = field(default_factory=dict)
    infrastructure: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    healthy: frozenset[str] = frozenset()
    message: str = ""
    evidence: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """Faulty node -> the failed tests (groups as run) that name it: it failed beside references
    there, so their measurement is the node's own (a report shows it beside the node)."""


Decision = Plan | Verdict


class Strategy(Protocol):
    """A pure function: same nodes and history, same decision."""

    def __call__(self, nodes: Sequence[Node], history: Sequence[RoundResult], settings: Settings) -> Decision: ...


def chunks(names: Sequence[str], size: int) -> list[tuple[str, ...]]:
    """Near-equal consecutive chunks of at most ``size``; for ``size`` of two or more no chunk is a
    lone node (a remainder joins the chunks before it, which may then hold ``size + 1``): a group
    test on one node runs over NVLink only and says nothing about the network."""
    if not names:
        return []
    count = -(-len(names) // max(size, 1))
    if size >= 2 and count > 1 and len(names) // count < 2:
        count -= 1
    base, extra = divmod(len(names), count)
    out, start = [], 0
    for i in range(count):
        end = start + base + (1 if i < extra else 0)
        out.append(tuple(names[start:end]))
        start = end
    return out


def by_domain(nodes: Sequence[Node]) -> dict[str, list[str]]:
    domains: dict[str, list[str]] = {}
    for node in sorted(nodes, key=lambda n: n.name):
        domains.setdefault(node.domain, []).append(node.name)
    return dict(sorted(domains.items()))


def test_minutes(size: int) -> float:
    """The one cost model: a test of ``size`` nodes takes a fixed start-up plus a size-dependent run.

    Calibrated so that ``halving`` at 232 nodes with one faulty node takes about 7 rounds and
    28 minutes, as upstream estimates; the benchmark and ``certification render`` both use it.
    """
    return STARTUP_MIN + PER_DOUBLING_MIN * math.log2(max(size, 1))


def round_minutes(groups: Sequence[Sequence[str]]) -> float:
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


def node_minutes(groups: Sequence[Sequence[str]]) -> float:
    """Node-minutes of a set of tests: every node of a test is busy for the whole test."""
    return sum(len(g) * test_minutes(len(g)) for g in groups)
