"""How the long-running commands take SIGTERM and Ctrl-C (``shared.stopping``).

Covers: SIGTERM and SIGINT set the stop flag inside ``on_signals`` and the previous handlers come
back after; an inherited SIGINT ignore (a background job of a script without job control) is kept,
while SIGTERM still stops; the simulator's ``serve`` follows the same rule (read from the kernel's
signal masks of the running process, so nothing waits for a signal that should not act).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import stopping
from tests import waiting

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def sigint_restored() -> Iterator[None]:
    before = {sig: signal.getsignal(sig) for sig in stopping.SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


def _wait_set(stop: threading.Event) -> bool:
    return stop.wait(waiting.REAL_SECONDS)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_sets_the_flag_and_the_old_handlers_come_back(sig: signal.Signals, sigint_restored: None) -> None:
    before = {s: signal.getsignal(s) for s in stopping.SIGNALS}
    stop = threading.Event()
    with stopping.on_signals(stop):
        os.kill(os.getpid(), sig)
        assert _wait_set(stop)
    assert {s: signal.getsignal(s) for s in stopping.SIGNALS} == before


def test_an_inherited_sigint_ignore_is_kept_and_sigterm_still_stops(sigint_restored: None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()
    with stopping.on_signals(stop):
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # ignored by the kernel: nothing runs
        assert not stop.is_set()
        os.kill(os.getpid(), signal.SIGTERM)
        assert _wait_set(stop)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_off_the_main_thread_nothing_is_installed(sigint_restored: None) -> None:
    before = {s: signal.getsignal(s) for s in stopping.SIGNALS}
    seen: list[object] = []

    def body() -> None:
        with stopping.on_signals(threading.Event()):
            seen.append({s: signal.getsignal(s) for s in stopping.SIGNALS})

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(waiting.REAL_SECONDS)
    assert seen == [before]


def _masks(pid: int) -> dict[str, int]:
    """The kernel's view of the process's signal dispositions (``SigIgn``, ``SigCgt``) as bit masks."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    return {name: int(fields[name].strip(), 16) for name in ("SigIgn", "SigCgt")}


def _bit(sig: signal.Signals) -> int:
    return 1 << (int(sig) - 1)


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/PID/status (Linux)")
@pytest.mark.parametrize("inherited_ignore", [False, True], ids=["foreground", "background-of-a-script"])
def test_the_simulator_keeps_an_inherited_sigint_ignore(tmp_path: Path, inherited_ignore: bool) -> None:
    serve = ["serve", "--port", "0", "--nodes", "1", "--kubeconfig-out", str(tmp_path / "kubeconfig")]
    process = subprocess.Popen(
        [sys.executable, "-m", "shared.sim", *serve],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignoring_sigint if inherited_ignore else None,  # noqa: PLW1509 (a signal disposition: safe before exec)
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("ready "), process.stderr.read() if process.stderr else ""
        masks = _masks(process.pid)  # "ready" is printed inside on_signals: the handlers are in place
        assert bool(masks["SigIgn"] & _bit(signal.SIGINT)) is inherited_ignore
        assert bool(masks["SigCgt"] & _bit(signal.SIGINT)) is not inherited_ignore
        assert masks["SigCgt"] & _bit(signal.SIGTERM)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=waiting.REAL_SECONDS) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=waiting.REAL_SECONDS)
