"""The dependency graph of a recipe: checks and the deployment order.

The order is the lexicographically smallest topological order, as upstream computes it, so the same
components always deploy in the same order and adding one never renumbers unrelated ones
needlessly. A graph with no cycle (every recipe that resolves) is ordered here with a heap, as
networkx's ``lexicographical_topological_sort`` orders it (tests/recipe/test_graph.py holds the
two equal): importing networkx costs more than the rest of ``aicr recipe``. A graph with a cycle
is a catalog to fix, and networkx finds and names the cycle.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping, Sequence

from shared import errors

Locate = Callable[[str, str], str]
"""(component, dependency) → where that dependency is declared (``overlays/x.yaml:12 spec...``)."""


def deployment_order(
    dependencies: Mapping[str, Sequence[str]], *, where: str = "recipe", locate: Locate | None = None
) -> list[str]:
    """Components ordered so each comes after everything it depends on.

    ``dependencies`` maps every component to the names it depends on. Raises InvalidInput naming
    the dangling reference or the cycle; with ``locate``, the error's place is the file and line
    that declare the dangling reference (or the cycle's first edge), and a cycle's message names
    where each of its other edges is declared.
    """

    def site(name: str, dep: str) -> str:
        return locate(name, dep) if locate is not None else where

    for name in sorted(dependencies):
        for dep in dependencies[name]:
            if dep not in dependencies:
                raise errors.InvalidInput(
                    f"component {name!r} depends on {dep!r}, which is not in the recipe", where=site(name, dep)
                )
    order = _ordered(dependencies)
    if len(order) == len(dependencies):
        return order
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(dependencies))
    for name in sorted(dependencies):
        for dep in dependencies[name]:
            graph.add_edge(dep, name)
    cycle = nx.find_cycle(graph)
    # Edges point from a dependency to its dependent; read backwards, each name depends on the next.
    path = list(reversed([edge[0] for edge in cycle] + [cycle[0][0]]))
    message = f"dependency cycle: {' -> '.join(path)} (each depends on the next)"
    edges = list(itertools.pairwise(path))
    if locate is not None and len(edges) > 1:
        message += "; " + ", ".join(f"{name} -> {dep} at {site(name, dep)}" for name, dep in edges[1:])
    raise errors.InvalidInput(message, where=site(*edges[0]))


def _ordered(dependencies: Mapping[str, Sequence[str]]) -> list[str]:
    """Kahn's algorithm taking the smallest ready name each step; shorter than ``dependencies``
    when some of them lie on (or after) a cycle."""
    waiting = {name: len(set(deps)) for name, deps in dependencies.items()}
    dependents: dict[str, list[str]] = {name: [] for name in dependencies}
    for name, deps in dependencies.items():
        for dep in set(deps):
            dependents[dep].append(name)
    ready = [name for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for dependent in dependents[name]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, dependent)
    return order
