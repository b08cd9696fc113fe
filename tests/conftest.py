"""Fixtures shared by every test: isolated environment, the reference folder, thread hygiene."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests.simfixtures"]

PROJECT = Path(__file__).resolve().parent.parent
TEAM_SHARED = PROJECT.parent / "shared"

settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
"""No per-example deadline: on a busy machine a slow example is not a failure (tests never time)."""


def pytest_configure() -> None:
    """Ctrl-C as a terminal delivers it. A suite started in the background of a script without job
    control (``make test &``, nohup, some CI runners) inherits SIGINT ignored, and so does every program
    it starts, which then rightly ignores it: the tests that press Ctrl-C would press it in vain."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden outputs")
    parser.addoption(
        "--real-cluster", action="store_true", help="run the contract suite against the cluster named by KUBECONFIG"
    )


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Fixed terminal, no colour, private cache and home, no inherited debug flags."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in list(os.environ):
        if name.endswith(("_DEBUG", "_LOG_JSON")) and name.split("_")[0] in ("AICR", "NVCRE", "NVSENTINEL"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Programs run in-process set up logging; undo it so one test's --debug never leaks into the next."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("shared", "aicr", "nvcre", "nvsentinel")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    """A test must stop every thread it starts."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon]
    assert not leaked, f"test leaked threads: {leaked}"


@pytest.fixture()
def team_shared() -> Path:
    """The team's reference folder beside the project; tests that need it skip without it."""
    if not TEAM_SHARED.is_dir():
        pytest.skip(f"reference folder {TEAM_SHARED} is absent (CI always has it)")
    return TEAM_SHARED


@pytest.fixture()
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


class CliResult:
    """What one in-process program run produced."""

    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code = code
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, stderr={self.stderr!r})"


@pytest.fixture()
def run_cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run a program in-process as its console script would, returning exit code and streams."""
    from shared import cli

    def _run(program: str, *args: str) -> CliResult:
        if program == "aicr":
            from aicr.main import build_app
        elif program == "nvcrectl":
            from nvcre.main import build_app
        else:
            from nvsentinel.main import build_app
        capsys.readouterr()
        code = cli.run(build_app(), program, list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return _run


@pytest.fixture()
def readonly_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder nothing can be created in: a mode-555 folder, or for root (whom modes do not stop)
    the root of sysfs, which refuses new files to everyone."""
    if os.geteuid() != 0:
        folder = tmp_path / "readonly"
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    yield Path("/sys")
