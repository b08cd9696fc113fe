"""The leader loop on the simulated cluster: one leader, hand-over on stop, wake, watch, retries.

Covers: of two replicas only the Lease holder passes, and stopping it hands the Lease over at once
(released, not left to expire); ``wake`` cuts an hour-long poll short; a watching loop passes when
a change it cares about arrives, not for others; a failed pass is reported and retried, a 410
lists again at once; what the passes hold is let go before the Lease; settings that cannot work
are refused. Real Leases over HTTP; time is real but short (polls of 50 ms), and every wait is for
a condition with a generous deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from shared import clock, errors
from shared.kube import errors as kube_errors
from shared.kube import leases, rest
from shared.kube.leaderloop import ControllerSettings, LeaderLoop, Watch

DEADLINE = 30.0
QUICK = ControllerSettings(poll_seconds=0.05, slice_seconds=0.05)


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Replica:
    """A loop on its own thread, counting its passes."""

    def __init__(self, api: Any, identity: str, settings: ControllerSettings = QUICK, **extra: Any) -> None:
        self.passes = 0
        self.leading: list[bool] = []
        self.stop = threading.Event()
        self.loop = LeaderLoop(
            api=api,
            namespace="default",
            lease="widget-controller",
            identity=identity,
            clock=clock.WALL,
            settings=settings,
            reconcile=extra.pop("reconcile", self._pass),
            on_leading=self.leading.append,
            **extra,
        )
        self.thread = threading.Thread(target=self.loop.run, args=(self.stop,), daemon=True)

    def _pass(self) -> None:
        self.passes += 1

    def start(self) -> Replica:
        self.thread.start()
        return self

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(timeout=DEADLINE)
        assert not self.thread.is_alive()


@pytest.fixture()
def replicas() -> Iterator[list[Replica]]:
    started: list[Replica] = []
    yield started
    for replica in started:
        replica.halt()


def _holder(api: Any) -> str | None:
    held = leases.read(api, "default", "widget-controller")
    return held.holder if held else None


def test_only_the_lease_holder_passes_and_stopping_it_hands_the_lease_over(
    api_client: Any, replicas: list[Replica]
) -> None:
    a = Replica(api_client, "replica-a").start()
    replicas.append(a)
    _until(lambda: a.passes >= 2, "the first replica's passes")
    b = Replica(api_client, "replica-b").start()
    replicas.append(b)
    _until(lambda: b.leading.count(False) >= 3, "the second replica's attempts")
    assert b.passes == 0 and _holder(api_client) == "replica-a"
    a.halt()
    assert a.leading[-1] is False
    _until(lambda: b.passes >= 1, "the hand-over")  # a 60-second Lease: released, not expired
    assert _holder(api_client) == "replica-b"
    b.halt()
    assert _holder(api_client) is None


def test_wake_cuts_a_long_poll_short(api_client: Any, replicas: list[Replica]) -> None:
    hour = ControllerSettings(poll_seconds=3600, slice_seconds=0.05)
    a = Replica(api_client, "replica-a", hour).start()
    replicas.append(a)
    _until(lambda: a.passes == 1, "the first pass")
    a.loop.wake()
    _until(lambda: a.passes == 2, "the pass the wake asked for")


def test_a_watching_loop_passes_for_the_changes_it_cares_about(api_client: Any) -> None:
    path = rest.core_path("configmaps", "default")
    seen: list[str] = []

    def wanted(kind: str, obj: dict[str, Any]) -> bool:
        if kind == "ADDED":
            seen.append(obj["metadata"]["name"])
        return kind == "ADDED" and obj["metadata"]["name"].startswith("wanted")

    watching = ControllerSettings(watch_seconds=60, standby_seconds=0.05, retry_seconds=0.05)
    a = Replica(api_client, "replica-a", watching, watch=Watch(path, wanted))
    turn = threading.Thread(target=a.loop.turn, args=(a.stop,), daemon=True)  # one pass, then the watch
    turn.start()
    _until(lambda: a.passes == 1, "the pass")
    for name in ("other", "wanted-1"):
        rest.create(api_client, path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    turn.join(timeout=DEADLINE)
    assert not turn.is_alive() and seen == ["other", "wanted-1"]  # "other" did not end the wait


def test_a_failed_pass_is_reported_and_retried_and_a_410_lists_again_at_once(
    api_client: Any, replicas: list[Replica]
) -> None:
    failures: list[errors.ToolError] = []
    outcomes: list[BaseException | None] = [errors.Unavailable("API server unreachable"), kube_errors.Expired("410")]
    done: list[int] = []

    def flaky() -> None:
        if outcomes:
            raised = outcomes.pop(0)
            if raised is not None:
                raise raised
        done.append(1)

    a = Replica(api_client, "replica-a", reconcile=flaky, on_error=failures.append).start()
    replicas.append(a)
    _until(lambda: len(done) >= 1, "a pass after the failures")
    assert [str(f) for f in failures] == ["API server unreachable"]  # a 410 is no failure: list again


def test_on_stop_lets_go_of_what_passes_hold_before_the_lease(api_client: Any, replicas: list[Replica]) -> None:
    order: list[str] = []

    def held() -> None:
        order.append(f"passes' leases, lease held by {_holder(api_client)}")

    a = Replica(api_client, "replica-a", on_stop=held).start()
    _until(lambda: a.passes >= 1, "a pass")
    a.halt()
    assert order == ["passes' leases, lease held by replica-a"] and _holder(api_client) is None


def test_settings_that_cannot_work_are_refused(api_client: Any) -> None:
    with pytest.raises(ValidationError, match="standby_seconds and retry_seconds"):
        ControllerSettings(watch_seconds=1)
    with pytest.raises(ValidationError):
        ControllerSettings(lease_seconds=0)
    watching = ControllerSettings(watch_seconds=1, standby_seconds=1, retry_seconds=1)
    with pytest.raises(ValueError, match="Watch"):
        LeaderLoop(
            api=api_client,
            namespace="default",
            lease="l",
            identity="me",
            clock=clock.WALL,
            settings=watching,
            reconcile=lambda: None,
        )


class _Controller:
    """A controller replica as ``LeaderLoop.of`` reads one."""

    def __init__(self, api: Any) -> None:
        self.api, self.namespace, self.identity, self.clock = api, "team", "replica-z", clock.WALL


def test_a_controllers_loop_runs_on_its_own_client_namespace_identity_and_clock(api_client: Any) -> None:
    replica = _Controller(api_client)
    stopped: list[str] = []
    loop = LeaderLoop.of(
        replica, lease="widgets", settings=QUICK, reconcile=lambda: None, on_stop=lambda: stopped.append("x")
    )
    assert (loop.api, loop.namespace, loop.identity, loop.clock) == (api_client, "team", "replica-z", clock.WALL)
    assert (loop.lease, loop.settings, loop.watch) == ("widgets", QUICK, None)
    loop.on_stop()
    assert stopped == ["x"]
