"""The reference pool: nodes that passed and are trusted, handed out one test at a time.

A suspect is tested beside a reference: if it fails there, the failure is its own. Both modes of
``adaptive`` draw from this one pool and differ only in whom they put in it — hard mode every
node that passed (a hard-faulty node never does), flaky mode only passed nodes no unexplained
failure implicates, most clean passes first. Each reference serves one test per round (the groups
of a round run at once), and a reference is taken from the suspect's own domain first, else from
a domain whose link to it a passing test has already crossed, so the failure cannot be the link's.
What the pool leaves to its callers: which nodes are suspects, and whom a node must not meet again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from shared.certify.isolate import screening


class Pool:
    """References by domain in the order they should be used; ``busy`` holds this round's nodes."""

    def __init__(
        self,
        members: Iterable[str],
        *,
        domain: Mapping[str, str],
        linked: Collection[screening.Pair],
        order: Sequence[str] | None = None,
    ) -> None:
        """``members`` are the references; ``order`` (all nodes) sets their preference, by name
        without it. ``linked`` are the domain pairs whose link a passing test crossed."""
        self.domain = domain
        self.linked = linked
        chosen = set(members)
        ranked = [n for n in order if n in chosen] if order is not None else sorted(chosen)
        self.free: dict[str, list[str]] = {d: [] for d in sorted(set(domain.values()))}
        for name in ranked:
            self.free[domain[name]].append(name)
        self.busy: set[str] = set()

    def __contains__(self, node: object) -> bool:
        return isinstance(node, str) and node in self.free.get(self.domain.get(node, ""), ())

    def take(self, domain: str, avoid: Collection[str] = (), *, last: bool = False) -> str | None:
        """A free reference of the domain; ``last`` takes from the other end, so that link tests
        leave the first (most trusted) references of every domain to the suspects."""
        members = self.free.get(domain, [])
        for n in reversed(members) if last else members:
            if n not in self.busy and n not in avoid:
                self.busy.add(n)
                return n
        return None

    def take_near(self, node: str, avoid: Collection[str] = ()) -> str | None:
        """A reference in the node's domain, else in a domain whose link to it has passed a test."""
        home = self.domain[node]
        ref = self.take(home, avoid)
        for other in self.free:
            if ref is not None:
                break
            if other != home and screening.ordered(home, other) in self.linked:
                ref = self.take(other, avoid)
        return ref

    def take_any(self, avoid: Collection[str] = (), *, skip: Collection[str] = ()) -> str | None:
        """A reference of any domain not in ``skip``."""
        for domain in self.free:
            ref = None if domain in skip else self.take(domain, avoid)
            if ref is not None:
                return ref
        return None

    def count(self, domain: str) -> int:
        return sum(1 for n in self.free.get(domain, []) if n not in self.busy)

    def total(self) -> int:
        return sum(self.count(d) for d in self.free)
