"""Who holds a run: this process's identity as a Lease holder, and how long a holding lasts.

Its own module because both kinds of run are held the same way: a Certification
(``service.run``) and a WorkloadRun (``workload.drive``), and ``service`` imports ``workload``;
with these here, ``workload`` needs nothing from ``service``.
"""

from __future__ import annotations

import os
import socket
import uuid

LEASE_SECONDS = 60
"""A runner renews at every step; one that stops for a minute (virtual) has died."""


def identity() -> str:
    """A holder name unique to this process: host, pid and a random suffix."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
