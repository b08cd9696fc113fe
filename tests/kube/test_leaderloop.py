"""The leader loop on the simulated cluster: one leader, hand-over on stop, wake, watch, retries.

Covers: of two replicas only the Lease holder passes, and stopping it hands the Lease over at once
(released, not left to expire); ``wake`` cuts an hour-long poll short; a watching loop passes when
a change it cares about arrives, not for others; a failed pass is reported and retried, a 410
lists again at once; what the passes hold is let go before the Lease; settings that cannot work
are refused; a standby takes an expired Lease over only after its real-time margin, and every
leader-elected controller (and every run Lease) keeps one. Real Leases over HTTP; time is real but
short (polls of 50 ms), and every wait is for a condition with a generous deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from shared import clock, errors
from shared.kube import errors as kube_errors
from shared.kube import leases, rest
from shared.kube.leaderloop import ControllerSettings, LeaderLoop, Watch, backoff_seconds

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


@pytest.mark.parametrize(("margin", "taken"), [(3600.0, False), (0.0, True)], ids=["margin", "no-margin"])
def test_a_standby_takes_an_expired_lease_over_only_after_its_real_time_margin(
    api_client: Any, margin: float, taken: bool
) -> None:
    # the holder renewed last in 2020: long expired in the standby's (wall) clock, but the standby
    # has only just seen the record, and on a fast simulated clock that is what a busy holder looks like
    stale = datetime(2020, 1, 1, tzinfo=UTC)
    assert leases.try_acquire(
        api_client, "default", "widget-controller", identity="busy-holder", duration=15, now=lambda: stale
    )
    passes: list[int] = []
    standby = LeaderLoop(
        api=api_client,
        namespace="default",
        lease="widget-controller",
        identity="standby",
        clock=clock.WALL,
        settings=ControllerSettings(poll_seconds=0.01, slice_seconds=0.01, min_real_lease_seconds=margin),
        reconcile=lambda: passes.append(1),
    )
    stop = threading.Event()
    for _ in range(3):
        standby.turn(stop)
    assert (bool(passes), _holder(api_client)) == (taken, "standby" if taken else "busy-holder")


def test_every_leader_elected_controller_keeps_a_real_time_margin_on_its_leases() -> None:
    from shared.certify import controller as certify_controller
    from shared.certify import leasing
    from shared.health import controller as health_controller
    from shared.lifecycle import controller as lifecycle_controller

    default = ControllerSettings().min_real_lease_seconds
    assert default >= 1  # a second or more: longer than a busy machine keeps a thread from running
    for kept in (health_controller.SETTINGS, leasing.SETTINGS, lifecycle_controller.SETTINGS):
        assert kept.min_real_lease_seconds >= default
    # the run Leases of Certifications and WorkloadRuns keep it too, in a replica and in run --wait
    assert certify_controller.Controller(None, "default", "me").seen.min_real_seconds >= default
    assert leasing.observer().min_real_seconds == leasing.SETTINGS.min_real_lease_seconds


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


WATCHING = ControllerSettings(watch_seconds=5, standby_seconds=0.05, retry_seconds=0.05)


def test_a_watch_cut_mid_stream_is_resumed_from_its_last_version_without_listing_again(
    sim: Any, api_client: Any, replicas: list[Replica]
) -> None:
    path = rest.core_path("configmaps", "default")
    restarts: list[tuple[str, str]] = []
    a = Replica(
        api_client,
        "replica-a",
        WATCHING,
        watch=Watch(path, lambda kind, obj: False),
        on_restart=lambda r, why: restarts.append((r, why)),
    )
    replicas.append(a)
    a.start()
    _until(lambda: a.passes == 1, "the first pass")
    _until(lambda: any(r.verb == "watch" for r in sim.audit.records()), "the watch")
    lists = sum(1 for r in sim.audit.records() if r.verb == "list" and r.resource == "configmaps")
    sim.faults.drop_watches()
    _until(lambda: restarts == [("configmaps", "dropped")], "the restart")
    _until(lambda: sum(1 for r in sim.audit.records() if r.verb == "watch") >= 2, "the second watch")
    assert a.passes == 1  # no new pass, no new list: the watch went on from where it was
    assert sum(1 for r in sim.audit.records() if r.verb == "list" and r.resource == "configmaps") == lists


def test_refused_credentials_end_the_loop_after_one_fresh_read(sim: Any, tmp_path: Any) -> None:
    from shared.kube import client
    from shared.sim.apiserver import identities

    token = sim.identities.mint(identities.Identity("short-lived", (identities.MASTERS, identities.AUTHENTICATED)))
    path = sim.write_kubeconfig(tmp_path / "kubeconfig")
    path.write_text(path.read_text().replace(sim.identities.admin_token, token))
    api = client.new_client(kubeconfig=path)
    try:
        sim.identities.revoke(token)
        failures: list[errors.ToolError] = []
        loop = LeaderLoop(
            api=api,
            namespace="default",
            lease="widget-controller",
            identity="a",
            clock=clock.WALL,
            settings=QUICK,
            reconcile=lambda: None,
            on_error=failures.append,
        )
        with pytest.raises(errors.Unauthorized):
            loop.run(threading.Event())
        assert failures == []  # not retried as a passing failure
        assert [r.code for r in sim.audit.records()] == [401, 401]  # first try, then the fresh read's
    finally:
        client.close(api)


def test_reading_the_credentials_again_needs_a_client_built_from_a_configuration(api_client: Any) -> None:
    from shared.kube import client

    assert client.reload_credentials(api_client) is True
    assert client.reload_credentials(object()) is False


@settings(max_examples=200, deadline=None)
@given(
    failures=st.integers(min_value=1, max_value=40),
    retry=st.floats(min_value=0.01, max_value=10),
    cap=st.floats(min_value=0.01, max_value=120),
    retry_after=st.none() | st.floats(min_value=0, max_value=600),
)
def test_the_backoff_doubles_with_jitter_up_to_its_cap_and_honours_retry_after(
    failures: int, retry: float, cap: float, retry_after: float | None
) -> None:
    s = ControllerSettings(retry_seconds=retry, max_backoff_seconds=cap)
    pause = backoff_seconds(failures, s, retry_after=retry_after)
    ceiling = max(retry, cap)
    expected = min(ceiling, retry * 2.0 ** (failures - 1))
    floor = expected / 2
    if retry_after is not None:
        floor = max(floor, min(retry_after, ceiling))
    assert floor - 1e-9 <= pause <= max(expected, min(retry_after or 0, ceiling)) + 1e-9
    assert pause <= ceiling + 1e-9
