"""The lint gates of ``make test`` fail on what they exist to catch.

The formatter check and the complexity rules are run on a deliberately bad file in a temporary
directory with the project's own ruff configuration, so a change to ``pyproject.toml`` that quietly
switches either gate off fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"
CONFIG = ROOT / "pyproject.toml"

UNFORMATTED = "def f( a,b ):\n    return {'a':a,'b':b}\n"

BRANCHY = (
    "def f(x: int) -> int:\n"
    + "".join(
        f"    if x == {n}:\n        return {n}\n" if n % 2 else f"    if x > {n}:\n        x -= {n}\n"
        for n in range(16)
    )
    + "    return x\n"
)

LONG = "def f() -> int:\n    x = 0\n" + "".join(f"    x += {n}\n" for n in range(60)) + "    return x\n"


def _ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RUFF), *args, "--config", str(CONFIG), "."],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_format_gate_fails_on_an_unformatted_file(tmp_path: Path) -> None:
    (tmp_path / "stray.py").write_text(UNFORMATTED, encoding="utf-8")
    proc = _ruff("format", "--check", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "stray.py" in proc.stdout + proc.stderr


def test_the_format_gate_passes_a_formatted_file(tmp_path: Path) -> None:
    (tmp_path / "fine.py").write_text('def f(a, b):\n    return {"a": a, "b": b}\n', encoding="utf-8")
    proc = _ruff("format", "--check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_complexity_rules_fail_on_a_branchy_function(tmp_path: Path) -> None:
    (tmp_path / "stray.py").write_text(BRANCHY, encoding="utf-8")
    proc = _ruff("check", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for rule in ("C901", "PLR0911", "PLR0912"):
        assert rule in proc.stdout, proc.stdout


def test_the_statement_count_rule_fails_on_a_long_function(tmp_path: Path) -> None:
    (tmp_path / "stray.py").write_text(LONG, encoding="utf-8")
    proc = _ruff("check", "--output-format", "concise", cwd=tmp_path)
    assert "PLR0915" in proc.stdout, proc.stdout


def test_a_waiver_names_its_rule_and_is_honoured(tmp_path: Path) -> None:
    waived = BRANCHY.replace("int) -> int:", "int) -> int:  # noqa: C901, PLR0911, PLR0912 - a test's waiver", 1)
    (tmp_path / "waived.py").write_text(waived, encoding="utf-8")
    proc = _ruff("check", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
