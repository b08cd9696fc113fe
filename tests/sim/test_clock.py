"""Virtual time: the simulator's clock and the product's one clock that follows it.

Covers: the virtual clock runs at its speed, jumps forward, fires timers in order; driven by a
loop, it never runs past work that is due: a slow loop (timers not fired, writes not handled) holds
every reader at the earliest of them, timers fire in due order each at its own moment, an advance
is worked through timer by timer and ends where asked, and a stuck kubelet holds the cluster's
clock and the product's reading of it (``until``) so a Job's deadline cannot pass before its pod
starts; the API's Date header and /sim/v1/clock carry virtual time; shared.clock.ClusterClock reads
it over HTTP with the official client (any identity may), follows an advance after refresh, and
sleeps in virtual time; a cluster without the endpoint (404/403) gives wall time for good, and a
failed read keeps extrapolating the last reading (never past its ``until``).
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s

from shared import clock
from shared.kube import client
from shared.sim import SimServer
from shared.sim.apiserver import vclock
from tests import waiting
from tests.sim import jobkit


class _Ticks:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_virtual_clock_runs_at_its_speed_and_fires_timers_in_order() -> None:
    real = _Ticks()
    virtual = vclock.VirtualClock(speed=60, start=1000.0, real=real)
    real.now += 2
    assert virtual.time() == 1120.0
    fired: list[str] = []
    virtual.call_at(1200.0, lambda: fired.append("b"))
    virtual.call_at(1150.0, lambda: fired.append("a"))
    virtual.call_at(1300.0, lambda: fired.append("c")).cancel()
    virtual.advance(200)
    assert virtual.fire_due() == 2
    assert fired == ["a", "b"] and virtual.next_due() is None
    virtual.set_speed(0)
    real.now += 100
    assert virtual.time() == 1320.0
    with pytest.raises(ValueError, match="forward"):
        virtual.advance(-1)


def _driven(speed: float) -> tuple[_Ticks, vclock.VirtualClock]:
    """A clock a loop drives (as the kubelet does), on real time that moves only when told."""
    real = _Ticks()
    virtual = vclock.VirtualClock(speed=speed, start=1000.0, real=real)
    virtual.drive(True)
    return real, virtual


def test_a_slow_loop_holds_every_reader_at_the_earliest_unfired_timer() -> None:
    real, virtual = _driven(60)
    seen: list[float] = []
    virtual.call_at(1010.0, lambda: seen.append(virtual.time()))
    real.now += 100  # the loop is late: 6000 virtual seconds of real time, and the timer not fired
    assert virtual.time() == 1010.0 and virtual.held_until() == 1010.0
    assert virtual.fire_due() == 1 and seen == [1010.0]  # the action sees its own moment
    assert virtual.time() == 1010.0  # the time waited for is dropped: the clock runs on from here
    real.now += 0.5
    assert virtual.time() == 1040.0 and virtual.held_until() is None


def test_timers_fire_in_due_order_each_at_its_own_time_and_what_they_schedule_counts_from_there() -> None:
    real, virtual = _driven(60)
    fired: list[tuple[str, float]] = []

    def start() -> None:
        fired.append(("start", virtual.time()))
        virtual.call_later(60, lambda: fired.append(("end", virtual.time())))

    virtual.call_at(1005.0, start)
    virtual.call_at(1030.0, lambda: fired.append(("check", virtual.time())))
    virtual.call_at(1100.0, lambda: fired.append(("deadline", virtual.time())))
    real.now += 1000  # far past all of them
    while virtual.fire_due():  # each pass fires what is due; the clock then moves to the next
        real.now += 1000
    assert fired == [("start", 1005.0), ("check", 1030.0), ("end", 1065.0), ("deadline", 1100.0)]


def test_an_unhandled_write_holds_the_clock_until_the_loop_has_seen_it() -> None:
    real, virtual = _driven(60)
    real.now += 1
    virtual.queued(7)  # written at 1060
    virtual.queued(8)
    real.now += 100
    assert virtual.time() == 1060.0
    virtual.done(7)
    assert virtual.time() == 1060.0  # write 8 is not handled yet
    virtual.done(8)
    real.now += 1
    assert virtual.time() == 1120.0


def test_an_advance_is_worked_through_timer_by_timer_and_ends_exactly_where_asked() -> None:
    real, virtual = _driven(0)
    fired: list[float] = []
    virtual.call_at(1050.0, lambda: (fired.append(virtual.time()), virtual.call_later(100, lambda: None)))
    virtual.call_at(1300.0, lambda: fired.append(virtual.time()))
    virtual.advance(3600)
    assert virtual.time() == 1050.0
    real.now += 50  # paused: real time changes nothing
    assert virtual.fire_due() == 3 and fired == [1050.0, 1300.0]
    assert virtual.time() == 4600.0 and virtual.next_due() is None


def test_a_cancelled_timer_no_longer_holds_and_an_undriven_clock_runs_free() -> None:
    real, virtual = _driven(60)
    timer = virtual.call_at(1010.0, lambda: None)
    real.now += 10
    assert virtual.time() == 1010.0
    timer.cancel()
    real.now += 1
    assert virtual.time() == 1070.0
    virtual.call_at(1080.0, lambda: None)
    virtual.drive(False)  # the kubelet stopped: nothing fires timers, so nothing may hold time
    real.now += 1
    assert virtual.time() == 1130.0 and virtual.held_until() is None


def test_the_api_carries_virtual_time_in_the_date_header_and_clock_endpoint(
    gpu_sim: SimServer, api_client: Any
) -> None:
    gpu_sim.advance(86400)
    expected = gpu_sim.vclock.time()
    _, _, headers = api_client.call_api("/version", "GET", auth_settings=["BearerToken"], response_type="object")
    stamp = email.utils.parsedate_to_datetime(headers["Date"]).timestamp()
    assert abs(stamp - expected) < 2
    reading = clock.parse_reading(
        api_client.call_api(
            clock.CLOCK_PATH, "GET", auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True
        )
    )
    assert reading.speed == 0 and abs(reading.now.timestamp() - expected) < 0.01


def test_the_product_clock_follows_the_simulated_cluster(gpu_sim: SimServer, sim_identity: Callable[..., Path]) -> None:
    robot = client.new_client(kubeconfig=sim_identity("default", "robot"))  # not an admin: reading time is open
    try:
        cluster = clock.for_api_client(robot, max_age=60)
        before = cluster.now()
        assert cluster.is_virtual and abs(before.timestamp() - gpu_sim.vclock.time()) < 0.01
        gpu_sim.advance(300)
        assert cluster.now() == before  # the reading is still fresh: extrapolated at speed 0
        cluster.refresh()
        assert cluster.now().timestamp() == pytest.approx(before.timestamp() + 300, abs=0.01)
        gpu_sim.vclock.set_speed(600)
        cluster.refresh()
        start = cluster.monotonic()
        cluster.sleep(30)  # 30 virtual seconds: 50 ms of real time
        assert cluster.monotonic() - start >= 30
    finally:
        robot.close()


def test_a_write_the_stuck_kubelet_has_not_seen_holds_the_cluster_clock_and_its_readers(
    gpu_sim: SimServer, api_client: Any
) -> None:
    (node,) = gpu_sim.add_gpu_nodes(1)
    job = jobkit.allreduce("held", [node])
    job["spec"]["activeDeadlineSeconds"] = 600  # 0.2 real seconds at 3000x: less than a busy machine's lag
    batch = k8s.BatchV1Api(api_client)
    gpu_sim.vclock.set_speed(3000)
    with gpu_sim.kubelet.lock:  # the loop that starts pods is stuck, as on a busy machine
        batch.create_namespaced_job("default", job)
        held = gpu_sim.vclock.held_until()
        assert held is not None and gpu_sim.vclock.time() == held
        cluster = clock.for_api_client(api_client, max_age=60)
        assert cluster.now().timestamp() == pytest.approx(held, abs=1e-5)  # served with its ``until``
        assert gpu_sim.vclock.time() == held and cluster.now().timestamp() == pytest.approx(held, abs=1e-5)

    def finished() -> Any:
        found = batch.read_namespaced_job("held", "default")
        return found if jobkit.condition(found, "Complete") or jobkit.condition(found, "Failed") else None

    done = waiting.until(finished, what="the Job's verdict")
    assert jobkit.condition(done, "Complete") == "True", done.status


class _Status(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def test_a_cluster_without_the_clock_endpoint_gets_wall_time_for_good() -> None:
    calls: list[int] = []

    def fetch() -> clock.Reading:
        calls.append(1)
        raise clock.NoClusterClock

    cluster = clock.ClusterClock(fetch, max_age=0)
    assert abs((cluster.now() - datetime.now(UTC)).total_seconds()) < 1
    cluster.now()
    assert len(calls) == 1 and not cluster.is_virtual


def test_a_404_from_the_api_means_no_cluster_clock() -> None:
    class Answer404:
        def call_api(self, *args: Any, **kwargs: Any) -> Any:
            raise _Status(404)

    with pytest.raises(clock.NoClusterClock):
        clock.fetch_with(Answer404())()


def test_a_failed_read_keeps_extrapolating_the_last_reading() -> None:
    real = _Ticks()
    answers: list[clock.Reading | Exception] = [
        clock.Reading(datetime(2030, 1, 1, tzinfo=UTC), 10.0),
        OSError("connection refused"),
    ]

    def fetch() -> clock.Reading:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    cluster = clock.ClusterClock(fetch, max_age=1, real=real)
    assert cluster.now() == datetime(2030, 1, 1, tzinfo=UTC)
    real.now += 2
    assert cluster.now() == datetime(2030, 1, 1, 0, 0, 20, tzinfo=UTC)


def test_extrapolation_stops_at_the_reading_s_until() -> None:
    real = _Ticks()
    reading = clock.parse_reading(
        {"now": "2030-01-01T00:00:00.000000Z", "speed": 60.0, "until": "2030-01-01T00:00:30.000000Z"}
    )
    cluster = clock.ClusterClock(lambda: reading, max_age=100, real=real)
    assert cluster.now() == datetime(2030, 1, 1, tzinfo=UTC)
    real.now += 0.25
    assert cluster.now() == datetime(2030, 1, 1, 0, 0, 15, tzinfo=UTC)
    real.now += 10  # the cluster waits for a timer due at :30: so does its reader
    assert cluster.now() == datetime(2030, 1, 1, 0, 0, 30, tzinfo=UTC)
