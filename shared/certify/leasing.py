"""Who holds a run: this process's identity as a Lease holder, and the timings of holding one.

Its own module because both kinds of run are held the same way: a Certification
(``service.run``) and a WorkloadRun (``workload.drive``), by the CLI with ``--wait`` or by
``nvcrectl controller`` (``controller``); ``service`` imports ``workload``, and with these here
``workload`` needs nothing from ``service``.
"""

from __future__ import annotations

import os
import socket
import uuid

from shared.kube.leaderloop import ControllerSettings

SETTINGS = ControllerSettings()
"""The defaults, for leader and run Leases alike: a runner renews its run's Lease at every step
(``poll_seconds`` of cluster time apart), so one silent for a minute of cluster time has died and
the run is taken over; minutes are short next to a certification of hours."""


def identity() -> str:
    """A holder name unique to this process: host, pid and a random suffix."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
