"""Start-up cost guards: ``--help`` and offline commands load only what they use.

Each check runs the real program in a fresh interpreter, because an import made by an earlier test
in this process would hide a regression.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("kubernetes", "celpy", "networkx", "jinja2", "prometheus_client")

_PROBE = """
import json, sys
from shared import cli
from {package}.main import build_app
code = cli.run(build_app(), {program!r}, {argv!r})
sys.stdout.flush()
print("\\n" + json.dumps({{"code": code, "modules": sorted({{m.split(".")[0] for m in sys.modules}})}}))
"""


def _loaded(package: str, program: str, argv: list[str]) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(package=package, program=program, argv=argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


@pytest.mark.parametrize(
    ("package", "program"), [("aicr", "aicr"), ("nvcre", "nvcrectl"), ("nvsentinel", "nvsentinel")]
)
def test_help_loads_none_of_the_heavy_libraries(package: str, program: str) -> None:
    code, modules = _loaded(package, program, ["--help"])
    assert code == 0
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))


def test_recipe_help_loads_none_of_the_heavy_libraries() -> None:
    code, modules = _loaded("aicr", "aicr", ["recipe", "--help"])
    assert code == 0
    assert modules.isdisjoint(HEAVY)


def test_recipe_resolves_without_the_graph_cluster_cel_template_or_metrics_library(tmp_path: Path) -> None:
    """networkx names a dependency cycle; a catalog without one is ordered without it."""
    code, modules = _loaded(
        "aicr", "aicr", ["recipe", "--service", "eks", "--accelerator", "h100", "-o", str(tmp_path / "r.yaml")]
    )
    assert code == 0
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
