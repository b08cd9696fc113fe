"""``adaptive``: our default isolation strategy — fewer rounds and no more node-minutes than halving.

Under the cost model (``model.test_minutes``) every test pays minutes of start-up whatever its
size, so the wall time of an isolation is its number of rounds, and a node costs least in the
smallest group. Hence, while results are consistent with hard faults (*hard mode*):

1. **Screening** in pairs inside each topology domain (the cheapest test per node), with one
   inter-domain group of a node per domain beside them (the links between domains; with two
   domains it is a pair too) and the odd nodes paired across domains.
2. **Identification**: each member of a failed group that never passed is tested beside a node
   that passed (a *reference*, same domain first). A hard-faulty node never passes, so a group
   that failed while all its other members passed elsewhere names its faulty node — two rounds
   for any number of hard faults. Members short of a reference are paired with a suspect of
   another failed group: a pass clears both and so names the partners they failed with. A
   member of a domain none of whose nodes passed (a lone node in the last rack, or a rack of
   faulty nodes) fails beside any reference on either itself or the link to the reference's
   domain, which nothing can clear; it is tested beside a reference of another domain and blamed
   when only two faulty links would explain it (or when no other domain is left to try).
3. **Links**: a group whose members all passed elsewhere failed on a link between two of its
   domains that no passing group has spanned. The accused domain pairs are narrowed by groups of
   references chosen by the bits of each domain's index (a pair fails only the groups holding
   both, so one round leaves few candidates), then each candidate is tested directly twice; a
   domain pair that fails two direct tests is an infrastructure fault, reported with its two
   sides. While an inter-domain group is unresolved, a fresh one (or, with few domain pairs,
   direct pair tests) runs beside the identification round, so a link costs no extra round when
   the first inter-domain group held a faulty node.
4. **Nothing failed**: the failure that started the isolation went unexplained, so the nodes are
   screened once more with new partners (a flaky node passes a test only part of the time).

A result that hard faults cannot explain (a group fails whose members all passed, with no
unspanned link) switches to *flaky mode* for the rest of the run (``_robust``): references are
only nodes never in an unexplained failure, a node is blamed after two failures beside different
references (so a bad reference cannot blame a healthy node), and every node is re-screened with
rotating partners until it has ``FLAKY_PASSES`` clean passes since its last failure.

A node that passed cannot be hard-faulty, so in hard mode a reference is never "bad"; only two
flaky nodes failing in step (one beside a healthy node it then passes with, the other as that
node's reference) can make hard mode blame a healthy node, which a second reference would prevent
at the price of a third round (docs/benchmarks.md, isolation, measures how often).

Pure: the state is recomputed from the history on every call; the fault set is never seen.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shared.certify.isolate import model

FLAKY_PASSES = 6
"""Clean passes since its last failure a node needs in flaky mode (a p=0.5 flaky node slips
through 6 in a row 1.6 % of the time, so a flaky node is found with ~97 % once it has failed once)."""
BLAME_SOLOS = 2
"""Failures beside references (with different references) that blame a node in flaky mode."""
DIRECT_PAIRS = 6
"""Accused domain pairs tested directly; more are narrowed first."""
LINK_CONFIRMATIONS = 2
"""Direct tests of a domain pair that must fail to report it as an infrastructure fault."""

Pair = tuple[str, str]


def adaptive(
    nodes: Sequence[model.Node], history: Sequence[model.RoundResult], settings: model.Settings
) -> model.Decision:
    """Hard mode while results fit hard faults and links; flaky mode from the first misfit on."""
    domains = model.by_domain(nodes)
    if not history:
        return model.Plan("screening", _screen(domains, settings.screen_size or 2, spanning=True))
    view = _HardView.read(nodes, history)
    if view.inconsistent:
        return _robust(nodes, history, settings)
    return _hard(view, domains, history, settings)


def _pairs(domains: Iterable[str]) -> set[Pair]:
    return {(a, b) for a, b in itertools.combinations(sorted(set(domains)), 2)}


def _screen(domains: dict[str, list[str]], size: int, *, spanning: bool, shift: int = 0) -> tuple[tuple[str, ...], ...]:
    """Groups of ``size`` inside each domain; odd nodes paired across domains; optionally one
    inter-domain group of a node per domain. ``shift`` rotates partners for a repeat screening."""
    span = [members[-1] for members in domains.values()] if spanning and len(domains) > 1 else []
    groups: list[tuple[str, ...]] = []
    odd: list[str] = []
    for members in domains.values():
        rest = [m for m in members if m not in span]
        if shift and rest:
            rest = rest[shift % len(rest) :] + rest[: shift % len(rest)]
        if size > 2:
            groups += model.chunks(rest, size)
            continue
        groups += [tuple(rest[i : i + 2]) for i in range(0, len(rest) - 1, 2)]
        if len(rest) % 2:
            odd.append(rest[-1])
    groups += [tuple(odd[i : i + 2]) for i in range(0, len(odd) - 1, 2)]
    if len(odd) % 2:
        target = len(groups) - 1 if groups else None
        if span and (target is None or len(span) <= 2):
            span.append(odd[-1])
        elif target is not None:
            groups[target] = groups[target] + (odd[-1],)
        else:
            groups.append((odd[-1],))
    return tuple(groups + ([tuple(span)] if span else []))


@dataclass
class _HardView:
    """What the history says if every fault is a hard node fault or a link between two domains."""

    domain: dict[str, str]
    cleared: set[str] = field(default_factory=set)
    """Nodes that passed a test: a hard-faulty node never does."""
    exonerated: set[Pair] = field(default_factory=set)
    """Domain pairs spanned by a passing test: no faulty link between them."""
    blamed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Node -> the cleared nodes it failed beside (in a test no link can explain)."""
    partners: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """Node -> the nodes it shared a failed test with."""
    pair_partners: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    suspects: list[str] = field(default_factory=list)
    """Uncleared, unblamed members of failures nothing explains yet."""
    accusations: list[set[Pair]] = field(default_factory=list)
    """Per failure of cleared nodes only: the unspanned domain pairs it may have failed on."""
    links: list[Pair] = field(default_factory=list)
    """Domain pairs confirmed faulty by ``LINK_CONFIRMATIONS`` direct tests."""
    inconsistent: bool = False
    failed: list[tuple[str, ...]] = field(default_factory=list)
    failures: int = 0
    passes: Counter[str] = field(default_factory=Counter)
    direct: Counter[Pair] = field(default_factory=Counter)
    """Failed tests whose only unspanned domain pair is this one."""
    foreign: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Suspect -> the other domain of its failed two-domain test across an unspanned link."""
    tried: dict[str, set[str]] = field(default_factory=dict)
    """Suspect of a domain without references -> the domains it failed beside references of."""

    @classmethod
    def read(cls, nodes: Sequence[model.Node], history: Sequence[model.RoundResult]) -> _HardView:  # noqa: C901, PLR0912 - split into hard and flaky modes by issue 15 ("Certification workloads that run on a real GPU cluster")
        view = cls({n.name: n.domain for n in nodes})
        tests = [t for r in history for t in r.tests]
        for t in tests:
            if t.passed:
                view.cleared.update(t.nodes)
                view.passes.update(t.nodes)
                view.exonerated |= view.spans(t.nodes)
        failed = [t.nodes for t in tests if not t.passed]
        view.failed = failed
        view.failures = len(failed)
        for group in failed:
            for n in group:
                view.partners[n].update(m for m in group if m != n)
                if len(group) <= 2:
                    view.pair_partners[n].update(m for m in group if m != n)
            uncleared = [n for n in group if n not in view.cleared]
            if view.spans(group) <= view.exonerated:
                if not uncleared:
                    view.inconsistent = True  # failed with every member passing elsewhere, no link to blame
                elif len(uncleared) == 1:
                    view.blamed.setdefault(uncleared[0], tuple(m for m in group if m != uncleared[0]))
        view._blame_without_home_references(failed)
        singles: Counter[Pair] = Counter()
        suspects: set[str] = set()
        for group in failed:
            uncleared = [n for n in group if n not in view.cleared]
            if view.blamed.keys() & set(group):
                # Explained by a blamed node, but a member that never passed may be faulty too.
                suspects.update(n for n in uncleared if n not in view.blamed)
                continue
            if uncleared:
                suspects.update(uncleared)
                continue
            accused = view.spans(group) - view.exonerated
            view.accusations.append(accused)
            if len(accused) == 1:
                singles[next(iter(accused))] += 1
        view.links = sorted(p for p, times in singles.items() if times >= LINK_CONFIRMATIONS)
        view.accusations = [a for a in view.accusations if not a & set(view.links)]
        view.suspects = sorted(suspects)
        doubted = set(view.links).union(*view.accusations) if view.accusations else set(view.links)
        for group in failed:
            spanned = {view.domain[n] for n in group}
            if len(spanned) != 2 or view.spans(group) <= view.exonerated | doubted:
                continue
            for n in set(group) & suspects:
                view.foreign[n] = tuple(sorted(spanned - {view.domain[n]}))
        view.direct = singles
        return view

    def narrower(self, group: set[str]) -> bool:
        """Whether every failed test holding the group was larger (so the group tells something new)."""
        return all(len(failed) > len(group) for failed in self.failed if group <= set(failed))

    def spans(self, group: Iterable[str]) -> set[Pair]:
        return _pairs(self.domain[n] for n in group)

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
            uncleared = [n for n in group if n not in self.cleared]
            accused = self.spans(group) - self.exonerated
            if len(uncleared) == 1 and accused and self.domain[uncleared[0]] not in homes:
                alone[uncleared[0]].append((group, accused))
        for s, fails in sorted(alone.items()):
            if s in self.blamed:
                continue
            home = self.domain[s]
            only = {
                d
                for _, accused in fails
                if len(accused) == 1
                for d in next(iter(accused))
                if home in next(iter(accused))
            } - {home}
            self.tried[s] = only
            separate = any(not a & b for (_, a), (_, b) in itertools.combinations(fails, 2))
            if separate or (homes and homes <= only):
                self.blamed[s] = tuple(sorted({m for group, _ in fails for m in group if m != s}))


class _Refs:
    """Cleared nodes by domain, each used at most once per round (groups of a round are disjoint)."""

    def __init__(self, view: _HardView, domains: dict[str, list[str]]) -> None:
        self.view = view
        self.free = {d: [n for n in members if n in view.cleared] for d, members in domains.items()}
        self.busy: set[str] = set()

    def take(self, domain: str, avoid: frozenset[str] | set[str] = frozenset(), *, last: bool = False) -> str | None:
        """A free reference of the domain; ``last`` takes from the other end, so that link tests
        leave the first references of every domain to the suspects."""
        members = self.free.get(domain, [])
        for n in reversed(members) if last else members:
            if n not in self.busy and n not in avoid:
                self.busy.add(n)
                return n
        return None

    def take_near(self, node: str, avoid: set[str]) -> str | None:
        """A reference in the node's domain, else in a domain whose link to it has passed a test."""
        home = self.view.domain[node]
        ref = self.take(home, avoid)
        if ref is not None:
            return ref
        for domain in self.free:
            if domain != home and (min(home, domain), max(home, domain)) in self.view.exonerated:
                ref = self.take(domain, avoid)
                if ref is not None:
                    return ref
        return None

    def take_any(self, avoid: set[str], skip: set[str] | frozenset[str] = frozenset()) -> str | None:
        """A free reference of any domain but those in ``skip``."""
        for domain in self.free:
            if domain in skip:
                continue
            ref = self.take(domain, avoid)
            if ref is not None:
                return ref
        return None

    def total(self) -> int:
        return sum(self.count(d) for d in self.free)

    def count(self, domain: str) -> int:
        return sum(1 for n in self.free.get(domain, []) if n not in self.busy)


def _hard(  # noqa: C901, PLR0912, PLR0915 - split into hard and flaky modes by issue 15 ("Certification workloads that run on a real GPU cluster")
    view: _HardView, domains: dict[str, list[str]], history: Sequence[model.RoundResult], settings: model.Settings
) -> model.Decision:
    if not view.failures and len(history) < 2:
        # Nothing failed: whatever started the isolation went unexplained, so screen once more
        # with new partners (a flaky node passes a test only part of the time).
        return model.Plan("rescreen", _screen(domains, settings.screen_size or 2, spanning=False, shift=1))
    if len(history) >= settings.max_rounds:
        return _hard_verdict(view, domains, [], f"stopped after {settings.max_rounds} rounds")
    refs = _Refs(view, domains)
    groups: list[tuple[str, ...]] = []
    # Before any pass (a full-scale first round failed) the suspects are screened among themselves.
    stage = "identification" if view.cleared else "screening"
    # 0. Domain pairs no test has spanned yet (the inter-domain group held a suspect) are covered
    #    in this round too, first when references suffice for everything.
    candidates: set[Pair] = set().union(*view.accusations) if view.accusations else set()
    unspanned = _pairs(domains) - view.exonerated - candidates - set(view.links)
    unspanned = {p for p in unspanned if refs.count(p[0]) and refs.count(p[1])}
    cover_first = refs.total() >= len(view.suspects) + _cover_cost(unspanned)
    if cover_first:
        groups += _cover(unspanned, view, refs)
    # 1. Every suspect beside a reference it never failed with. Short of references, a suspect of
    #    a failed pair across an unspanned domain pair takes its reference from the other domain:
    #    a pass clears it and spans the link at once.
    unpaired: list[str] = []
    for s in view.suspects:
        ref = None
        tried = view.tried.get(s, set())
        for other in view.foreign.get(s, ()) if not cover_first else ():
            if other not in tried:
                ref = ref or refs.take(other, view.pair_partners[s])
        ref = ref or refs.take_near(s, view.pair_partners[s])
        if ref is None:
            unpaired.append(s)
        else:
            refs.busy.add(s)
            groups.append((s, ref))
    # 2. Suspects short of a near reference: beside any reference (a pass clears it; a failure is
    #    decided once a test spans the two domains), else beside a suspect of another failure
    #    (a pass clears both and so names the partners they failed with).
    rest = []
    for s in unpaired:
        # A suspect without references at home: first a domain it has not failed beside.
        ref = refs.take_any(view.pair_partners[s], skip=view.tried.get(s, set()))
        ref = ref or refs.take_any(view.pair_partners[s])
        if ref is None:
            rest.append(s)
        else:
            refs.busy.add(s)
            groups.append((s, ref))
    while rest:
        s = rest.pop(0)
        mate = next((m for m in rest if m not in view.partners[s] and view.domain[m] == view.domain[s]), None)
        mate = mate or next((m for m in rest if m not in view.partners[s]), None)
        # Out of a large failed group with no reference anywhere: screen its suspects in pairs.
        mate = mate or next((m for m in rest if m not in view.pair_partners[s]), None)
        if mate is not None:
            rest.remove(mate)
            refs.busy.update((s, mate))
            groups.append((s, mate))
        elif not view.cleared and groups and len(groups[-1]) == 2 and view.narrower({s, *groups[-1]}):
            # The odd suspect left over with no reference anywhere joins the last pair, not a later round.
            refs.busy.add(s)
            groups[-1] = groups[-1] + (s,)
    # 3. Links: narrow the accused domain pairs, then test each candidate directly.
    if candidates:
        split = any(r.stage == "link-split" for r in history)
        if split or len(candidates) <= DIRECT_PAIRS:
            groups += _direct(candidates, view, refs)
            stage = "link-probe" if not view.suspects else stage
        else:
            groups += _split(candidates, refs)
            stage = "link-split"
    # 4. Domain pairs no test has spanned yet (the inter-domain group held a suspect).
    if not cover_first:
        groups += _cover(unspanned, view, refs)
    groups = [g for g in groups if len(g) >= 2]
    if groups:
        return model.Plan(stage, tuple(groups))
    return _hard_verdict(view, domains, view.suspects, "")


def _cover_cost(unspanned: set[Pair]) -> int:
    if len(unspanned) <= DIRECT_PAIRS:
        return 2 * LINK_CONFIRMATIONS * len(unspanned)
    return len({d for p in unspanned for d in p})


def _cover(unspanned: set[Pair], view: _HardView, refs: _Refs) -> list[tuple[str, ...]]:
    """Few pairs: direct tests (a faulty link is confirmed at once); many: one inter-domain group."""
    if not unspanned:
        return []
    if len(unspanned) <= DIRECT_PAIRS:
        return _direct(unspanned, view, refs)
    # Never both ends of a confirmed or accused link: the group would fail on it again and again.
    doubted = set(view.links).union(*view.accusations)
    members: list[str] = []
    for domain in sorted({d for p in unspanned for d in p}):
        if any(tuple(sorted((domain, view.domain[m]))) in doubted for m in members):
            continue
        ref = refs.take(domain, last=True)
        if ref is not None:
            members.append(ref)
    return [tuple(members)]


def _direct(candidates: set[Pair], view: _HardView, refs: _Refs) -> list[tuple[str, ...]]:
    """Pairs of references across each candidate domain pair, until it has failed twice directly."""
    groups: list[tuple[str, ...]] = []
    for a, b in sorted(candidates):
        for _ in range(LINK_CONFIRMATIONS - view.direct[(a, b)]):
            left, right = refs.take(a, last=True), refs.take(b, last=True)
            if left is None or right is None:
                refs.busy.difference_update(n for n in (left, right) if n is not None)
                break
            groups.append((left, right))
    return groups


def _split(candidates: set[Pair], refs: _Refs) -> list[tuple[str, ...]]:
    """Groups of one reference per domain, by the bits of the domain's index among the accused.

    A faulty link between domains i and j fails exactly the groups of the bits where i and j agree,
    so the accusations that survive are the pairs consistent with every result.
    """
    racks = sorted({d for p in candidates for d in p})
    bits = max(1, math.ceil(math.log2(len(racks))))
    groups = []
    for bit in range(bits):
        for value in (0, 1):
            side = [r for i, r in enumerate(racks) if (i >> bit) & 1 == value]
            if len(side) < 2 or not _pairs(side) & candidates:
                continue
            members = [refs.take(r, last=True) for r in side]
            groups.append(tuple(m for m in members if m is not None))
    return groups


def _hard_verdict(
    view: _HardView, domains: dict[str, list[str]], unresolved: Sequence[str], note: str
) -> model.Verdict:
    faulty = {
        n: f"failed beside healthy reference(s) {', '.join(sorted(refs))}" for n, refs in sorted(view.blamed.items())
    }
    if not view.cleared:
        faulty.update({n: "no healthy reference node to confirm against" for n in unresolved})
    sides = tuple((tuple(domains[a]), tuple(domains[b])) for a, b in view.links)
    healthy = frozenset(set(view.domain) - set(faulty) - set(unresolved))
    parts = [f"{len(faulty)} faulty node(s)"] if faulty else []
    parts += [f"{len(sides)} infrastructure fault(s)"] if sides else []
    if unresolved and view.cleared:
        parts.append(f"{len(unresolved)} suspect(s) without a usable reference")
    message = ("found " + " and ".join(parts)) if parts else "no faults confirmed"
    return model.Verdict(
        faulty=faulty, infrastructure=sides, healthy=healthy, message=f"{message}; {note}" if note else message
    )


# Flaky mode ---------------------------------------------------------------------------------


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
        dirty = {
            n for t in self.unexplained(blamed) if not self.attributable(t) and len(self.racks(t)) == 1 for n in t
        } | set(self.solo)
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


def _read(
    nodes: Sequence[model.Node], history: Sequence[model.RoundResult], *, strict: bool
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


def _pairs_of(racks: set[str]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in itertools.combinations(sorted(racks), 2)}


def _shuffled(names: Sequence[str], salt: int) -> list[str]:
    return sorted(names, key=lambda n: hashlib.sha256(f"{salt}:{n}".encode()).hexdigest())


def _robust(  # noqa: C901, PLR0912, PLR0915 - split into hard and flaky modes by issue 15 ("Certification workloads that run on a real GPU cluster")
    nodes: Sequence[model.Node], history: Sequence[model.RoundResult], settings: model.Settings
) -> model.Decision:
    """Flaky mode: strict references, two failures beside different references, repeated screening."""
    names = sorted(n.name for n in nodes)
    domains = model.by_domain(nodes)
    k = settings.screen_size or 2  # pairs: the cheapest test per node, and a failure implicates two
    # Strict references: a node that shared an unexplained failure may be the flaky one.
    ev, blamed, unexplained, _, accusations = _read(nodes, history, strict=True)
    # A node stays under test until blamed or FLAKY_PASSES clean passes after its last failure.
    pending = [
        n for n in names if n not in blamed and ev.ever_failed(n, blamed) and ev.clean_passes(n, blamed) < FLAKY_PASSES
    ]
    found = Counter(next(iter(c)) for c in accusations if len(c) == 1)
    infra = sorted(pair for pair, times in found.items() if times >= 2)
    open_accusations = [c for c in accusations if not (c & set(infra))]
    if len(history) >= settings.max_rounds:
        pending, open_accusations = [], []

    busy: set[str] = set()
    # In flaky mode the most-passed references first: a flaky node rarely passes many times in a row.
    refs = sorted(ev.refs(blamed) - set(pending), key=lambda r: (-ev.passes[r], r))
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
            return model.Verdict(
                faulty=faulty,
                healthy=frozenset(set(names) - set(faulty)),
                message=f"no healthy reference node; {len(faulty)} suspect(s) marked failed",
            )
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
    # 4. Re-screen everyone short of passes, with new partners each round.
    if len(history) < settings.max_rounds:
        short = [n for n in names if n not in busy and n not in blamed and ev.clean_passes(n, blamed) < FLAKY_PASSES]
        by_dom = defaultdict(list)
        for n in _shuffled(short, len(history)):
            by_dom[ev.domain[n]].append(n)
        for members in by_dom.values():
            groups += [g for g in model.chunks(members, k) if len(g) >= 2]
    if groups:
        return model.Plan("flaky-rescreen", tuple(groups))
    faulty = {
        n: f"failed beside {len(ev.solo[n])} different healthy reference(s) "
        f"({', '.join(sorted({p for ps in ev.solo[n] for p in ps}))})"
        for n in sorted(blamed)
    }
    sides = tuple((tuple(sorted(domains[a])), tuple(sorted(domains[b]))) for a, b in infra)
    healthy = frozenset(set(names) - set(faulty))
    parts = [f"{len(faulty)} faulty node(s)"] if faulty else []
    parts += [f"{len(sides)} infrastructure fault(s)"] if sides else []
    return model.Verdict(
        faulty=faulty,
        infrastructure=sides,
        healthy=healthy,
        message=("found " + " and ".join(parts)) if parts else "no faults confirmed",
    )


def _link_tests(wanted: set[tuple[str, str]]) -> list[set[str]]:
    """Domain sets whose results split the accused domain pairs (each pair covered twice at the end)."""
    if len(wanted) <= DIRECT_PAIRS:
        return [set(p) for p in sorted(wanted) for _ in range(2)]
    racks = sorted({r for p in wanted for r in p})
    half = len(racks) // 2
    r1, r2 = racks[:half], racks[half:]
    q1, q2 = len(r1) // 2, len(r2) // 2
    sets = [
        set(r1),
        set(r2),
        set(r1[:q1] + r2[:q2]),
        set(r1[:q1] + r2[q2:]),
        set(r1[q1:] + r2[:q2]),
        set(r1[q1:] + r2[q2:]),
    ]
    return [s for s in sets if len(s) >= 2 and _pairs_of(s) & wanted]
