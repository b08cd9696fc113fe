"""The dependency graph of a recipe (networkx): checks and the deployment order.

The order is the lexicographically smallest topological order, as upstream computes it, so the same
components always deploy in the same order and adding one never renumbers unrelated ones
needlessly.
"""

from __future__ import annotations

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
    import networkx as nx

    def site(name: str, dep: str) -> str:
        return locate(name, dep) if locate is not None else where

    for name in sorted(dependencies):
        for dep in dependencies[name]:
            if dep not in dependencies:
                raise errors.InvalidInput(
                    f"component {name!r} depends on {dep!r}, which is not in the recipe", where=site(name, dep)
                )
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(dependencies))
    for name in sorted(dependencies):
        for dep in dependencies[name]:
            graph.add_edge(dep, name)
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        return list(nx.lexicographical_topological_sort(graph))
    # Edges point from a dependency to its dependent; read backwards, each name depends on the next.
    path = list(reversed([edge[0] for edge in cycle] + [cycle[0][0]]))
    message = f"dependency cycle: {' -> '.join(path)} (each depends on the next)"
    edges = list(itertools.pairwise(path))
    if locate is not None and len(edges) > 1:
        message += "; " + ", ".join(f"{name} -> {dep} at {site(name, dep)}" for name, dep in edges[1:])
    raise errors.InvalidInput(message, where=site(*edges[0]))
