"""Hard mode of ``adaptive``: the next round while the results fit hard node faults and faulty links.

Reads a ``hardview.HardView`` and plans, in one round:

1. **Identification**: each suspect (a member of a failed group that never passed) beside a
   reference from the pool (every node that passed), same domain first, never a node it already
   failed a pair with. A suspect short of a near reference takes one of any domain (a pass clears
   it; a failure is decided once a test spans the two domains), else is paired with a suspect of
   another failure (a pass clears both and so names the partners they failed with); before any pass
   (a full-scale first round failed) the suspects are screened among themselves this way.
2. **Links**: accused domain pairs narrowed by index bits, then tested directly
   (``linkprobes``), and domain pairs no test has spanned covered beside the suspects, first when
   the references suffice for everything.
3. **Nothing failed**: the failure that started the isolation went unexplained, so the nodes are
   screened once more with new partners.
4. **Nothing passed**: once no test passed and no node's failures are all explained by one other
   node (it failed two pairs beside different partners), the round is the verdict: no node can
   be confirmed against a healthy one, all stay blamed, and the message points at a cause they
   share (``SHARED_CAUSE``).

A round with no test left is the verdict: the blamed nodes with the tests that blame them, the
confirmed links with their two sides.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.certify.isolate import hardview, linkprobes, model, references, screening


def plan(
    view: hardview.HardView,
    domains: dict[str, list[str]],
    history: Sequence[model.RoundResult],
    settings: model.Settings,
) -> model.Decision:
    if not view.failures and len(history) < 2:
        # Nothing failed: whatever started the isolation went unexplained, so screen once more
        # with new partners (a flaky node passes a test only part of the time).
        again = screening.screen(domains, settings.screen_size or 2, spanning=False, shift=1)
        return model.Plan("rescreen", again) if again else verdict(view, domains, [], "")
    if len(history) >= settings.max_rounds:
        return verdict(view, domains, [], f"stopped after {settings.max_rounds} rounds")
    if not view.cleared and _each_needs_two_faulty_others(view):
        # Nothing ever passed, and no node's failures are all explained by one other node: more
        # pairs are unlikely to find a reference, and each round is an NCCL run of the whole
        # cluster (up to max_rounds of them).
        return verdict(view, domains, view.suspects, "")
    pool = references.Pool(view.cleared, domain=view.domain, linked=view.exonerated)
    candidates: set[screening.Pair] = set().union(*view.accusations)
    unspanned = screening.domain_pairs(domains) - view.exonerated - candidates - set(view.links)
    unspanned = {p for p in unspanned if pool.count(p[0]) and pool.count(p[1])}
    # Domain pairs no test has spanned yet (the inter-domain group held a suspect) are covered in
    # this round too, first when the references suffice for everything.
    cover_first = pool.total() >= len(view.suspects) + linkprobes.cover_cost(unspanned)
    groups = _cover(unspanned, view, pool) if cover_first else []
    groups += _identify(view, pool, cover_first=cover_first)
    probes, stage = _probe_links(candidates, view, pool, history)
    groups += probes
    if not cover_first:
        groups += _cover(unspanned, view, pool)
    groups = [g for g in groups if len(g) >= 2]
    if groups:
        return model.Plan(stage or ("identification" if view.cleared else "screening"), tuple(groups))
    return verdict(view, domains, view.suspects, "")


def _each_needs_two_faulty_others(view: hardview.HardView) -> bool:
    """Whether every node, were it healthy, would need at least two faulty others to explain the
    failed tests it was in: no single other node was in all of them (two pairs with different
    partners, or an odd node's two triples with no member in common)."""
    common: dict[str, set[str] | None] = dict.fromkeys(view.domain)
    for group in view.failed:
        for n in group:
            others = set(group) - {n}
            seen = common[n]
            common[n] = others if seen is None else seen & others
    return all(seen is not None and not seen for seen in common.values())


def _cover(unspanned: set[screening.Pair], view: hardview.HardView, pool: references.Pool) -> list[tuple[str, ...]]:
    return linkprobes.cover(
        unspanned, pool=pool, failed_directly=view.direct, doubted=view.doubted(), domain=view.domain, met=view.met
    )


def _identify(view: hardview.HardView, pool: references.Pool, *, cover_first: bool) -> list[tuple[str, ...]]:
    """Every suspect beside a reference it never failed with. Short of references, a suspect of a
    failed pair across an unspanned domain pair takes its reference from the other domain: a pass
    clears it and spans the link at once."""
    groups: list[tuple[str, ...]] = []
    unpaired: list[str] = []
    for s in view.suspects:
        ref = None if cover_first else _foreign_reference(s, view, pool)
        ref = ref or pool.take_near(s, view.pair_partners[s])
        if ref is None:
            unpaired.append(s)
        else:
            pool.busy.add(s)
            groups.append((s, ref))
    rest = []
    for s in unpaired:
        # A suspect without references at home: first a domain it has not failed beside.
        ref = pool.take_any(view.pair_partners[s], skip=view.tried.get(s, set()))
        ref = ref or pool.take_any(view.pair_partners[s])
        if ref is None:
            rest.append(s)
        else:
            pool.busy.add(s)
            groups.append((s, ref))
    _pair_suspects(rest, view, pool, groups)
    return groups


def _foreign_reference(suspect: str, view: hardview.HardView, pool: references.Pool) -> str | None:
    tried = view.tried.get(suspect, set())
    for other in view.foreign.get(suspect, ()):
        ref = None if other in tried else pool.take(other, view.pair_partners[suspect])
        if ref is not None:
            return ref
    return None


def _pair_suspects(
    rest: list[str], view: hardview.HardView, pool: references.Pool, groups: list[tuple[str, ...]]
) -> None:
    """Suspects left without any reference, paired with suspects they never failed beside."""
    while rest:
        s = rest.pop(0)
        mate = next((m for m in rest if m not in view.partners[s] and view.domain[m] == view.domain[s]), None)
        mate = mate or next((m for m in rest if m not in view.partners[s]), None)
        # Out of a large failed group with no reference anywhere: screen its suspects in pairs.
        mate = mate or next((m for m in rest if m not in view.pair_partners[s]), None)
        if mate is not None:
            rest.remove(mate)
            pool.busy.update((s, mate))
            groups.append((s, mate))
        elif not view.cleared and groups and len(groups[-1]) == 2 and view.narrower({s, *groups[-1]}):
            # The odd suspect left over with no reference anywhere joins the last pair, not a later round.
            pool.busy.add(s)
            groups[-1] = (*groups[-1], s)


def _probe_links(
    candidates: set[screening.Pair],
    view: hardview.HardView,
    pool: references.Pool,
    history: Sequence[model.RoundResult],
) -> tuple[list[tuple[str, ...]], str | None]:
    """Narrow the accused domain pairs, then test each candidate directly; the stage it names."""
    if not candidates:
        return [], None
    if any(r.stage == "link-split" for r in history) or len(candidates) <= linkprobes.DIRECT_PAIRS:
        groups = linkprobes.direct(candidates, pool=pool, failed_directly=view.direct, met=view.met)
        return groups, (None if view.suspects else "link-probe")
    return linkprobes.split(candidates, pool), "link-split"


SHARED_CAUSE = (
    "no node passed any test, so none was confirmed beside a healthy one: look first at what they all"
    " share (the platform's fabric settings, the threshold)"
)
"""Said when every test failed: the nodes stay blamed (none may be trusted), but a cause common to
all of them (NCCL over TCP where RDMA was meant, a threshold above the hardware) is likelier than
as many faulty nodes, and the operator should not start by replacing them."""


def verdict(
    view: hardview.HardView, domains: dict[str, list[str]], unresolved: Sequence[str], note: str
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
    if unresolved and not view.cleared:
        message += f"; {SHARED_CAUSE}"
    return model.Verdict(
        faulty=faulty,
        infrastructure=sides,
        healthy=healthy,
        message=f"{message}; {note}" if note else message,
        evidence={n: tuple(view.evidence.get(n) or [g for g in view.failed if n in g]) for n in faulty},
    )
