"""Who holds a run, and how: this process's identity as a Lease holder, the timings of holding one,
and the loop that holds a run's Lease and steps the run to its end.

Its own module because both kinds of run are held the same way: a Certification
(``service.drive``) and a WorkloadRun (``workload.drive``), by the CLI with ``--wait`` or by
``nvcrectl controller`` (``controller``); ``service`` imports ``workload``, and with these here
``workload`` needs nothing from ``service``. What a step does and what it reports belong to the
kind of run; how the object is read and written, to its module.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from shared.clock import Clock
from shared.kube import leases
from shared.kube.api import KubeApi
from shared.kube.leaderloop import ControllerSettings

SETTINGS = ControllerSettings()
"""The defaults, for leader and run Leases alike: a runner renews its run's Lease at every step
(``poll_seconds`` of cluster time apart), so one silent for a minute of cluster time has died and
the run is taken over; minutes are short next to a certification of hours."""


def observer() -> leases.Observer:
    """A contender's memory of the run Leases others hold: it takes one over only after seeing it
    unrenewed for ``SETTINGS.min_real_lease_seconds`` of real time as well as expired in cluster
    time, so a busy holder on a fast simulated clock keeps its run (one per runner or replica)."""
    return leases.Observer(SETTINGS.min_real_lease_seconds)


def identity() -> str:
    """A holder name unique to this process: host, pid and a random suffix."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class Turn:
    """What one turn of ``drive`` found: the note to show (None: nothing to say) and whether the run ended."""

    note: str | None
    done: bool


def _never() -> bool:
    return False


def drive(
    api: KubeApi,
    *,
    namespace: str,
    lease: str,
    clock: Clock,
    step: Callable[[], Turn],
    ended: Callable[[], bool] = _never,
    timeout: float | None,
    me: str | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> bool:
    """Hold ``lease`` and ``step`` the run until a step says it is done (or ``timeout`` seconds of
    cluster time pass), a turn every ``SETTINGS.poll_seconds`` of cluster time; True when it timed out.

    While someone else holds the Lease the turn is a wait, ended when ``ended`` says the holder
    finished the run (never, by default: the run is taken over once that Lease is let go or expires).
    ``on_progress`` gets each note that differs from the one before. The Lease is given up at the end.
    """
    me = me or identity()
    start = clock.monotonic()
    last = ""
    seen = observer()
    try:
        while True:
            if leases.try_acquire(
                api, namespace, lease, identity=me, duration=SETTINGS.lease_seconds, now=clock.now, observer=seen
            ):
                turn = step()
            else:
                done = ended()
                held = leases.read(api, namespace, lease)
                turn = Turn(f"waiting: {held.holder if held else 'someone'} holds the run", done)
            if on_progress is not None and turn.note is not None and turn.note != last:
                on_progress(turn.note)
                last = turn.note
            if turn.done:
                return False
            if timeout is not None and clock.monotonic() - start >= timeout:
                return True
            clock.sleep(SETTINGS.poll_seconds)
    finally:
        leases.release(api, namespace, lease, identity=me)
