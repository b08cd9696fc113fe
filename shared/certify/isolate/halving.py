"""``halving``: upstream NVCRE's ``testScale: diagnose`` algorithm, the baseline.

Follows the pseudo-code of research/nvcre.md §3.2: screening (one group per topology domain, or
chunks of ceil(sqrt N) in name order), one inter-domain group of representatives, binary
bisection of failed groups down to ``minGroupSize``, cross-boundary probes when both halves of a
failed group pass (an infrastructure fault between them), and confirmation pairs of each suspect
with a healthy reference. Deliberately not copied: upstream may record every node of any failed
group as failed; here only confirmed suspects are blamed.

The algorithm is a state machine; to stay a pure function of the history it is replayed from the
start on every call (a few microseconds per round).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shared.certify.isolate import model


@dataclass
class _Probe:
    a: tuple[str, ...]
    b: tuple[str, ...]
    rounds: int = 0


class _Machine:
    def __init__(self, nodes: Sequence[model.Node], settings: model.Settings) -> None:
        self.nodes = nodes
        self.min = max(settings.min_group_size, 1)
        self.size = settings.screen_size
        self.stage = "screening"
        self.healthy: set[str] = set()
        self.suspects: set[str] = set()
        self.screen_failed: list[tuple[str, ...]] = []
        self.siblings: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        self.probes: list[_Probe] = []
        self.infra: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def start(self) -> model.Plan:
        domains = model.by_domain(self.nodes)
        if len(domains) > 1 and min(len(v) for v in domains.values()) >= 2 and self.size is None:
            return model.Plan("screening", tuple(tuple(v) for v in domains.values()))
        names = sorted(n.name for n in self.nodes)
        k = self.size or max(math.ceil(math.sqrt(len(names))), 2)
        return model.Plan("screening", tuple(tuple(names[i : i + k]) for i in range(0, len(names), k)))

    def done(self, message: str, faulty: dict[str, str] | None = None) -> model.Verdict:
        return model.Verdict(
            faulty=faulty or {}, infrastructure=tuple(self.infra), healthy=frozenset(self.healthy), message=message
        )

    def feed(self, result: model.RoundResult) -> model.Decision:
        failed = [t.nodes for t in result.tests if not t.passed]
        passed = [t.nodes for t in result.tests if t.passed]
        if self.stage != "cross":
            for nodes in passed:
                self.healthy.update(nodes)
        handler = {
            "screening": self._screened,
            "inter": self._inter,
            "bisection": self._bisected,
            "cross": self._crossed,
            "confirmation": self._confirmed,
        }[self.stage]
        return handler(result, failed, passed)

    def _screened(
        self, result: model.RoundResult, failed: list[tuple[str, ...]], passed: list[tuple[str, ...]]
    ) -> model.Decision:
        self.screen_failed = failed
        for nodes in failed:
            self.suspects.update(nodes)
        reps = tuple(next(n for n in nodes if n in self.healthy) for nodes in passed)
        if len(reps) >= 2:
            self.stage = "inter"
            return model.Plan("inter", (reps,))
        if not self.suspects:
            return self.done("all domains healthy, no faults detected")
        self.suspects = set()
        return self._next(self.screen_failed)

    def _inter(
        self, result: model.RoundResult, failed: list[tuple[str, ...]], passed: list[tuple[str, ...]]
    ) -> model.Decision:
        to_split = (self.screen_failed if self.suspects else []) + failed
        self.suspects = set()
        if not to_split:
            return self.done("all screening passed, no faults detected")
        return self._next(to_split)

    def _bisected(
        self, result: model.RoundResult, failed: list[tuple[str, ...]], passed: list[tuple[str, ...]]
    ) -> model.Decision:
        to_split = []
        for nodes in failed:
            if len(nodes) <= self.min:
                self.suspects.update(nodes)
            else:
                to_split.append(nodes)
        ok = set(passed)
        both = [(a, b) for a, b in self.siblings if a in ok and b in ok]
        if both:
            for a, b in both:
                self.probes.append(_Probe(a, b))
                self.healthy.difference_update(a + b)
            self.stage = "cross"
            return self._probe_plan()
        if not failed and not self.suspects:
            return self.done("bisection complete: all groups passed")
        return self._next(to_split)

    def _probe_plan(self) -> model.Plan:
        groups = []
        for probe in self.probes:
            mid_a, mid_b = max(len(probe.a) // 2, 1), max(len(probe.b) // 2, 1)
            groups.append(probe.a[:mid_a] + probe.b[:mid_b])
            second = probe.a[mid_a:] + probe.b[mid_b:]
            if len(second) >= 2:
                groups.append(second)
        return model.Plan("cross", tuple(groups))

    def _crossed(
        self, result: model.RoundResult, failed: list[tuple[str, ...]], passed: list[tuple[str, ...]]
    ) -> model.Decision:
        outcome = {t.nodes: t.passed for t in result.tests}
        remaining = []
        for probe in self.probes:
            mid_a, mid_b = max(len(probe.a) // 2, 1), max(len(probe.b) // 2, 1)
            mix0, mix1 = probe.a[:mid_a] + probe.b[:mid_b], probe.a[mid_a:] + probe.b[mid_b:]
            f0, f1 = not outcome.get(mix0, True), not outcome.get(mix1, True)
            if not f0 and not f1:
                self.healthy.update(probe.a + probe.b)
            elif f0 and f1:
                self.infra.append((probe.a, probe.b))
            else:
                probe.rounds += 1
                if probe.rounds > 4 or (len(probe.a) <= 2 and len(probe.b) <= 2):
                    self.infra.append((probe.a, probe.b))
                    continue
                probe.a, probe.b = (probe.a[:mid_a], probe.b[:mid_b]) if f0 else (probe.a[mid_a:], probe.b[mid_b:])
                remaining.append(probe)
        self.probes = remaining
        if self.probes:
            return self._probe_plan()
        if self.suspects:
            return self._next([])
        if self.infra:
            return self.done(f"diagnosis complete: {len(self.infra)} infrastructure fault(s) detected")
        return self.done("cross-boundary probing complete: no faults confirmed")

    def _confirmed(
        self, result: model.RoundResult, failed: list[tuple[str, ...]], passed: list[tuple[str, ...]]
    ) -> model.Decision:
        faulty = {nodes[0]: f"failed with healthy reference {nodes[1]}" for nodes in failed}
        self.healthy.difference_update(faulty)
        if not faulty:
            return self.done("all suspects cleared, no faults confirmed")
        return self.done(f"diagnosis complete: {len(faulty)} faulty node(s) confirmed", faulty)

    def _next(self, to_split: list[tuple[str, ...]]) -> model.Decision:
        groups: list[tuple[str, ...]] = []
        self.siblings = []
        converged = True
        for nodes in to_split:
            ordered = tuple(sorted(nodes))
            if len(ordered) <= self.min:
                groups.append(ordered)
            else:
                converged = False
                mid = len(ordered) // 2
                groups += [ordered[:mid], ordered[mid:]]
                self.siblings.append((ordered[:mid], ordered[mid:]))
        if not converged:
            self.stage = "bisection"
            return model.Plan("bisection", tuple(groups))
        for nodes in groups:
            self.suspects.update(nodes)
        self.suspects -= self.healthy
        suspects = sorted(self.suspects)
        refs = sorted(self.healthy)
        if not suspects:
            return self.done(
                "no suspects remain"
                if not self.infra
                else f"diagnosis complete: {len(self.infra)} infrastructure fault(s) detected"
            )
        if not refs:
            return self.done(
                f"no healthy reference node; {len(suspects)} suspect(s) marked failed",
                {s: "no healthy reference to confirm against" for s in suspects},
            )
        self.stage = "confirmation"
        return model.Plan("confirmation", tuple((s, refs[i % len(refs)]) for i, s in enumerate(suspects)))


def halving(
    nodes: Sequence[model.Node], history: Sequence[model.RoundResult], settings: model.Settings
) -> model.Decision:
    """Upstream's diagnose algorithm as a pure function of the results so far."""
    machine = _Machine(nodes, settings)
    decision: model.Decision = machine.start()
    for number, result in enumerate(history, start=1):
        if number > settings.max_rounds:
            return machine.done(f"stopped after {settings.max_rounds} rounds")
        decision = machine.feed(result)
        if isinstance(decision, model.Verdict):
            return decision
    return decision
