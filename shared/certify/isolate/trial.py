"""A fault oracle and the loop that drives a strategy to its verdict, without a cluster.

The oracle decides each test the way the simulated fabric does (OR model): a group fails when it
holds a node with a hard fault, with probability p for each flaky node it holds, and when it spans
the two domains of a faulty link. The strategy never sees the oracle, only pass/fail per group.
Used by the property tests, the benchmark and ``certification render``'s estimate.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.certify.isolate import model


@dataclass
class Oracle:
    hard: frozenset[str] = frozenset()
    flaky: frozenset[str] = frozenset()
    flaky_p: float = 0.5
    links: frozenset[tuple[str, str]] = frozenset()
    domain: dict[str, str] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def passes(self, group: Sequence[str]) -> bool:
        if self.hard.intersection(group):
            return False
        domains = {self.domain.get(n, "") for n in group}
        if any(a in domains and b in domains for a, b in self.links):
            return False
        return all(self.rng.random() >= self.flaky_p for n in sorted(group) if n in self.flaky)


@dataclass(frozen=True)
class Trial:
    verdict: model.Verdict
    history: tuple[model.RoundResult, ...]


def run(
    strategy: model.Strategy,
    nodes: Sequence[model.Node],
    oracle: Oracle,
    *,
    settings: model.Settings = model.Settings(),
    first: Sequence[Sequence[str]] | None = None,
) -> Trial:
    """Drive ``strategy`` until it returns a verdict; ``first`` is an initial round it did not plan.

    As on a cluster, an isolation starts only when that round failed: when it passed, the trial
    ends there with no node blamed (``certification run`` passes the category)."""
    history: list[model.RoundResult] = []
    if first is not None:
        history.append(model.RoundResult("full-scale", tuple(model.Test(tuple(g), oracle.passes(g)) for g in first)))
        if all(t.passed for t in history[0].tests):
            names = frozenset(n for g in first for n in g)
            return Trial(model.Verdict(healthy=names, message="the first round passed"), tuple(history))
    for _ in range(settings.max_rounds + 2):
        decision = strategy(nodes, history, settings)
        if isinstance(decision, model.Verdict):
            return Trial(decision, tuple(history))
        history.append(
            model.RoundResult(decision.stage, tuple(model.Test(g, oracle.passes(g)) for g in decision.groups))
        )
    raise AssertionError("strategy did not reach a verdict")  # max_rounds guards every strategy
