"""Tests of the links between topology domains, built from references only.

A group whose members all passed elsewhere and that failed anyway failed on a link between two of
its domains that no passing test has crossed (or, in flaky mode, on a flaky member). The accused
domain pairs are narrowed by groups of one reference per domain chosen by the bits of each
domain's index (``split``), then each candidate is tested directly ``LINK_CONFIRMATIONS`` times
(``direct``); domain pairs no test has crossed yet are covered by direct tests or one inter-domain
group (``cover``). Which pairs are accused, and when one is confirmed, is the modes' reading of
the history; here only the groups are built.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from shared.certify.isolate import references, screening

Pair = screening.Pair
DIRECT_PAIRS = 6
"""Accused domain pairs tested directly; more are narrowed first."""
LINK_CONFIRMATIONS = 2
"""Direct tests of a domain pair that must fail to report it as an infrastructure fault."""


def cover_cost(unspanned: set[Pair]) -> int:
    """References that ``cover`` needs for these domain pairs."""
    if len(unspanned) <= DIRECT_PAIRS:
        return 2 * LINK_CONFIRMATIONS * len(unspanned)
    return len({d for p in unspanned for d in p})


def cover(
    unspanned: set[Pair],
    *,
    pool: references.Pool,
    failed_directly: Mapping[Pair, int],
    doubted: Collection[Pair],
    domain: Mapping[str, str],
    met: Mapping[str, Collection[str]] | None = None,
) -> list[tuple[str, ...]]:
    """Few pairs: direct tests (a faulty link is confirmed at once); many: one inter-domain group."""
    if not unspanned:
        return []
    if len(unspanned) <= DIRECT_PAIRS:
        return direct(unspanned, pool=pool, failed_directly=failed_directly, met=met)
    # Never both ends of a confirmed or accused link: the group would fail on it again and again.
    members: list[str] = []
    for side in sorted({d for p in unspanned for d in p}):
        if any(screening.ordered(side, domain[m]) in doubted for m in members):
            continue
        ref = pool.take(side, last=True)
        if ref is not None:
            members.append(ref)
    return [tuple(members)]


def direct(
    candidates: set[Pair],
    *,
    pool: references.Pool,
    failed_directly: Mapping[Pair, int],
    met: Mapping[str, Collection[str]] | None = None,
) -> list[tuple[str, ...]]:
    """Pairs of references across each candidate domain pair, until it has failed twice directly.
    With ``met``, the two references of a test never formed a pair before."""
    groups: list[tuple[str, ...]] = []
    for a, b in sorted(candidates):
        for _ in range(LINK_CONFIRMATIONS - failed_directly.get((a, b), 0)):
            left = pool.take(a, last=True)
            right = pool.take(b, (met or {}).get(left or "", ()), last=True)
            if left is None or right is None:
                pool.busy.difference_update(n for n in (left, right) if n is not None)
                break
            groups.append((left, right))
    return groups


def split(candidates: set[Pair], pool: references.Pool) -> list[tuple[str, ...]]:
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
            if len(side) < 2 or not screening.domain_pairs(side) & candidates:
                continue
            members = [pool.take(r, last=True) for r in side]
            groups.append(tuple(m for m in members if m is not None))
    return groups


def flaky_link_tests(wanted: set[Pair]) -> list[set[str]]:
    """Domain sets whose results split the accused domain pairs (each pair covered twice at the end)."""
    if len(wanted) <= DIRECT_PAIRS:
        return [set(p) for p in sorted(wanted) for _ in range(LINK_CONFIRMATIONS)]
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
    return [s for s in sets if len(s) >= 2 and screening.domain_pairs(s) & wanted]
