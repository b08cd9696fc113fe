"""Screening groups: how the nodes are first split into small tests, and how they are split again.

Both modes of ``adaptive`` screen: hard mode once (pairs inside each topology domain, odd nodes
across domains, one inter-domain group beside them), flaky mode every round for the nodes still
short of clean passes, in pairs that were never tested before (``fresh_pairs``), so a flaky node
meets a new partner each time and a pair that failed is not run again. Pure functions of names;
which nodes to screen is the modes' business.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from shared.certify.isolate import model

Pair = tuple[str, str]
"""Two domain names (or node names) in sorted order."""


def domain_pairs(domains: Iterable[str]) -> set[Pair]:
    """Every pair of distinct domains among ``domains``, each in sorted order."""
    return {(a, b) for a, b in itertools.combinations(sorted(set(domains)), 2)}


def ordered(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def shuffled(names: Iterable[str], salt: int) -> list[str]:
    """A fixed pseudo-random order per ``salt``: new partners each round, same plan on a replay."""
    return sorted(names, key=lambda n: hashlib.sha256(f"{salt}:{n}".encode()).hexdigest())


def screen(
    domains: Mapping[str, Sequence[str]], size: int, *, spanning: bool, shift: int = 0
) -> tuple[tuple[str, ...], ...]:
    """Groups of ``size`` inside each domain; odd nodes paired across domains; optionally one
    inter-domain group of a node per domain. ``shift`` rotates partners for a repeat screening."""
    span = [members[-1] for members in domains.values()] if spanning and len(domains) > 1 else []
    groups: list[tuple[str, ...]] = []
    odd: list[str] = []
    for members in domains.values():
        rest = _rotated([m for m in members if m not in span], shift)
        if size > 2:
            groups += model.chunks(rest, size)
            continue
        groups += [tuple(rest[i : i + 2]) for i in range(0, len(rest) - 1, 2)]
        odd += rest[-1:] if len(rest) % 2 else []
    groups += [tuple(odd[i : i + 2]) for i in range(0, len(odd) - 1, 2)]
    if len(odd) % 2:
        _place_last_odd(odd[-1], groups, span)
    return tuple(groups + ([tuple(span)] if span else []))


def _rotated(names: list[str], shift: int) -> list[str]:
    if not shift or not names:
        return names
    k = shift % len(names)
    return names[k:] + names[:k]


def _place_last_odd(node: str, groups: list[tuple[str, ...]], span: list[str]) -> None:
    """The one node left over joins the inter-domain group while it is small, else the last group."""
    if span and (not groups or len(span) <= 2):
        span.append(node)
    elif groups:
        groups[-1] = (*groups[-1], node)
    # A single node with nothing to join is not a group test: it is left out.


def fresh_pairs(
    names: Sequence[str],
    *,
    domain: Mapping[str, str],
    met: Mapping[str, Collection[str]],
    linked: Collection[Pair],
    salt: int,
) -> list[Pair]:
    """Disjoint pairs of ``names`` that were never a two-node test before (``met``), inside each
    domain first, then the nodes left over across domains whose link a test has already passed
    (``linked``). A node without a possible partner waits a round."""
    order = shuffled(names, salt)
    by_domain: dict[str, list[str]] = {}
    for n in order:
        by_domain.setdefault(domain[n], []).append(n)
    pairs: list[Pair] = []
    left: list[str] = []
    for members in by_domain.values():
        matched, rest = _match(members, lambda a, b: b not in met.get(a, ()))
        pairs += matched
        left += rest
    across, _ = _match(left, lambda a, b: b not in met.get(a, ()) and _allowed(a, b, domain, linked))
    return pairs + across


def _match(names: Sequence[str], allowed: Callable[[str, str], bool]) -> tuple[list[Pair], list[str]]:
    """Greedy matching in the given order, the node with the fewest possible partners first (so
    that the last nodes still find one), each paired with its candidate of fewest partners."""
    position = {n: i for i, n in enumerate(names)}
    options = {n: [m for m in names if m != n and allowed(n, m)] for n in names}
    degree = {n: len(options[n]) for n in names}
    free = dict.fromkeys(names)
    pairs: list[Pair] = []
    rest: list[str] = []

    def leave(node: str) -> None:
        del free[node]
        for m in options[node]:
            degree[m] -= 1

    while free:
        node = min(free, key=lambda n: (degree[n], position[n]))
        leave(node)
        near = [m for m in options[node] if m in free]
        if not near:
            rest.append(node)
            continue
        mate = min(near, key=lambda m: (degree[m], position[m]))
        leave(mate)
        pairs.append(ordered(node, mate))
    return pairs, rest


def _allowed(a: str, b: str, domain: Mapping[str, str], linked: Collection[Pair]) -> bool:
    return domain[a] == domain[b] or ordered(domain[a], domain[b]) in linked
