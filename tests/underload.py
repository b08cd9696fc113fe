"""Run a command while other CPU-bound processes compete for the machine: ``make test-under-load``.

The suite must not depend on the machine's speed (its waits are for conditions, its deadlines in
cluster time or generous real time). This is how that is proved: a few busy loops (two by default,
one per core of a small CI runner) spin while the command runs, and are stopped when it ends,
fails, is interrupted (Ctrl-C) or terminated. Each loop is a child Python process killed by its
pid; it also checks its parent every few milliseconds of work and ends by itself when the runner
is gone (killed with SIGKILL, so no ``finally`` ran), so no busy loop outlives its run.

    python -m tests.underload [--busy N] -- COMMAND [ARG...]

The exit status is the command's (128 + signal number when a signal ended it). The command finds
the busy loops' pids in ``UNDERLOAD_BUSY_PIDS``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from types import FrameType

BUSY = 2
"""Busy loops by default: two, as in the report of a failure on a machine with two other CPU-bound processes."""

_SPIN = (
    "import os, sys\n"
    "parent = int(sys.argv[1])\n"
    "while os.getppid() == parent:\n"  # orphaned (the runner was killed): stop spinning
    "    for _ in range(200_000):\n"
    "        pass\n"
)
"""A busy loop in pure Python: all user CPU, no I/O, no output."""


PIDS_VARIABLE = "UNDERLOAD_BUSY_PIDS"
"""Set for the command: the busy loops' pids, separated by spaces (its tests check them)."""


def start_busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` busy loops, each in its own session so a Ctrl-C at the terminal reaches only this
    runner, which then stops them itself (by pid)."""
    return [
        subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())], start_new_session=True) for _ in range(count)
    ]


def stop_busy_loops(loops: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill each loop by its pid and reap it; one already gone is fine."""
    for loop in loops:
        with contextlib.suppress(ProcessLookupError):
            loop.kill()
    for loop in loops:
        loop.wait()


@contextlib.contextmanager
def busy(count: int = BUSY) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` busy loops for the length of the ``with`` block, stopped however it ends."""
    loops: list[subprocess.Popen[bytes]] = []
    try:
        loops = start_busy_loops(count)
        yield loops
    finally:
        stop_busy_loops(loops)


def _terminated(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def run(command: Sequence[str], *, count: int = BUSY) -> int:
    """Run ``command`` (inheriting stdin, stdout and stderr) under ``count`` busy loops; its exit status."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        with busy(count) as loops:
            pids = " ".join(str(loop.pid) for loop in loops)
            print(f"underload: {len(loops)} busy loop(s) running (pids {pids})", file=sys.stderr, flush=True)
            child = subprocess.Popen(list(command), env={**os.environ, PIDS_VARIABLE: pids})
            try:
                status = child.wait()
            except BaseException:
                # Ctrl-C reached the command too (same terminal); SIGTERM did not: end it and wait.
                with contextlib.suppress(ProcessLookupError):
                    child.terminate()
                child.wait()
                raise
        print("underload: busy loops stopped", file=sys.stderr, flush=True)
        return status if status >= 0 else 128 - status
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.underload", description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=BUSY, help=f"busy loops to run alongside (default {BUSY})")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")
    if args.busy < 0:
        parser.error("--busy must be 0 or more")
    try:
        return run(command, count=args.busy)
    except KeyboardInterrupt:
        print("underload: interrupted; busy loops stopped", file=sys.stderr, flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
