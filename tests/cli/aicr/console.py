"""The ``aicr`` console script in a fresh process, and whether it imported typer.

The fast-path tests (test_fast.py, test_fast_bundle.py) tell which path a command line took by
typer's presence at exit: a fresh interpreter, because an import made by an earlier test in this
process would hide it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = """
import sys
from pathlib import Path

marker = Path(sys.argv.pop(1))
import atexit

atexit.register(lambda: marker.write_text(str("typer" in sys.modules)))
sys.argv[0] = "aicr"
from aicr.main import run

run()
"""


def run(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], bool]:
    """``aicr ARGV`` run in ``cwd`` as the console script runs it (no ``AICR_*`` variables): the
    finished process, and whether typer was imported."""
    marker = cwd / "typer-loaded"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AICR_", "_AICR_"))}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(marker), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    loaded = marker.read_text() == "True"
    marker.unlink()
    return proc, loaded
