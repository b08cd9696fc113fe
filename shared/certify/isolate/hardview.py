"""What the results so far say if every fault is a hard node fault or a faulty link between two domains.

Hard faults are exact: a hard-faulty node never passes, so a node that passed is cleared for good,
a domain pair spanned by a passing test has no faulty link, and a failure whose other members all
passed names its one uncleared member. ``HardView.read`` derives all of that from the history (it
is recomputed on every call, nothing is kept). A failure none of this explains — every member
passed elsewhere and every link it spans passed too — sets ``inconsistent``: the results are not
hard faults, and ``adaptive`` switches to flaky mode for the rest of the run. Planning the next
round from the view is ``hard``'s business.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shared.certify.isolate import linkprobes, model, screening

Pair = screening.Pair


@dataclass
class HardView:
    """The history read as hard faults and links."""

    domain: dict[str, str]
    cleared: set[str] = field(default_factory=set)
    """Nodes that passed a test: a hard-faulty node never does."""
    exonerated: set[Pair] = field(default_factory=set)
    """Domain pairs spanned by a passing test: no faulty link between them."""
    blamed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Node -> the cleared nodes it failed beside (in a test no link can explain)."""
    evidence: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    """Blamed node -> the failed tests that blame it."""
    partners: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Node -> the nodes it shared a failed test with."""
    pair_partners: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Node -> the nodes it failed a two-node test with."""
    suspects: list[str] = field(default_factory=list)
    """Uncleared, unblamed members of failures nothing explains yet."""
    accusations: list[set[Pair]] = field(default_factory=list)
    """Per failure of cleared nodes only: the unspanned domain pairs it may have failed on."""
    links: list[Pair] = field(default_factory=list)
    """Domain pairs confirmed faulty by ``linkprobes.LINK_CONFIRMATIONS`` direct tests."""
    inconsistent: bool = False
    failed: list[tuple[str, ...]] = field(default_factory=list)
    failures: int = 0
    met: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Node -> the nodes it formed a two-node test with: a direct link test uses a new pair."""
    passes: Counter[str] = field(default_factory=Counter)
    direct: Counter[Pair] = field(default_factory=Counter)
    """Failed direct tests (one node per domain) whose only unspanned domain pair is this one."""
    foreign: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Suspect -> the other domain of its failed two-domain test across an unspanned link."""
    tried: dict[str, set[str]] = field(default_factory=dict)
    """Suspect of a domain without references -> the domains it failed beside references of."""

    @classmethod
    def read(cls, nodes: Sequence[model.Node], history: Sequence[model.RoundResult]) -> HardView:
        view = cls({n.name: n.domain for n in nodes})
        tests = [t for r in history for t in r.tests]
        for t in tests:
            if len(t.nodes) == 2:
                view.met[t.nodes[0]].add(t.nodes[1])
                view.met[t.nodes[1]].add(t.nodes[0])
            if t.passed:
                view.cleared.update(t.nodes)
                view.passes.update(t.nodes)
                view.exonerated |= view.spans(t.nodes)
        view.failed = [t.nodes for t in tests if not t.passed]
        view.failures = len(view.failed)
        for group in view.failed:
            view._read_failure(group)
        view._blame_without_home_references(view.failed)
        suspects = view._suspects_and_accusations()
        view._foreign(suspects)
        return view

    def spans(self, group: Iterable[str]) -> set[Pair]:
        return screening.domain_pairs(self.domain[n] for n in group)

    def uncleared(self, group: Sequence[str]) -> list[str]:
        return [n for n in group if n not in self.cleared]

    def direct_test(self, group: Sequence[str]) -> bool:
        """One node per domain: a failure there is the link's or a member's, nobody else's (a
        failed run of every node, whose only doubted link is the same, confirms nothing)."""
        return len({self.domain[n] for n in group}) == len(group)

    def narrower(self, group: set[str]) -> bool:
        """Whether every failed test holding the group was larger (so the group tells something new)."""
        return all(len(failed) > len(group) for failed in self.failed if group <= set(failed))

    def _read_failure(self, group: tuple[str, ...]) -> None:
        """Partners, and the blame of a lone uncleared member when no link can explain the failure."""
        for n in group:
            others = {m for m in group if m != n}
            self.partners[n].update(others)
            if len(group) <= 2:
                self.pair_partners[n].update(others)
        if not self.spans(group) <= self.exonerated:
            return
        uncleared = self.uncleared(group)
        if not uncleared:
            self.inconsistent = True  # failed with every member passing elsewhere, no link to blame
        elif len(uncleared) == 1 and uncleared[0] not in self.blamed:
            self.blamed[uncleared[0]] = tuple(m for m in group if m != uncleared[0])
            self.evidence[uncleared[0]] = [group]

    def _suspects_and_accusations(self) -> set[str]:
        """Suspects (uncleared members of failures no blamed node explains), the link accusations
        of failures of cleared nodes, and the links confirmed by direct tests."""
        singles: Counter[Pair] = Counter()
        suspects: set[str] = set()
        for group in self.failed:
            uncleared = self.uncleared(group)
            if self.blamed.keys() & set(group) or uncleared:
                # Explained by a blamed node, but a member that never passed may be faulty too.
                suspects.update(n for n in uncleared if n not in self.blamed)
                continue
            accused = self.spans(group) - self.exonerated
            self.accusations.append(accused)
            if len(accused) == 1 and self.direct_test(group):
                singles[next(iter(accused))] += 1
        self.links = sorted(p for p, times in singles.items() if times >= linkprobes.LINK_CONFIRMATIONS)
        self.accusations = [a for a in self.accusations if not a & set(self.links)]
        self.suspects = sorted(suspects)
        self.direct = singles
        return suspects

    def doubted(self) -> set[Pair]:
        """Confirmed and accused links."""
        return set(self.links).union(*self.accusations)

    def _foreign(self, suspects: set[str]) -> None:
        doubted = self.doubted()
        for group in self.failed:
            spanned = {self.domain[n] for n in group}
            if len(spanned) != 2 or self.spans(group) <= self.exonerated | doubted:
                continue
            for n in set(group) & suspects:
                self.foreign[n] = tuple(sorted(spanned - {self.domain[n]}))

    def _blame_without_home_references(self, failed: Sequence[tuple[str, ...]]) -> None:
        """Blame a suspect whose own domain has no node that passed (it is alone there, or all its
        domain's nodes are faulty), so that no test can ever clear the links of that domain.

        Each failure beside references then means the suspect is faulty or a link of its domain is.
        Blamed once the link reading needs two faulty links (failures whose unspanned domain pairs
        are disjoint), or, with a single other domain holding references, once it failed beside
        them: a node fault and that one link then explain the results alike and the node is named.
        """
        homes = {self.domain[n] for n in self.cleared}
        alone: dict[str, list[tuple[tuple[str, ...], set[Pair]]]] = defaultdict(list)
        for group in failed:
            uncleared = self.uncleared(group)
            accused = self.spans(group) - self.exonerated
            if len(uncleared) == 1 and accused and self.domain[uncleared[0]] not in homes:
                alone[uncleared[0]].append((group, accused))
        for s, fails in sorted(alone.items()):
            if s in self.blamed:
                continue
            home = self.domain[s]
            single = [next(iter(accused)) for _, accused in fails if len(accused) == 1]
            only = {d for pair in single if home in pair for d in pair} - {home}
            self.tried[s] = only
            separate = any(not a & b for (_, a), (_, b) in itertools.combinations(fails, 2))
            if separate or (homes and homes <= only):
                self.blamed[s] = tuple(sorted({m for group, _ in fails for m in group if m != s}))
                self.evidence[s] = [group for group, _ in fails]
