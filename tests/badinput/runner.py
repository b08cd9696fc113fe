"""Lay out one bad-input case in a fresh folder and run the real program on it as a child process.

Shared by the corpus test (tests/badinput/test_corpus.py) and its benchmark
(benches/bench_badinput.py), so both see the same inputs. What is costly to make is made once per
session in a :class:`Kit`: the 50 MB file (each case links to it), a recipe and a bundle the
programs wrote themselves, and a kubeconfig whose server refuses connections (a case that wrongly
reaches for a cluster ends in exit 6, never in a false pass). A child's peak memory comes from
``os.wait4`` on its pid, so it is its own and not the test process's; its time is measured, never
asserted. When the tests run as root (whom file modes do not stop), a case with an unreadable file
or a read-only folder runs its child without the capabilities that override file modes
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, dropped from its bounding set before the exec), so
the mode is what refuses it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.badinput import cases

BIN = Path(sys.executable).parent
BIG_BYTES = 50 * 1024 * 1024
REAL_SECONDS = 120.0
"""Generous real-time deadline of one child; only a hang reaches it (the bound is not asserted)."""
PR_CAPBSET_DROP = 24
MODE_OVERRIDING_CAPABILITIES = (1, 2)
"""CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (linux/capability.h)."""
UNREACHABLE = "https://127.0.0.1:9"


@dataclass(frozen=True)
class Outcome:
    """What one child did: its exit status, streams, peak memory, time and what changed on disk."""

    code: int
    stdout: str
    stderr: str
    max_rss_bytes: int
    seconds: float
    """Wall time from spawn to exit: what a user waits, longer on a busy machine."""
    cpu_seconds: float
    """The child's user and system time: what the refusal costs, whatever else the machine runs."""
    changed: list[str]


class Kit:
    """The inputs shared by every case of a session, made once under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.big = root / "big.yaml"
        with self.big.open("wb") as out:
            line = b"key: " + b"v" * 58 + b"\n"
            out.write(line * (BIG_BYTES // len(line)) + b"#" * (BIG_BYTES % len(line)))
        self.kubeconfig = root / "unreachable.kubeconfig"
        from shared.sim.apiserver import kubeconfig

        kubeconfig.write(self.kubeconfig, UNREACHABLE, "token", user="nobody", namespace="default", ca_pem=None)
        work = root / "kit"
        work.mkdir()
        self.texts: dict[str, str] = dict(cases.BASES)
        recipe = work / "recipe.yaml"
        self._make("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "-o", str(recipe))
        self.texts["recipe"] = recipe.read_text(encoding="utf-8")
        self.bundle = work / "bundle"
        self._make("aicr", "bundle", "-r", str(recipe), "-o", str(self.bundle))
        self.homes = root / "homes"
        self.homes.mkdir()

    def _make(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [str(BIN / program), *args],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=REAL_SECONDS,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    def env(self, home: Path | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
        home = home or self.root
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "NO_COLOR": "1",
            "COLUMNS": "120",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "KUBECONFIG": str(self.kubeconfig),
            **(extra or {}),
        }

    def text(self, source: cases.FromBase) -> str:
        text = self.texts[source.base]
        for old, new in source.replace:
            assert old in text, f"{source.base} has no {old!r} to replace"
            text = text.replace(old, new, 1)
        return text + source.append


def make(kit: Kit, root: Path, case: cases.Case) -> Path:
    """The case's folder with its files; the child runs in it, so messages name relative paths."""
    folder = Path(tempfile.mkdtemp(prefix=f"{case.id[:40]}-", dir=root))
    for name, content in case.files.items():
        _place(kit, folder / name, content)
    return folder


def _place(kit: Kit, path: Path, content: cases.Content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()  # a file of the bundle the case replaces (or removes)
    if isinstance(content, cases.Marker):
        _MARKERS[content](kit, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif isinstance(content, cases.FromBase):
        path.write_text(kit.text(content), encoding="utf-8")
    elif isinstance(content, cases.Unreadable):
        path.write_bytes(content.data)
        path.chmod(0)
    elif isinstance(content, cases.Bundle):
        shutil.copytree(kit.bundle, path, symlinks=True)
        for rel, data in content.files.items():
            _place(kit, path / rel, data)
    elif isinstance(content, cases.Fifo):
        os.mkfifo(path)
    else:  # pragma: no cover - a new kind of content needs a branch here
        raise AssertionError(f"unknown content {content!r}")


def _loop(_kit: Kit, path: Path) -> None:
    path.symlink_to(path.name + ".loop")
    path.with_name(path.name + ".loop").symlink_to(path.name)


def _read_only(_kit: Kit, path: Path) -> None:
    path.mkdir()
    path.chmod(0o555)


_MARKERS: dict[cases.Marker, Callable[[Kit, Path], None]] = {
    cases.ABSENT: lambda _kit, _path: None,
    cases.BIG: lambda kit, path: path.symlink_to(kit.big),
    cases.DIRECTORY: lambda _kit, path: path.mkdir(),
    cases.LOOP: _loop,
    cases.READ_ONLY_DIR: _read_only,
}


def tree(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``folder`` with its type, size and modification time, symlinks not followed."""
    found: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            status = path.lstat()
            found[str(path.relative_to(folder))] = (stat.S_IFMT(status.st_mode), status.st_size, status.st_mtime_ns)
    return found


def _without_mode_override() -> None:
    """In the child before exec: root keeps every capability but those that ignore file modes."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in MODE_OVERRIDING_CAPABILITIES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run(kit: Kit, folder: Path, case: cases.Case) -> Outcome:
    """Run the case's command in ``folder``; nothing of the test process is shared with the child."""
    before = tree(folder)
    drop = case.needs_modes and os.geteuid() == 0
    home = Path(tempfile.mkdtemp(prefix="home-", dir=kit.homes))
    args = [a.format(big=kit.big, kubeconfig=kit.kubeconfig) for a in case.args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin = (folder / case.stdin).open("rb") if case.stdin else subprocess.DEVNULL
        started = time.monotonic()
        try:
            child = subprocess.Popen(
                [str(BIN / case.program), *args],
                cwd=folder,
                stdin=stdin,
                stdout=out,
                stderr=err,
                env=kit.env(home, case.env),
                # Only a prctl call between fork and exec, no lock taken: safe beside the test's threads.
                preexec_fn=_without_mode_override if drop else None,  # noqa: PLW1509
            )
        finally:
            if case.stdin:
                stdin.close()  # type: ignore[union-attr]
        timer = threading.Timer(REAL_SECONDS, child.kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            timer.cancel()
            timer.join()
        seconds = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    after = tree(folder)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    cpu = usage.ru_utime + usage.ru_stime
    return Outcome(child.returncode, stdout, stderr, usage.ru_maxrss * 1024, seconds, cpu, changed)
