"""Node agents: Xid in kernel logs, DCGM health/diag, InfiniBand/RoCE ports, cloud maintenance.

Each monitor turns what it reads into *unhealthy* HealthEvents; ``memory.Memory`` then decides
what is news (a new or changed failure, a recovery) so a poll that sees the same failure again
publishes nothing and a check that stops failing publishes the healthy event quarantine's
un-quarantine path needs. ``syslog`` runs the Xid monitor (a log read once, followed by ``tail``,
or the journal); ``agent`` reads node roots, loops and publishes for the others; ``report`` says
how their events are shown; ``commands`` is what each ``nvsentinel monitor`` command runs, and the
only module here that prints (through ``shared.output``). Product code here never imports the
simulator: it reads the same files a real node has.
"""
