"""Flaky mode of ``adaptive``: the next round once a result hard faults cannot explain.

Reads a ``flakyview.Evidence`` and plans, in one round:

1. every suspect under test beside a reference it never formed a pair with (so each solo is
   beside a different reference, and a pair is never run twice), same domain first, else across
   a link a passing test has crossed; suspects closest to blame first. A suspect that has met
   every reference in pairs (16 nodes rescreened for many rounds) is tested beside two;
2. tests of the links still accused, one reference per domain;
3. one inter-domain group of references, once, when no test has spanned every domain;
4. every other node still short of clean passes (``FLAKY_PASSES`` when a failure implicates it,
   ``CLEAR_PASSES`` otherwise), screened in pairs it never formed before.

No group holds a single node, and a suspect is only ever beside references. A round with nothing
left to test (or ``max_rounds`` reached) is the verdict: the blamed nodes with the solos that blame
them, and the links confirmed by two direct failures.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from shared.certify.isolate import flakyview, linkprobes, model, references, screening

STAGE = "flaky-rescreen"


def plan(nodes: Sequence[model.Node], history: Sequence[model.RoundResult], settings: model.Settings) -> model.Decision:
    ev = flakyview.Evidence.read(nodes, history)
    blamed = ev.blamed()
    links = ev.confirmed_links(blamed)
    suspects = ev.suspects(blamed, links)
    pending = ev.under_test(blamed, links)
    if len(history) >= settings.max_rounds:
        unresolved = [n for n in pending if n in suspects]
        return verdict(ev, blamed, links, unresolved=unresolved, note=f"stopped after {settings.max_rounds} rounds")
    ranked = sorted(ev.names, key=lambda n: (-ev.clean_passes(n, blamed, links), -ev.passes[n], n))
    pool = references.Pool(set(ev.passes) - suspects - blamed, domain=ev.domain, linked=ev.exonerated, order=ranked)
    under_test = sorted((n for n in pending if n in suspects), key=lambda n: (-len(ev.solos(n)), n))
    groups = _beside_references(under_test, ev, pool)
    accused = [c for c in ev.accusations(blamed, links) if not c & links]
    groups += _link_tests(set().union(*accused), ev, pool)
    groups += _spanning(ev, pool)
    rest = [n for n in pending if n not in suspects and n not in pool.busy]
    groups += screening.fresh_pairs(rest, domain=ev.domain, met=ev.met, linked=ev.exonerated, salt=len(history))
    groups = [g for g in groups if len(g) >= 2]
    if groups:
        return model.Plan(STAGE, tuple(groups))
    return verdict(ev, blamed, links, unresolved=[n for n in pending if n in suspects], note="")


def _beside_references(suspects: Sequence[str], ev: flakyview.Evidence, pool: references.Pool) -> list[tuple[str, ...]]:
    """Each suspect beside a reference it never formed a pair with and never failed beside; once
    it has met every reference in pairs, beside two of them (a group never run before)."""
    groups: list[tuple[str, ...]] = []
    for s in suspects:
        failed_beside = {m for g in ev.solos(s) for m in g}
        ref = pool.take_near(s, ev.met[s] | failed_beside)
        group = (s, ref) if ref is not None else _beside_two(s, failed_beside, ev, pool)
        if group is not None:
            pool.busy.add(s)
            groups.append(group)
    return groups


def _beside_two(
    suspect: str, failed_beside: set[str], ev: flakyview.Evidence, pool: references.Pool
) -> tuple[str, ...] | None:
    first = pool.take_near(suspect, failed_beside)
    second = pool.take_near(suspect, failed_beside | {first}) if first is not None else None
    if first is None or second is None or frozenset((suspect, first, second)) in ev.groups:
        pool.busy.difference_update(n for n in (first, second) if n is not None)
        return None
    return (suspect, first, second)


def _link_tests(wanted: set[screening.Pair], ev: flakyview.Evidence, pool: references.Pool) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = []
    for racks in linkprobes.flaky_link_tests(wanted):
        members = _one_per_domain(sorted(racks), ev, pool)
        if members is not None:
            groups.append(members)
    return groups


def _spanning(ev: flakyview.Evidence, pool: references.Pool) -> list[tuple[str, ...]]:
    domains = set(ev.domain.values())
    tested = ev.passed + [f.nodes for f in ev.failures]
    if len(domains) < 2 or any({ev.domain[n] for n in t} == domains for t in tested):
        return []
    members = _one_per_domain(sorted(domains), ev, pool)
    return [members] if members is not None else []


def _one_per_domain(racks: Sequence[str], ev: flakyview.Evidence, pool: references.Pool) -> tuple[str, ...] | None:
    """A reference of each domain (a pair of them never met before), or None, freeing any taken."""
    members: list[str] = []
    for rack in racks:
        avoid: Collection[str] = ev.met[members[0]] if len(racks) == 2 and members else ()
        ref = pool.take(rack, avoid)
        if ref is None:
            pool.busy.difference_update(members)
            return None
        members.append(ref)
    return tuple(members)


def verdict(
    ev: flakyview.Evidence,
    blamed: set[str],
    links: set[screening.Pair],
    *,
    unresolved: Sequence[str],
    note: str,
) -> model.Verdict:
    domains: dict[str, list[str]] = {}
    for n in ev.names:
        domains.setdefault(ev.domain[n], []).append(n)
    faulty = {}
    for n in sorted(blamed):
        beside = sorted({m for g in ev.solos(n) for m in g if m != n})
        faulty[n] = f"failed beside {len(ev.solos(n))} different healthy reference(s) ({', '.join(beside)})"
    sides = tuple((tuple(domains[a]), tuple(domains[b])) for a, b in sorted(links))
    parts = [f"{len(faulty)} faulty node(s)"] if faulty else []
    parts += [f"{len(sides)} infrastructure fault(s)"] if sides else []
    parts += [f"{len(unresolved)} suspect(s) not resolved"] if unresolved else []
    message = ("found " + " and ".join(parts)) if parts else "no faults confirmed"
    return model.Verdict(
        faulty=faulty,
        infrastructure=sides,
        healthy=frozenset(set(ev.names) - set(faulty) - set(unresolved)),
        message=f"{message}; {note}" if note else message,
        evidence={n: tuple(ev.solos(n)) for n in faulty},
    )
