"""What the results so far say once they are known not to be hard faults only (flaky mode).

A flaky node passes part of its tests, so passing clears nobody for good. Evidence is weighed by
how much a failure says about each member:

- a failure beside references (every other member was a reference when it ran) is a **solo** of
  the one member that was not: it counts against that member only, never against its references;
- any other failure counts against all its members (they are *implicated*); when it is small
  (``SMALL`` nodes or fewer) and crosses no link still in doubt, its members become **suspects**,
  tested beside references from then on. A large failure (a full-scale run of every node) makes
  its members pending only — rescreened with new partners, still usable as references — since
  otherwise nobody would be left to compare against;
- a failure spanning domains whose link no passing test has crossed, with no member that never
  passed, accuses the link instead (``accusations``).

A node is **blamed** after solos beside ``BLAME_SOLOS`` different references; a node implicated
by a failure nothing explains stays under test until it has ``FLAKY_PASSES`` clean passes since,
every other node until it has ``CLEAR_PASSES`` (one flaky node seen, there may be another).
References are the nodes that passed and are neither suspects nor blamed, most clean passes first.
The references of a round are those of the history before it, so a solo is judged as it ran.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from shared.certify.isolate import linkprobes, model, screening

FLAKY_PASSES = 10
"""Clean passes since its last failure a node needs in flaky mode: a p = 0.5 flaky node slips
through 10 in a row 0.1 % of the time, so once it has failed it is kept under test until found."""
CLEAR_PASSES = 6
"""Clean passes every other node needs once results are known to be flaky: a second flaky node
that has not failed yet slips through 6 in a row 1.6 % of the time."""
BLAME_SOLOS = 2
"""Failures beside references (with different references) that blame a node in flaky mode."""
SMALL = 3
"""Failed tests of at most this many nodes make their members suspects (a pair, or the odd triple)."""


@dataclass(frozen=True)
class Failure:
    nodes: tuple[str, ...]
    solo: str | None
    """The one member that was not a reference when the test ran (its references were)."""

    @property
    def implicated(self) -> tuple[str, ...]:
        return (self.solo,) if self.solo is not None else self.nodes


class Evidence:
    """Every test's result as flaky mode weighs it; see the module docstring."""

    def __init__(self, nodes: Sequence[model.Node]) -> None:
        self.domain = {n.name: n.domain for n in nodes}
        self.names = sorted(self.domain)
        self.passes: Counter[str] = Counter()
        self.seen: dict[str, list[tuple[bool, int]]] = defaultdict(list)
        """Node -> (passed, index into ``failures`` or -1) per test it was in, in order."""
        self.failures: list[Failure] = []
        self.passed: list[tuple[str, ...]] = []
        self.met: dict[str, set[str]] = defaultdict(set)
        """Node -> the nodes it formed a two-node test with (a pair is never run twice)."""
        self.exonerated: set[screening.Pair] = set()
        self.groups: set[frozenset[str]] = set()
        """Every group tested so far."""

    @classmethod
    def read(cls, nodes: Sequence[model.Node], history: Sequence[model.RoundResult]) -> Evidence:
        ev = cls(nodes)
        for result in history:
            ev._add(result)
        return ev

    def _add(self, result: model.RoundResult) -> None:
        refs = self.references()
        for test in result.tests:
            self.groups.add(frozenset(test.nodes))
            if len(test.nodes) == 2:
                a, b = test.nodes
                self.met[a].add(b)
                self.met[b].add(a)
            if test.passed:
                self.passed.append(test.nodes)
                self.passes.update(test.nodes)
                self.exonerated |= self.spans(test.nodes)
                for n in test.nodes:
                    self.seen[n].append((True, -1))
                continue
            outside = [n for n in test.nodes if n not in refs]
            solo = outside[0] if len(outside) == 1 and len(test.nodes) > 1 else None
            self.failures.append(Failure(test.nodes, solo))
            for n in test.nodes:
                self.seen[n].append((False, len(self.failures) - 1))

    def spans(self, group: Sequence[str]) -> set[screening.Pair]:
        return screening.domain_pairs(self.domain[n] for n in group)

    def solos(self, node: str) -> list[tuple[str, ...]]:
        return [f.nodes for f in self.failures if f.solo == node]

    def blamed(self) -> set[str]:
        """Nodes with solos beside ``BLAME_SOLOS`` references sharing no node (so one bad
        reference cannot blame a node twice)."""
        beside: dict[str, set[str]] = defaultdict(set)
        count: Counter[str] = Counter()
        for f in self.failures:
            refs = set(f.nodes) - {f.solo} if f.solo is not None else set()
            if f.solo is not None and not refs & beside[f.solo]:
                beside[f.solo] |= refs
                count[f.solo] += 1
        return {n for n, times in count.items() if times >= BLAME_SOLOS}

    def explained(self, failure: Failure, node: str, blamed: set[str], links: set[screening.Pair]) -> bool:
        """Whether a failure is explained for ``node``: another member is blamed or a confirmed
        faulty link runs through it."""
        return bool(blamed.intersection(failure.nodes) - {node}) or bool(self.spans(failure.nodes) & links)

    def counts_against(self, index: int, node: str, blamed: set[str], links: set[screening.Pair]) -> bool:
        failure = self.failures[index]
        return node in failure.implicated and not self.explained(failure, node, blamed, links)

    def clean_passes(self, node: str, blamed: set[str], links: set[screening.Pair]) -> int:
        """Passes since the last failure that counts against the node."""
        count = 0
        for passed, index in self.seen[node]:
            if passed:
                count += 1
            elif self.counts_against(index, node, blamed, links):
                count = 0
        return count

    def implicated(self, node: str, blamed: set[str], links: set[screening.Pair]) -> bool:
        return any(not passed and self.counts_against(i, node, blamed, links) for passed, i in self.seen[node])

    def under_test(self, blamed: set[str], links: set[screening.Pair]) -> list[str]:
        """Nodes, not blamed, short of the clean passes they need."""
        return [
            n
            for n in self.names
            if n not in blamed
            and self.clean_passes(n, blamed, links)
            < (FLAKY_PASSES if self.implicated(n, blamed, links) else CLEAR_PASSES)
        ]

    def open_failures(self, blamed: set[str], links: set[screening.Pair]) -> list[Failure]:
        """Failures no blamed member or confirmed link explains."""
        return [f for f in self.failures if not blamed.intersection(f.nodes) and not self.spans(f.nodes) & links]

    def doubted(self, failure: Failure) -> set[screening.Pair]:
        """The domain pairs of a failure no passing test has crossed."""
        return self.spans(failure.nodes) - self.exonerated

    def suspects(self, blamed: set[str], links: set[screening.Pair]) -> set[str]:
        """Solo members of open failures, and every member of a small open failure that no link in
        doubt can explain."""
        out: set[str] = set()
        for f in self.open_failures(blamed, links):
            if f.solo is not None:
                out.add(f.solo)
            elif len(f.nodes) <= SMALL and not self.doubted(f):
                out.update(f.nodes)
        return out - blamed

    def accusations(self, blamed: set[str], links: set[screening.Pair]) -> list[set[screening.Pair]]:
        """Per open failure of nodes that all passed elsewhere: the uncrossed domain pairs it accuses."""
        return [
            self.doubted(f)
            for f in self.open_failures(blamed, links)
            if f.solo is None and self.doubted(f) and all(self.passes[n] for n in f.nodes)
        ]

    def confirmed_links(self, blamed: set[str]) -> set[screening.Pair]:
        """Domain pairs that failed ``LINK_CONFIRMATIONS`` tests as the only pair in doubt."""
        alone = Counter(next(iter(c)) for c in self.accusations(blamed, set()) if len(c) == 1)
        return {pair for pair, times in alone.items() if times >= linkprobes.LINK_CONFIRMATIONS}

    def references(self) -> set[str]:
        """Nodes that passed and are neither suspects nor blamed."""
        blamed = self.blamed()
        links = self.confirmed_links(blamed)
        suspects = self.suspects(blamed, links)
        return {n for n in self.passes if n not in suspects and n not in blamed}
