"""Live views: ``nvsentinel nodes --watch`` and ``nvcrectl certification get NAME --watch``.

Covers, against the simulated cluster with the programs run as their console scripts: into a pipe
the header and every row come once, then one line per row that changed (a cordon shows as its
node's new row; an unchanged node prints nothing more); Ctrl-C stops the view with exit 0 and
nothing on stderr; a Certification's view prints a row as its phase changes and ends by itself
(exit 0) once it has finished; a missing one is exit 3. On a terminal (a pty) the table is redrawn
in place (cursor moved up over the old table) and shows the change, and Ctrl-C exits 0. Every wait
is on a condition under a generous deadline, never on time.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
DEADLINE = 60.0
"""Seconds a view may take to show a change: generous, so a loaded machine passes."""
CURSOR_UP = "\x1b[1A"
"""What rich's Live writes to go back over the table it drew before."""


class Running:
    """A program started in the background whose output is collected as it comes."""

    def __init__(self, argv: list[str], *, tty: bool = False) -> None:
        self.text = ""
        self._changed = threading.Condition()
        env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
        self._pty: int | None = None
        if tty:
            self._pty, child = pty.openpty()
            self.proc = subprocess.Popen(argv, stdout=child, stderr=subprocess.PIPE, env=env)
            os.close(child)
            fd = self._pty
        else:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            assert self.proc.stdout is not None
            fd = self.proc.stdout.fileno()
        self._reader = threading.Thread(target=self._read_fd, args=(fd,))
        self._reader.start()

    def _read_fd(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the pty's other side closed
                chunk = b""
            if not chunk:
                break
            with self._changed:
                self.text += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def lines(self) -> list[str]:
        return self.text.splitlines()

    def wait_for(self, condition: Callable[[str], bool], what: str) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: condition(self.text) or self.proc.poll() is not None, DEADLINE):
                pytest.fail(f"{what}: not shown within {DEADLINE:.0f} s; output so far: {self.text!r}")
        if not condition(self.text):
            pytest.fail(f"{what}: the program ended first ({self.proc.poll()}): {self.text!r}")

    def __enter__(self) -> Running:
        return self

    def __exit__(self, *_exc: object) -> None:
        """A test that failed half-way leaves no process, thread or descriptor behind."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.finish(interrupt=False)

    def finish(self, *, interrupt: bool) -> tuple[int, str]:
        if interrupt:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(timeout=DEADLINE)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self._reader.join(timeout=DEADLINE)
            if self._pty is not None:
                os.close(self._pty)
                self._pty = None
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        assert self.proc.stderr is not None
        if self.proc.stderr.closed:
            return code, ""
        with self.proc.stderr:
            return code, self.proc.stderr.read().decode()


def _nodes(kubectl: Any, *names: str) -> None:
    for name in names:
        kubectl("apply", "-f", "-", input=f"{{apiVersion: v1, kind: Node, metadata: {{name: {name}}}}}")


def _row(node: str, quarantined: str, cordoned: str) -> Callable[[str], bool]:
    def shown(text: str) -> bool:
        return any(line.split()[:3] == [node, quarantined, cordoned] for line in text.splitlines() if line.strip())

    return shown


def test_nodes_watch_into_a_pipe_appends_a_line_per_change_and_stops_on_ctrl_c(
    kubectl: Any, sim_kubeconfig: Path
) -> None:
    _nodes(kubectl, "gpu-node-1", "gpu-node-2")
    with Running([str(BIN / "nvsentinel"), "nodes", "--watch", "-k", str(sim_kubeconfig)]) as view:
        view.wait_for(_row("gpu-node-2", "False", "False"), "the listed nodes")
        assert view.lines()[0].split() == ["NODE", "QUARANTINED", "CORDONED", "ACTION", "CAUSES"]
        kubectl("cordon", "gpu-node-1")
        view.wait_for(_row("gpu-node-1", "False", "True"), "the cordon")
        kubectl("uncordon", "gpu-node-1")
        view.wait_for(lambda t: t.count("gpu-node-1") == 3, "the uncordon")
        code, stderr = view.finish(interrupt=True)
    assert (code, stderr) == (0, "")
    rows = [line.split()[:3] for line in view.lines()[1:]]
    assert rows == [
        ["gpu-node-1", "False", "False"],
        ["gpu-node-2", "False", "False"],
        ["gpu-node-1", "False", "True"],
        ["gpu-node-1", "False", "False"],
    ]


def test_nodes_watch_on_a_terminal_redraws_in_place(kubectl: Any, sim_kubeconfig: Path) -> None:
    _nodes(kubectl, "gpu-node-1", "gpu-node-2")
    argv = [str(BIN / "nvsentinel"), "nodes", "--watch", "-k", str(sim_kubeconfig)]
    with Running(argv, tty=True) as view:
        view.wait_for(_row("gpu-node-2", "False", "False"), "the listed nodes")
        drawn = len(view.text)
        kubectl("cordon", "gpu-node-2")
        view.wait_for(lambda t: _row("gpu-node-2", "False", "True")(t[drawn:]), "the cordon")
        redraw = view.text[drawn:]
        assert CURSOR_UP in redraw  # back over the old table, not a new one under it
        last_frame = redraw.rsplit(CURSOR_UP, 1)[1]
        assert last_frame.count("NODE") == 1 and "gpu-node-1" in last_frame  # the whole table, drawn again
        code, stderr = view.finish(interrupt=True)
    assert (code, stderr) == (0, "")


CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: rack-7, namespace: default}
spec:
  categories:
    - {domain: communication, variant: nccl-all-reduce}
"""


def _status(kubectl: Any, phase: str, message: str) -> None:
    patch = f'{{"status": {{"phase": "{phase}", "message": "{message}"}}}}'
    kubectl("patch", "certification", "rack-7", "--subresource=status", "--type=merge", "-p", patch)


def test_certification_watch_prints_each_phase_and_ends_when_it_has_finished(
    run_cli: Any, kubectl: Any, sim_kubeconfig: Path
) -> None:
    assert run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    kubectl("apply", "-f", "-", input=CERT)
    argv = [str(BIN / "nvcrectl"), "certification", "get", "rack-7", "--watch", "-k", str(sim_kubeconfig)]
    with Running(argv) as view:
        view.wait_for(lambda t: "rack-7  Pending" in t, "the Certification as it is")
        _status(kubectl, "Running", "round 1 of communication")
        view.wait_for(lambda t: "round 1 of communication" in t, "the Running phase")
        _status(kubectl, "Succeeded", "every category passed")
        code, stderr = view.finish(interrupt=False)  # ends by itself
    assert (code, stderr) == (0, "")
    phases = [line.split()[2] for line in view.lines()[1:]]
    assert phases == ["Pending", "Running", "Succeeded"]
    assert view.lines()[0].split() == ["NAMESPACE", "NAME", "PHASE", "ROUND", "MESSAGE"]


def test_watching_a_missing_certification_is_not_found(run_cli: Any, sim_kubeconfig: Path) -> None:
    assert run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    result = run_cli("nvcrectl", "certification", "get", "absent", "--watch", "-k", str(sim_kubeconfig))
    assert result.code == 3
    assert result.stderr == "error: certification default/absent not found\n"
