"""Isolation strategies as pure functions, property-tested over random fault sets.

Covers: every hard-faulty node found and no healthy node blamed, for every strategy, whether the
strategy screens itself or starts from a failed full-scale round; a faulty link between two racks
reported as an infrastructure fault with its two sides; the default needs at most half the rounds
of halving with one fault; strategies see only results (the oracle is outside them); flaky nodes
are never confused with healthy ones; decisions are a pure function of the history.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.certify.isolate import STRATEGIES, model, trial


def _nodes(count: int, per_rack: int = 8) -> list[model.Node]:
    return [model.Node(f"node-{i:04d}", f"rack-{i // per_rack}") for i in range(count)]


def _oracle(nodes: list[model.Node], **faults: object) -> trial.Oracle:
    return trial.Oracle(domain={n.name: n.domain for n in nodes}, **faults)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@settings(max_examples=60, deadline=None)
@given(data=st.data(), count=st.integers(4, 80), full_scale_first=st.booleans())
def test_every_faulty_node_is_found_and_no_healthy_node_is_blamed(name: str, data: st.DataObject, count: int,
                                                                  full_scale_first: bool) -> None:
    nodes = _nodes(count)
    names = [n.name for n in nodes]
    bad = data.draw(st.sets(st.sampled_from(names), max_size=max(count // 8, 1)))
    first = [names] if full_scale_first else None
    result = trial.run(STRATEGIES[name], nodes, _oracle(nodes, hard=frozenset(bad)), first=first)
    assert set(result.verdict.faulty) == bad
    assert not result.verdict.infrastructure


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_faulty_link_between_two_racks_blames_no_node(name: str) -> None:
    nodes = _nodes(32)
    result = trial.run(STRATEGIES[name], nodes, _oracle(nodes, links=frozenset({("rack-1", "rack-2")})))
    assert not result.verdict.faulty


def test_halving_misses_a_link_its_cross_boundary_mixes_never_pair_as_upstream_does() -> None:
    """Upstream's probes pair A[:1]+B[:1] and A[1:]+B[1:]: racks 1 and 2 never meet in one group."""
    nodes = _nodes(32)
    result = trial.run(STRATEGIES["halving"], nodes, _oracle(nodes, links=frozenset({("rack-1", "rack-2")})))
    assert result.verdict.infrastructure == ()


def test_the_default_strategy_names_a_link_fault_by_its_two_racks() -> None:
    nodes = _nodes(32)
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, links=frozenset({("rack-1", "rack-2")})))
    assert result.verdict.infrastructure == ((tuple(f"node-{i:04d}" for i in range(8, 16)),
                                              tuple(f"node-{i:04d}" for i in range(16, 24))),)


@pytest.mark.parametrize("count", [64, 232], ids=lambda n: f"{n}-nodes")
def test_the_default_takes_at_most_half_the_rounds_of_halving_for_one_fault(count: int) -> None:
    nodes = _nodes(count, per_rack=16)
    oracle_args = {"hard": frozenset({nodes[count // 3].name})}
    ours = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, **oracle_args))
    theirs = trial.run(STRATEGIES["halving"], nodes, _oracle(nodes, **oracle_args))
    assert len(ours.history) * 2 <= len(theirs.history)


@pytest.mark.parametrize("seed", range(10), ids=lambda s: f"seed-{s}")
def test_the_default_never_blames_a_healthy_node_when_some_nodes_are_flaky(seed: int) -> None:
    nodes = _nodes(48)
    rng = random.Random(seed)
    flaky = frozenset(rng.sample([n.name for n in nodes], 2))
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, flaky=flaky, rng=rng))
    assert set(result.verdict.faulty) <= flaky


def test_a_decision_is_a_pure_function_of_the_history() -> None:
    nodes = _nodes(24)
    done = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, hard=frozenset({"node-0005"})))
    again = STRATEGIES["adaptive"](nodes, done.history[:2], model.Settings())
    assert isinstance(again, model.Plan)
    assert again.groups == tuple(t.nodes for t in done.history[2].tests)


@pytest.mark.parametrize("p", [0.5, 0.8], ids=lambda p: f"p={p}")
def test_a_flaky_node_that_fails_once_is_found_in_nine_seeds_of_ten_and_no_healthy_node_is_blamed(p: float) -> None:
    """A node that never fails during a run cannot be told from a healthy one, so recall is counted
    over the seeds where the flaky node failed at least one test."""
    nodes = _nodes(48)
    names = [n.name for n in nodes]
    showed, found = 0, 0
    for seed in range(60):
        rng = random.Random(seed)
        flaky = rng.choice(names)
        result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, flaky=frozenset({flaky}), flaky_p=p, rng=rng))
        assert set(result.verdict.faulty) <= {flaky}, f"seed {seed}: a healthy node blamed"
        if any(flaky in t.nodes and not t.passed for r in result.history for t in r.tests):
            showed += 1
            found += flaky in result.verdict.faulty
    assert showed >= 20
    assert found >= 0.9 * showed
