"""Virtual time: the simulator's clock and the product's one clock that follows it.

Covers: the virtual clock runs at its speed, jumps forward, fires timers in order; the API's
Date header and /sim/v1/clock carry virtual time; shared.clock.ClusterClock reads it over HTTP
with the official client (any identity may), follows an advance after refresh, and sleeps in
virtual time; a cluster without the endpoint (404/403) gives wall time for good, and a failed
read keeps extrapolating the last reading.
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from shared import clock
from shared.kube import client
from shared.sim import SimServer
from shared.sim.apiserver import vclock


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
    while (timer := virtual.pop_due()) is not None:
        timer.action()
    assert fired == ["a", "b"] and virtual.next_due() is None
    virtual.set_speed(0)
    real.now += 100
    assert virtual.time() == 1320.0
    with pytest.raises(ValueError, match="forward"):
        virtual.advance(-1)


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
