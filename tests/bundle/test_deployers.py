"""The deployer table and the import rules around it.

Covers: every deployer name maps to a module with ``render`` and a ``templates/`` folder beside it;
jinja2 is imported only by the templating helper the deployer modules use; planning a bundle does
not load jinja2 (only rendering does).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from shared.bundle import deployers

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("deployer", list(deployers.Deployer), ids=lambda d: d.value)
def test_each_deployer_is_a_module_with_render_and_templates_beside_it(deployer: deployers.Deployer) -> None:
    module = importlib.import_module(deployers.DEPLOYERS[deployer])
    assert callable(module.render)
    assert (Path(module.__file__).parent / "templates").is_dir()
    assert deployers.parse(deployer.value.upper()) is deployer


def test_jinja2_is_imported_only_by_the_templating_helper() -> None:
    importers = set()
    for path in [*ROOT.joinpath("shared").rglob("*.py"), *ROOT.joinpath("aicr").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            if any(n.split(".")[0] == "jinja2" for n in names):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"shared/bundle/_templating.py"}


def test_planning_a_bundle_does_not_load_jinja2() -> None:
    probe = "import sys; import shared.bundle.service, shared.bundle.plan; print('jinja2' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True, cwd=ROOT
    )
    assert proc.stdout.strip() == "False"
