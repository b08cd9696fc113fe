"""``adaptive``: our default isolation strategy — few rounds, no more node-minutes than halving.

Idea: once a group has passed, its nodes are references. Instead of halving a failed group round
after round, every member of it is paired with its own reference in ONE round (pairs run at once,
disjoint); a member whose pair fails is confirmed in the next round with a *different* reference,
so a bad reference cannot blame a healthy node. Screening groups are smaller than halving's
(about sqrt(N)/2, inside one topology domain) because a failed group now costs two node-tests per
member instead of a bisection. One inter-domain group (a reference per domain) runs beside the
pairs, as upstream's inter-screening does, so links between domains are covered.

- Hard faults: screening, pairs, confirmation — three rounds whatever the group sizes. With more
  than two domains the inter-domain group runs in the first round (one node per domain, taken out
  of its domain's screening groups), where it does not lengthen a round of short pair tests.
- Flaky results: a hard-faulty node never passes, so a node that failed beside references and
  passed anywhere, or a failure nobody explains, switches to *flaky mode* for the rest of the run:
  references are then only nodes never in an unexplained failure (most passes first), a node that
  failed is re-tested beside references until it is blamed (two failures beside different
  references) or has ``FLAKY_PASSES`` passes in a row since its last failure, and every other node
  is re-screened (partners rotated) until it has as many passes.
- Links: a failed group whose members all passed elsewhere accuses the domain pairs it spans
  that no passed group has exonerated; the accused pairs are narrowed by testing halves and
  crossed quarters of the domain set, then two direct pair tests per remaining domain pair.
  A domain pair accused twice with nothing else to blame is an infrastructure fault.

Pure: the state is recomputed from the history on every call.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from shared.certify.isolate import model

FLAKY_PASSES = 6
"""Clean passes since its last failure a node needs in flaky mode (a p=0.5 flaky node slips
through 6 in a row 1.6 % of the time, so a flaky node is found with ~97 % once it has failed once)."""
BLAME_SOLOS = 2
"""Failures beside references (with different references) that blame a node."""
DIRECT_PAIRS = 6
"""Accused domain pairs tested directly; more are narrowed by halves and quarters first."""


def screen_size(count: int, settings: model.Settings) -> int:
    return settings.screen_size or max(2, round(math.sqrt(count) / 2))


class _Evidence:
    def __init__(self, nodes: Sequence[model.Node], *, strict: bool = False) -> None:
        self.strict = strict
        """Flaky mode: a node that was ever in a failure nobody explains is no reference."""
        self.domain = {n.name: n.domain for n in nodes}
        self.seen: dict[str, list[tuple[bool, tuple[str, ...]]]] = defaultdict(list)
        self.passes: Counter[str] = Counter()
        self.solo: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        self.failed: list[tuple[str, ...]] = []
        self.passed: list[tuple[str, ...]] = []

    def blamed(self) -> set[str]:
        return {n for n, partners in self.solo.items() if len(set(partners)) >= BLAME_SOLOS}

    def unexplained(self, blamed: set[str]) -> list[tuple[str, ...]]:
        return [t for t in self.failed if not blamed.intersection(t)]

    def attributable(self, test: tuple[str, ...]) -> bool:
        """Some member was never cleared (no pass yet) or already failed beside references."""
        return any(self.passes[n] == 0 or n in self.solo for n in test)

    def refs(self, blamed: set[str]) -> set[str]:
        # A failure spanning domains may be a link, which does not make its members bad references.
        dirty = {n for t in self.unexplained(blamed) if not self.attributable(t) and len(self.racks(t)) == 1
                 for n in t} | set(self.solo)
        if self.strict:
            dirty |= {n for t in self.unexplained(blamed) for n in t}
        return {n for n in self.passes if n not in dirty and n not in blamed}

    def clean_passes(self, node: str, blamed: set[str]) -> int:
        """Passes since the node's last failure that no blamed node explains."""
        count = 0
        for passed, test in self.seen[node]:
            count = count + 1 if passed else (count if blamed.intersection(test) - {node} else 0)
        return count

    def ever_failed(self, node: str, blamed: set[str]) -> bool:
        return any(not passed and not blamed.intersection(t) - {node} for passed, t in self.seen[node])

    def add(self, result: model.RoundResult) -> None:
        refs = self.refs(self.blamed())
        for test in result.tests:
            for n in test.nodes:
                self.seen[n].append((test.passed, test.nodes))
            if test.passed:
                self.passed.append(test.nodes)
                for n in test.nodes:
                    self.passes[n] += 1
                continue
            self.failed.append(test.nodes)
            for n in test.nodes:
                others = tuple(m for m in test.nodes if m != n)
                if n not in refs and others and all(m in refs for m in others):
                    self.solo[n].append(others)

    def racks(self, nodes: Sequence[str]) -> set[str]:
        return {self.domain[n] for n in nodes}


def _read(nodes: Sequence[model.Node], history: Sequence[model.RoundResult], *, strict: bool
          ) -> tuple[_Evidence, set[str], list[tuple[str, ...]], bool, list[set[tuple[str, str]]]]:
    """Evidence, blamed nodes, unexplained failures, whether results look flaky, accused domain pairs."""
    ev = _Evidence(nodes, strict=strict)
    for result in history:
        ev.add(result)
    blamed = ev.blamed()
    unexplained = ev.unexplained(blamed)
    # A hard-faulty node never passes, so a node that failed beside references and passed
    # anywhere (before or after) means flaky results, for the rest of the run.
    flaky = strict or any(ev.passes[n] for n in ev.solo)
    # A failure with every member passed elsewhere: a link between domains, or flakiness.
    exonerated = set().union(*(_pairs_of(ev.racks(t)) for t in ev.passed)) if ev.passed else set()
    accusations: list[set[tuple[str, str]]] = []
    for test in unexplained:
        if ev.attributable(test):
            continue
        candidates = _pairs_of(ev.racks(test)) - exonerated
        if candidates:
            accusations.append(candidates)
        elif len(test) > 1:
            flaky = True
    return ev, blamed, unexplained, flaky, accusations


def _screening(domains: dict[str, list[str]], k: int) -> tuple[tuple[str, ...], ...]:
    """Groups of about ``k`` inside each domain, plus, with more than two domains, one inter-domain group.

    The inter-domain group (one node per domain, taken out of its domain's groups) covers the links
    between domains. With more than two domains it is the longest test of its round, so it runs
    in the first round beside the screening groups instead of lengthening the second.
    """
    spanning = [members[-1] for members in domains.values()] if len(domains) > 2 else []
    groups = [g for members in domains.values() for g in model.chunks([m for m in members if m not in spanning], k)]
    return tuple(groups + ([tuple(spanning)] if spanning else []))


def _pairs_of(racks: set[str]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in itertools.combinations(sorted(racks), 2)}


def _shuffled(names: Sequence[str], salt: int) -> list[str]:
    return sorted(names, key=lambda n: hashlib.sha256(f"{salt}:{n}".encode()).hexdigest())


def adaptive(nodes: Sequence[model.Node], history: Sequence[model.RoundResult],
             settings: model.Settings) -> model.Decision:
    """Reference pairs, topology-aware screening, link probing and flaky mode (see module doc)."""
    names = sorted(n.name for n in nodes)
    domains = model.by_domain(nodes)
    k = screen_size(len(names), settings)
    if not history:
        return model.Plan("screening", _screening(domains, k))
    ev, blamed, unexplained, flaky, accusations = _read(nodes, history, strict=False)
    if flaky:
        # Re-read with strict references: a node that shared an unexplained failure may be the flaky one.
        ev, blamed, unexplained, _, accusations = _read(nodes, history, strict=True)
    pending: list[str] = []
    for n in names:
        if n in blamed:
            continue
        if flaky:
            # A node stays under test until blamed or FLAKY_PASSES clean passes after its last failure.
            if ev.ever_failed(n, blamed) and ev.clean_passes(n, blamed) < FLAKY_PASSES:
                pending.append(n)
        elif n in ev.solo or (ev.passes[n] == 0 and any(n in t for t in unexplained)):
            pending.append(n)
    found = Counter(next(iter(c)) for c in accusations if len(c) == 1)
    infra = sorted(pair for pair, times in found.items() if times >= 2)
    open_accusations = [c for c in accusations if not (c & set(infra))]
    if len(history) >= settings.max_rounds:
        pending, open_accusations = [], []

    busy: set[str] = set()
    # In flaky mode the most-passed references first: a flaky node rarely passes many times in a row.
    refs = sorted(ev.refs(blamed) - set(pending), key=lambda r: (-ev.passes[r], r) if flaky else (0, r))
    groups: list[tuple[str, ...]] = []

    def take_ref(domain: str | None, avoid: set[str], *, strict: bool = False) -> str | None:
        choices = [r for r in refs if r not in busy and r not in avoid]
        same = [r for r in choices if domain is None or ev.domain[r] == domain]
        pool = same or ([] if strict else choices)
        pick = pool[0] if pool else None
        if pick is not None:
            busy.add(pick)
        return pick

    # 1. Members of failed groups: each with a reference (a new one for a confirmation).
    unpaired = []
    for n in pending:
        ref = take_ref(ev.domain[n], {p for ps in ev.solo.get(n, []) for p in ps})
        if ref is None:
            unpaired.append(n)
            continue
        busy.add(n)
        groups.append((n, ref))
    if unpaired and not refs:
        # No reference anywhere yet (the first, full-scale group failed): screen the suspects smaller.
        biggest = max(len(t) for t in unexplained)
        size = min(k, max(biggest // 2, 1))
        if biggest <= settings.min_group_size or size < 1:
            faulty = {n: "no healthy reference node to confirm against" for n in unpaired}
            return model.Verdict(faulty=faulty, healthy=frozenset(set(names) - set(faulty)),
                                 message=f"no healthy reference node; {len(faulty)} suspect(s) marked failed")
        by_dom: dict[str, list[str]] = defaultdict(list)
        for n in unpaired:
            by_dom[ev.domain[n]].append(n)
        for members in by_dom.values():
            groups += model.chunks(members, size)
        busy.update(unpaired)
    # 2. Links between domains.
    wanted: set[tuple[str, str]] = set().union(*open_accusations) if open_accusations else set()
    if wanted:
        for rack_set in _link_tests(wanted):
            members = []
            for rack in sorted(rack_set):
                ref = take_ref(rack, set(), strict=True)
                if ref is None:
                    break
                members.append(ref)
            else:
                groups.append(tuple(members))
    # 3. One inter-domain group, once, when no test has spanned every domain yet.
    if len(domains) > 1 and not any(ev.racks(t) == set(domains) for t in ev.passed + ev.failed):
        members = [r for r in (take_ref(d, set(), strict=True) for d in domains) if r is not None]
        if len(members) == len(domains):
            groups.append(tuple(members))
    # 4. Flaky mode: re-screen everyone short of passes, with new partners each round.
    if flaky and len(history) < settings.max_rounds:
        short = [n for n in names if n not in busy and n not in blamed and ev.clean_passes(n, blamed) < FLAKY_PASSES]
        by_dom = defaultdict(list)
        for n in _shuffled(short, len(history)):
            by_dom[ev.domain[n]].append(n)
        for members in by_dom.values():
            groups += [g for g in model.chunks(members, k) if len(g) >= 2]
    if groups:
        stage = ("confirmation" if any(n in ev.solo for g in groups for n in g)
                 else "pairs" if all(len(g) == 2 for g in groups) else "screening")
        return model.Plan("flaky-rescreen" if flaky else stage, tuple(groups))
    faulty = {n: f"failed beside {len(ev.solo[n])} different healthy reference(s) "
                 f"({', '.join(sorted({p for ps in ev.solo[n] for p in ps}))})" for n in sorted(blamed)}
    sides = tuple((tuple(sorted(domains[a])), tuple(sorted(domains[b]))) for a, b in infra)
    healthy = frozenset(set(names) - set(faulty))
    parts = [f"{len(faulty)} faulty node(s)"] if faulty else []
    parts += [f"{len(sides)} infrastructure fault(s)"] if sides else []
    return model.Verdict(faulty=faulty, infrastructure=sides, healthy=healthy,
                         message=("found " + " and ".join(parts)) if parts else "no faults confirmed")


def _link_tests(wanted: set[tuple[str, str]]) -> list[set[str]]:
    """Domain sets whose results split the accused domain pairs (each pair covered twice at the end)."""
    if len(wanted) <= DIRECT_PAIRS:
        return [set(p) for p in sorted(wanted) for _ in range(2)]
    racks = sorted({r for p in wanted for r in p})
    half = len(racks) // 2
    r1, r2 = racks[:half], racks[half:]
    q1, q2 = len(r1) // 2, len(r2) // 2
    sets = [set(r1), set(r2), set(r1[:q1] + r2[:q2]), set(r1[:q1] + r2[q2:]), set(r1[q1:] + r2[:q2]),
            set(r1[q1:] + r2[q2:])]
    return [s for s in sets if len(s) >= 2 and _pairs_of(s) & wanted]
