"""The dependency graph of a recipe (networkx): checks and the deployment order.

The order is the lexicographically smallest topological order, as upstream computes it, so the same
components always deploy in the same order and adding one never renumbers unrelated ones
needlessly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shared import errors


def deployment_order(dependencies: Mapping[str, Sequence[str]], *, where: str = "recipe") -> list[str]:
    """Components ordered so each comes after everything it depends on.

    ``dependencies`` maps every component to the names it depends on. Raises InvalidInput naming
    the dangling reference or the cycle.
    """
    import networkx as nx

    for name in sorted(dependencies):
        for dep in dependencies[name]:
            if dep not in dependencies:
                raise errors.InvalidInput(
                    f"component {name!r} depends on {dep!r}, which is not in the recipe", where=where
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
    raise errors.InvalidInput(f"dependency cycle: {' -> '.join(path)} (each depends on the next)", where=where)
