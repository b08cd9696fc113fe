"""``nvcrectl controller`` and the run Lease on the simulated cluster, with real threads.

Covers: a Certification created without ``--wait`` is run to its verdict by a controller running in
a thread (stopped at teardown, no thread left behind); the controller takes over a run whose
holder stopped renewing its Lease, but only once it has also seen it unrenewed for the real-time
margin (a busy holder on a fast clock keeps its run); a second controller replica does nothing while
the leader holds the leader Lease; two ``run --wait`` runners started at once: one runs, the other
waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import clock
from shared.certify import controller, leasing, models, resource, service
from shared.kube import client, leases
from shared.sim import SimServer
from shared.sim.gpu import fabric
from tests import waiting
from tests.certify import clusterkit as kit

LIMIT = {"busBandwidthGBps": "value >= 300"}
REAL_SECONDS = 100.0  # generous, and below pytest-timeout's 120 s so a failure says what it waited for


@pytest.fixture()
def fast_cluster(gpu_sim: SimServer, api_client: Any) -> SimServer:
    """Eight nodes in two racks, node-002's NIC at 40 %, virtual time 600x (runners sleep on it).

    Each workload keeps its default deadline (an hour of cluster time): the simulated cluster's
    clock waits for the loop that starts its pods, so a busy machine only slows virtual time down,
    and a group fails for its measurements, never because its pods were slow to start."""
    gpu_sim.add_gpu_nodes(8, racks=2)
    gpu_sim.fabric.inject(fabric.parse_all(["node-002:nic=0.4"]))
    gpu_sim.vclock.set_speed(600)
    return gpu_sim


@pytest.fixture()
def in_thread(sim_kubeconfig: Path) -> Iterator[Callable[[Callable[[Any], None]], None]]:
    """Start ``body(own_client)`` in a thread; at teardown stop and join every one of them."""
    started: list[tuple[threading.Thread, Any]] = []

    def start(body: Callable[[Any], None]) -> None:
        own = client.new_client(kubeconfig=sim_kubeconfig)
        thread = threading.Thread(target=body, args=(own,), daemon=True)
        thread.start()
        started.append((thread, own))

    yield start
    for thread, own in started:
        thread.join(timeout=REAL_SECONDS)
        client.close(own)
    assert not [t for t, _ in started if t.is_alive()], "a thread was left running"


def _finished(api: Any, name: str) -> models.Certification:
    def verdict() -> models.Certification | None:
        cert, _ = resource.get(api, "default", name)
        return cert if cert.status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED) else None

    return waiting.until(verdict, what=f"{name}'s verdict", seconds=REAL_SECONDS)


def _controller(stop: threading.Event) -> Callable[[Any], None]:
    return lambda own: controller.serve(own, namespace="default", stop=stop)


def test_a_certification_created_without_wait_is_run_to_its_verdict_by_the_controller(
    fast_cluster: SimServer, api_client: Any, in_thread: Callable[[Callable[[Any], None]], None]
) -> None:
    kit.create(api_client, kit.certification("no-wait", thresholds=LIMIT))
    stop = threading.Event()
    in_thread(_controller(stop))
    try:
        cert = _finished(api_client, "no-wait")
    finally:
        stop.set()
    assert cert.status.phase == "Failed"
    assert [f.name for f in cert.status.categoryStatuses[0].failedNodes] == ["node-002"]


def test_the_controller_takes_over_a_run_whose_holder_stopped_renewing(
    fast_cluster: SimServer, api_client: Any, in_thread: Callable[[Callable[[Any], None]], None]
) -> None:
    kit.create(api_client, kit.certification("orphan", thresholds=LIMIT))
    ticker = clock.for_api_client(api_client)
    assert leases.try_acquire(api_client, "default", "orphan", identity="dead-runner", duration=60, now=ticker.now)
    stop = threading.Event()
    in_thread(_controller(stop))
    try:
        cert = _finished(api_client, "orphan")
    finally:
        stop.set()
    assert [f.name for f in cert.status.categoryStatuses[0].failedNodes] == ["node-002"]


def test_a_second_replica_does_nothing_while_the_leader_holds_the_leader_lease(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4, racks=2)
    kit.create(api_client, kit.certification("led"))
    ticker = clock.for_api_client(api_client)
    leader = controller.Controller(api_client, "default", "replica-a", ticker)
    follower = controller.Controller(api_client, "default", "replica-b", ticker)
    assert leader.reconcile() == ["led: 4 node(s), 1 categor(y/ies)"]
    assert follower.reconcile() == []


def test_a_replica_takes_an_expired_run_over_only_after_seeing_it_unrenewed_in_real_time_too(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.add_gpu_nodes(4, racks=2)
    kit.create(api_client, kit.certification("stalled"))
    ticker = clock.for_api_client(api_client, max_age=0)
    assert leases.try_acquire(api_client, "default", "stalled", identity="busy-runner", duration=60, now=ticker.now)
    gpu_sim.advance(3600)  # an hour of cluster time: on a fast clock, a real moment of a busy runner
    real = [0.0]
    margin = leasing.SETTINGS.min_real_lease_seconds
    replica = controller.Controller(
        api_client, "default", "replica-a", ticker, seen=leases.Observer(margin, monotonic=lambda: real[0])
    )
    assert replica.reconcile() == []  # expired, but only just seen unrenewed
    real[0] += margin / 2
    assert replica.reconcile() == []
    real[0] += margin / 2
    assert replica.reconcile() == ["stalled: 4 node(s), 1 categor(y/ies)"]


def test_two_runners_started_at_once_one_runs_and_the_other_waits(
    fast_cluster: SimServer, api_client: Any, in_thread: Callable[[Callable[[Any], None]], None]
) -> None:
    # Slower than the other tests: the 60-virtual-second Lease must outlast a real step (0.4 s here).
    fast_cluster.vclock.set_speed(150)
    kit.create(api_client, kit.certification("both", thresholds=LIMIT))
    barrier = threading.Barrier(2)
    notes: dict[str, list[str]] = {"a": [], "b": []}
    verdicts: dict[str, str | None] = {}

    def runner(me: str) -> Callable[[Any], None]:
        def body(own: Any) -> None:
            barrier.wait()
            result = service.drive(
                own, namespace="default", name="both", timeout=None, on_progress=notes[me].append, me=f"runner-{me}"
            )
            verdicts[me] = result.cert.status.phase

        return body

    in_thread(runner("a"))
    in_thread(runner("b"))
    _finished(api_client, "both")
    waiting.until(lambda: len(verdicts) == 2, what="both runners' verdicts", seconds=REAL_SECONDS)
    assert verdicts == {"a": "Failed", "b": "Failed"}
    stepped = [me for me, said in notes.items() if any("round 1 planned" in n for n in said)]
    waited = [me for me, said in notes.items() if said and said[0].startswith("waiting: runner-")]
    assert len(stepped) == 1 and len(waited) == 1 and stepped != waited, notes
    # The waiter took the run over only once it had ended: it re-ran nothing.
    assert all("running" not in n and "planned" not in n for n in notes[waited[0]]), notes[waited[0]]
