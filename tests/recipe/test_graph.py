"""Deployment order: dependencies first, lexicographically smallest, cycles and dangling refs named.

Property tests over random DAGs: every component follows all its dependencies, the order is
deterministic, at each step the smallest ready name is taken, and it is networkx's
``lexicographical_topological_sort`` (the graph library, which names a cycle).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import errors
from shared.recipe import graph


@st.composite
def dags(draw: st.DrawFn) -> dict[str, list[str]]:
    names = draw(st.lists(st.from_regex(r"[a-z][a-z-]{0,6}", fullmatch=True), min_size=1, max_size=12, unique=True))
    shuffled = draw(st.permutations(names))
    deps: dict[str, list[str]] = {}
    for index, name in enumerate(shuffled):
        earlier = shuffled[:index]
        deps[name] = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
    return deps


@given(deps=dags())
def test_every_component_comes_after_its_dependencies(deps: dict[str, list[str]]) -> None:
    order = graph.deployment_order(deps)
    assert sorted(order) == sorted(deps)
    position = {name: i for i, name in enumerate(order)}
    for name, needs in deps.items():
        assert all(position[d] < position[name] for d in needs)


@given(deps=dags())
def test_the_order_takes_the_smallest_ready_name_each_step(deps: dict[str, list[str]]) -> None:
    order = graph.deployment_order(deps)
    done: set[str] = set()
    for name in order:
        ready = [n for n in deps if n not in done and all(d in done for d in deps[n])]
        assert name == min(ready)
        done.add(name)


@given(deps=dags(), repeat=st.booleans())
def test_the_order_is_networkx_lexicographical_topological_sort(deps: dict[str, list[str]], repeat: bool) -> None:
    """The heap that orders a recipe (networkx is imported only for a cycle) orders as networkx does."""
    import networkx as nx

    if repeat:  # a dependency listed twice is one edge
        deps = {name: needs + needs[:1] for name, needs in deps.items()}
    dag = nx.DiGraph()
    dag.add_nodes_from(sorted(deps))
    dag.add_edges_from((dep, name) for name in sorted(deps) for dep in deps[name])
    assert graph.deployment_order(deps) == list(nx.lexicographical_topological_sort(dag))


def test_a_self_dependency_is_a_cycle() -> None:
    with pytest.raises(errors.InvalidInput, match=r"dependency cycle: a -> a"):
        graph.deployment_order({"a": ["a"], "b": []})


def test_the_upstream_example_order() -> None:
    deps = {
        "cert-manager": [],
        "kube-prometheus-stack": [],
        "skyhook-operator": [],
        "skyhook-customizations": ["skyhook-operator"],
        "gpu-operator": ["cert-manager", "kube-prometheus-stack", "skyhook-customizations"],
        "nvsentinel": ["cert-manager", "gpu-operator"],
        "kai-scheduler": ["gpu-operator"],
    }
    assert graph.deployment_order(deps) == [
        "cert-manager",
        "kube-prometheus-stack",
        "skyhook-operator",
        "skyhook-customizations",
        "gpu-operator",
        "kai-scheduler",
        "nvsentinel",
    ]


def test_a_cycle_is_named() -> None:
    with pytest.raises(errors.InvalidInput, match=r"dependency cycle: .*a.*b.*c"):
        graph.deployment_order({"a": ["c"], "b": ["a"], "c": ["b"], "d": []})


def test_a_dangling_reference_names_both_components() -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        graph.deployment_order({"a": ["ghost"]})
    assert caught.value.message == "component 'a' depends on 'ghost', which is not in the recipe"
