"""The retry helper against the emulator's injected faults, with a fake sleep (no waiting).

Covers: 409s are retried by re-running the whole read-modify-write until it lands; 429 waits at
least Retry-After; 500s are retried; 404 and 403 are raised at once, mapped; attempts run out
with the last error's class; backoff doubles with bounded jitter.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared import errors
from shared.kube import errors as kube_errors
from shared.kube import retry
from shared.sim import SimServer


class _Clock:
    def __init__(self) -> None:
        self.pauses: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)


def _cordon(core: k8s.CoreV1Api, calls: list[int]) -> Any:
    def step() -> Any:
        calls.append(1)
        node = core.read_node("node-000")
        node.spec.unschedulable = True
        return core.replace_node("node-000", node)

    return step


def test_conflicts_are_retried_by_rerunning_the_read_modify_write(sim: SimServer, api_client: Any) -> None:
    sim.add_nodes(1)
    sim.faults.inject(409, verb="update", resource="nodes", count=2)
    clock, calls = _Clock(), []
    done = retry.call(_cordon(k8s.CoreV1Api(api_client), calls), sleep=clock.sleep, rand=lambda: 0.0)
    assert done.spec.unschedulable is True
    assert len(calls) == 3 and len(clock.pauses) == 2


def test_throttling_waits_at_least_the_servers_retry_after(sim: SimServer, api_client: Any) -> None:
    sim.faults.inject(429, verb="list", resource="namespaces", count=1)
    clock = _Clock()
    retry.call(lambda: k8s.CoreV1Api(api_client).list_namespace(), sleep=clock.sleep, rand=lambda: 0.0)
    assert clock.pauses == [1.0]


def test_server_errors_are_retried(sim: SimServer, api_client: Any) -> None:
    sim.faults.inject(500, resource="namespaces", count=3)
    clock = _Clock()
    found = retry.call(lambda: k8s.CoreV1Api(api_client).list_namespace(), sleep=clock.sleep, rand=lambda: 0.0)
    assert "default" in {n.metadata.name for n in found.items}
    assert len(clock.pauses) == 3


def test_not_found_is_raised_at_once_as_not_found(sim: SimServer, api_client: Any) -> None:
    clock = _Clock()
    with pytest.raises(errors.NotFound):
        retry.call(lambda: k8s.CoreV1Api(api_client).read_node("missing"), sleep=clock.sleep)
    assert clock.pauses == []


def test_running_out_of_attempts_raises_the_last_error_class(sim: SimServer, api_client: Any) -> None:
    sim.faults.inject(409, verb="update", resource="nodes", count=10)
    sim.add_nodes(1)
    clock = _Clock()
    with pytest.raises(kube_errors.Conflict):
        retry.call(
            _cordon(k8s.CoreV1Api(api_client), []),
            policy=retry.RetryPolicy(attempts=3),
            sleep=clock.sleep,
            rand=lambda: 0.5,
        )
    assert len(clock.pauses) == 2


def test_backoff_doubles_and_stays_within_its_bounds() -> None:
    policy = retry.RetryPolicy(base_delay=0.1, max_delay=1.0, jitter=0.5)
    assert [retry.delay_for(n, policy, unit=1.0) for n in (1, 2, 3, 4, 5)] == [0.1, 0.2, 0.4, 0.8, 1.0]
    assert retry.delay_for(1, policy, unit=0.0) == pytest.approx(0.05)


def test_a_down_server_is_unavailable_after_the_retries(sim: SimServer, api_client: Any) -> None:
    sim.faults.configure(down_seconds=30)
    api_client.configuration.retries = 0
    with pytest.raises(errors.Unavailable):
        retry.call(
            lambda: k8s.CoreV1Api(api_client).list_namespace(_request_timeout=2),
            policy=retry.RetryPolicy(attempts=2),
            sleep=lambda _s: None,
        )
