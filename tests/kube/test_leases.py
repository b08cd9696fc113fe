"""Leases on the simulated cluster: one winner of two contenders, renewal, expiry take-over, release."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from shared.kube import leases

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_of_two_contenders_exactly_one_holds_the_lease(api_client: Any) -> None:
    first = leases.try_acquire(api_client, "default", "cert-a", identity="runner-1", duration=30, now=lambda: T0)
    second = leases.try_acquire(api_client, "default", "cert-a", identity="runner-2", duration=30, now=lambda: T0)
    assert (first, second) == (True, False)
    holding = leases.read(api_client, "default", "cert-a")
    assert holding is not None and holding.holder == "runner-1"


def test_the_holder_renews_and_an_expired_lease_is_taken_over(api_client: Any) -> None:
    assert leases.try_acquire(api_client, "default", "l", identity="a", duration=30, now=lambda: T0)
    assert leases.try_acquire(
        api_client, "default", "l", identity="a", duration=30, now=lambda: T0 + timedelta(seconds=20)
    )
    assert not leases.try_acquire(
        api_client, "default", "l", identity="b", duration=30, now=lambda: T0 + timedelta(seconds=45)
    )
    assert leases.try_acquire(
        api_client, "default", "l", identity="b", duration=30, now=lambda: T0 + timedelta(seconds=51)
    )


def test_a_released_lease_is_free_at_once(api_client: Any) -> None:
    assert leases.try_acquire(api_client, "default", "r", identity="a", duration=300, now=lambda: T0)
    leases.release(api_client, "default", "r", identity="b")  # not ours: nothing happens
    assert not leases.try_acquire(api_client, "default", "r", identity="b", duration=300, now=lambda: T0)
    leases.release(api_client, "default", "r", identity="a")
    assert leases.try_acquire(api_client, "default", "r", identity="b", duration=300, now=lambda: T0)


def test_an_observer_takes_over_only_after_seeing_the_record_unrenewed_for_its_real_time_minimum(
    api_client: Any,
) -> None:
    real = [100.0]
    observer = leases.Observer(min_real_seconds=2.0, monotonic=lambda: real[0])
    late = T0 + timedelta(seconds=3600)  # long expired in the lease's own (cluster) time

    def take() -> bool:
        return leases.try_acquire(
            api_client, "default", "o", identity="b", duration=15, now=lambda: late, observer=observer
        )

    assert leases.try_acquire(api_client, "default", "o", identity="a", duration=15, now=lambda: T0)
    assert not take()  # first sight of a's record: the clock starts
    real[0] += 1.9
    assert not take()
    assert leases.try_acquire(  # a renews (in its own time): the record changed, b starts again
        api_client, "default", "o", identity="a", duration=15, now=lambda: T0 + timedelta(seconds=10)
    )
    real[0] += 1.9
    assert not take()
    real[0] += 2.0
    assert take()
    holding = leases.read(api_client, "default", "o")
    assert holding is not None and holding.holder == "b"
