"""Isolation strategies as pure functions, property-tested over random fault sets.

Covers: every hard-faulty node found and no healthy node blamed, for every strategy, whether the
strategy screens itself or starts from a failed full-scale round; a faulty link between two racks
reported as an infrastructure fault with its two sides; the default needs at most half the rounds
of halving with one fault; strategies see only results (the oracle is outside them); flaky nodes
are never confused with healthy ones; decisions are a pure function of the history; the default
names hard faults in the round after screening; when nothing fails it screens once more with new
partners; a link among many racks is narrowed by index bits and named by its two sides; a faulty
node is found when no node of its rack is healthy (a lone node in the last rack), and a link to such
a rack is still told from a faulty node when a third rack can clear it. Live on the simulated
cluster (16 nodes, node-009 flaky at p = 0.5, simulator seeds 1, 3 and 4, ``certification run``'s
full-scale first round): the flaky node is blamed whenever it failed, no healthy node is, no
isolation round runs a one-node group or a pair twice, within the 20-round limit.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.certify.isolate import STRATEGIES, hard, model, trial
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests.certify import clusterkit as kit


def _nodes(count: int, per_rack: int = 8) -> list[model.Node]:
    return [model.Node(f"node-{i:04d}", f"rack-{i // per_rack}") for i in range(count)]


def _oracle(nodes: list[model.Node], **faults: object) -> trial.Oracle:
    return trial.Oracle(domain={n.name: n.domain for n in nodes}, **faults)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@settings(max_examples=60, deadline=None)
@given(data=st.data(), count=st.integers(4, 80), full_scale_first=st.booleans())
def test_every_faulty_node_is_found_and_no_healthy_node_is_blamed(
    name: str, data: st.DataObject, count: int, full_scale_first: bool
) -> None:
    nodes = _nodes(count)
    names = [n.name for n in nodes]
    bad = data.draw(st.sets(st.sampled_from(names), max_size=max(count // 8, 1)))
    first = [names] if full_scale_first else None
    result = trial.run(STRATEGIES[name], nodes, _oracle(nodes, hard=frozenset(bad)), first=first)
    assert set(result.verdict.faulty) == bad
    assert not result.verdict.infrastructure


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize(
    ("count", "per_rack", "bad"),
    [
        (57, 8, {"node-0000", "node-0001", "node-0056"}),  # the last rack holds one node, and it is faulty
        (9, 8, {"node-0008"}),  # the same with two racks: the node is named, not the link to it
        (18, 8, {"node-0016", "node-0017"}),  # every node of the last rack is faulty
        (19, 2, {"node-0001", "node-0018"}),  # a suspect left without a reference shares a failure with a faulty node
        (3, 8, {"node-0002"}),  # an odd count in one rack
    ],
    ids=lambda v: str(len(v)) if isinstance(v, set) else str(v),
)
@pytest.mark.parametrize("full_scale_first", [False, True], ids=["screened", "after-full-scale"])
def test_a_faulty_node_in_a_rack_without_a_healthy_node_is_found(
    name: str, count: int, per_rack: int, bad: set[str], full_scale_first: bool
) -> None:
    nodes = _nodes(count, per_rack)
    names = [n.name for n in nodes]
    result = trial.run(
        STRATEGIES[name], nodes, _oracle(nodes, hard=frozenset(bad)), first=[names] if full_scale_first else None
    )
    assert set(result.verdict.faulty) == bad
    assert not result.verdict.infrastructure


def test_a_link_to_a_lone_node_rack_blames_no_node_when_another_rack_can_clear_it() -> None:
    nodes = _nodes(17)
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, links=frozenset({("rack-0", "rack-2")})))
    assert not result.verdict.faulty
    assert result.verdict.infrastructure == ((tuple(f"node-{i:04d}" for i in range(8)), ("node-0016",)),)


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
    assert result.verdict.infrastructure == (
        (tuple(f"node-{i:04d}" for i in range(8, 16)), tuple(f"node-{i:04d}" for i in range(16, 24))),
    )


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
    for k, expected in enumerate(done.history):
        again = STRATEGIES["adaptive"](nodes, done.history[:k], model.Settings())
        assert isinstance(again, model.Plan)
        assert again.groups == tuple(t.nodes for t in expected.tests)
    assert STRATEGIES["adaptive"](nodes, done.history, model.Settings()) == done.verdict


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


@pytest.mark.parametrize("seed", range(8), ids=lambda s: f"seed-{s}")
def test_the_default_names_hard_faults_two_rounds_after_screening(seed: int) -> None:
    """One failure beside nodes that passed names a hard-faulty node, so the second round decides."""
    nodes = _nodes(64, per_rack=16)
    bad = frozenset(random.Random(seed).sample([n.name for n in nodes], 5))
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, hard=bad))
    assert set(result.verdict.faulty) == bad
    assert [r.stage for r in result.history] == ["screening", "identification"]


def test_when_nothing_fails_the_default_screens_once_more_with_new_partners() -> None:
    nodes = _nodes(16)
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes))
    first, again = ({frozenset(t.nodes) for t in r.tests} for r in result.history)
    assert [r.stage for r in result.history] == ["screening", "rescreen"]
    assert not {g for g in first & again if len(g) == 2}
    assert not result.verdict.faulty and result.verdict.message == "no faults confirmed"


@pytest.mark.parametrize("full_scale_first", [False, True], ids=["screening", "full-scale"])
@pytest.mark.parametrize("count", [3, 5, 12, 33, 101])
def test_when_every_test_fails_the_default_blames_all_and_points_at_a_shared_cause(
    count: int, full_scale_first: bool
) -> None:
    nodes = _nodes(count, per_rack=4)
    names = [n.name for n in nodes]
    first = [names] if full_scale_first else None
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, hard=frozenset(names)), first=first)
    assert set(result.verdict.faulty) == set(names)
    assert result.verdict.message.endswith(hard.SHARED_CAUSE), result.verdict.message
    # a few pairing rounds, not max_rounds of them (each a run of the whole cluster's NCCL test)
    assert len([r for r in result.history if r.stage != "full-scale"]) <= 4
    # a test that passed gives the others a reference: no such hint then
    some = frozenset(names[: max(count // 4, 1)])
    confirmed = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, hard=some), first=first)
    assert set(confirmed.verdict.faulty) == some
    assert hard.SHARED_CAUSE not in confirmed.verdict.message


@pytest.mark.parametrize("link", [("rack-03", "rack-09"), ("rack-00", "rack-11"), ("rack-05", "rack-06")])
def test_the_default_narrows_a_link_among_many_racks_by_index_bits_and_names_its_two_sides(
    link: tuple[str, str],
) -> None:
    nodes = [model.Node(f"node-{i:04d}", f"rack-{i // 6:02d}") for i in range(72)]
    result = trial.run(STRATEGIES["adaptive"], nodes, _oracle(nodes, links=frozenset({link})))
    assert not result.verdict.faulty
    sides = {frozenset(n.name for n in nodes if n.domain == rack) for rack in link}
    assert [{frozenset(a), frozenset(b)} for a, b in result.verdict.infrastructure] == [sides]
    assert "link-split" in [r.stage for r in result.history]


@pytest.mark.parametrize("seed", [1, 3, 4], ids=lambda s: f"sim-seed-{s}")
def test_live_a_flaky_node_is_blamed_when_it_failed_and_no_healthy_node_is(
    gpu_sim: SimServer, api_client: Any, seed: int
) -> None:
    """Issue 15's "Done when" rule on three seeds (``make bench`` runs seeds 1-20 at 16 and 64 nodes)."""
    gpu_sim.add_gpu_nodes(16)
    gpu_sim.fabric.rng.seed(seed)  # as ``serve --seed``: the flaky dice
    gpu_sim.fabric.inject(fabric.parse_all(["node-009:flaky=0.5"]))
    kit.create(api_client, kit.certification("flaky", thresholds={"busBandwidthGBps": "value >= 300"}))
    category = kit.drive(gpu_sim, api_client, "flaky", steps=600).status.categoryStatuses[0]
    rounds = [[(tuple(g.nodes), g.passed) for g in r.groups] for r in category.rounds]
    failed = any(not passed for r in rounds for nodes, passed in r if "node-009" in nodes)
    assert [f.name for f in category.failedNodes] == (["node-009"] if failed else [])
    assert len(rounds) <= model.Settings().max_rounds
    isolation = [nodes for r in rounds[1:] for nodes, _ in r]
    assert all(len(nodes) >= 2 for nodes in isolation)
    flaky_rounds = [
        [n for n, _ in r] for r, raw in zip(rounds, category.rounds, strict=True) if raw.stage == "flaky-rescreen"
    ]
    seen = [frozenset(nodes) for r in rounds for nodes, _ in r if len(nodes) == 2]
    assert all(seen.count(frozenset(g)) == 1 for r in flaky_rounds for g in r if len(g) == 2)
