"""Every import contract of ``.importlinter`` can fail: a deliberate violation breaks the one it should.

Covers: a copy of the source tree keeps every contract (so each failure below comes from the one
module a case adds); for each contract, one or more modules added to the copy that break it, among
them an import made inside a function and one under ``TYPE_CHECKING``, which count like any other:
a program importing another, the library importing a program, a base module importing a domain
package, a domain package importing the composition layer, a module placed in no layer, a domain
package importing another in a direction no contract names (and against a named one), the
simulator importing a domain package, a program or a library module importing the simulator, and
a cycle between modules hidden by a late import and one between packages; docs/architecture.md's
"Layers" section names every contract. The real tree is never touched: each case writes into the
copy and removes what it wrote.
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "aicr", "nvcre", "nvsentinel")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _contract_ids() -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / ".importlinter", encoding="utf-8")
    prefix = "importlinter:contract:"
    return [section.removeprefix(prefix) for section in parser.sections() if section.startswith(prefix)]


def _sources_only(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or (not n.endswith(".py") and not Path(directory, n).is_dir())}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the Python sources and the contracts: what lint-imports reads, nothing else."""
    root = tmp_path_factory.mktemp("tree")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, root / package, ignore=_sources_only)
    shutil.copy2(ROOT / ".importlinter", root / ".importlinter")
    return root


def _lint(tree: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """lint-imports in ``tree``: it puts its working directory first on the path, so the copy is
    the one analysed, not the installed tree."""
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *selected],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def added(tree: Path) -> Iterator[dict[str, str]]:
    """Files a case adds to the copy (path → text), written by the case and removed afterwards."""
    files: dict[str, str] = {}
    yield files
    for rel in files:
        (tree / rel).unlink(missing_ok=True)


def test_the_copied_tree_keeps_every_contract(tree: Path) -> None:
    proc = _lint(tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(_contract_ids())} kept, 0 broken" in proc.stdout


LATE = "def late() -> None:\n    from {module} import {name}  # noqa: F401\n"
TYPING = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from {module} import {name}  # noqa: F401\n"
TOP = "from {module} import {name}  # noqa: F401\n"

CASES = [
    ("programs", {"nvsentinel/stray.py": TOP.format(module="aicr", name="main")}, "nvsentinel.stray -> aicr.main"),
    ("programs", {"shared/recipe/stray.py": LATE.format(module="nvcre", name="main")}, "shared.recipe.stray -> nvcre"),
    (
        "library",
        {"shared/kube/stray.py": TOP.format(module="shared.health", name="event")},
        "shared.kube.stray -> shared.health.event",
    ),
    (
        "library",
        {"shared/lifecycle/stray.py": LATE.format(module="shared.operate", name="config")},
        "shared.lifecycle.stray -> shared.operate.config",
    ),
    ("library", {"shared/stray.py": '"""A module placed in no layer."""\n'}, "shared.stray"),
    (
        "library",
        {"shared/snapshot/stray.py": LATE.format(module="shared.sim", name="server")},
        "shared.snapshot.stray -> shared.sim.server",
    ),
    (
        "domain",
        {"shared/certify/stray.py": TOP.format(module="shared.recipe", name="models")},
        "shared.certify.stray -> shared.recipe.models",
    ),
    (
        "domain",
        {"shared/health/stray.py": TYPING.format(module="shared.lifecycle", name="settings")},
        "shared.health.stray -> shared.lifecycle.settings",
    ),
    (
        "simulator",
        {"shared/sim/stray.py": TOP.format(module="shared.health", name="event")},
        "shared.sim.stray -> shared.health.event",
    ),
    (
        "no-simulator-in-programs",
        {"aicr/stray.py": LATE.format(module="shared.sim", name="server")},
        "aicr.stray -> shared.sim.server",
    ),
    (
        "acyclic",
        {
            "shared/kube/stray_a.py": TOP.format(module="shared.kube", name="stray_b"),
            "shared/kube/stray_b.py": LATE.format(module="shared.kube", name="stray_a"),
        },
        "No cycles are allowed in shared.kube.",
    ),
    (
        "acyclic",
        {"shared/health/stray.py": LATE.format(module="shared.lifecycle", name="models")},
        "No cycles are allowed in shared.",
    ),
]
IDS = [
    "program-imports-program",
    "library-imports-program-late",
    "base-imports-domain",
    "domain-imports-composition-late",
    "module-in-no-layer",
    "library-imports-simulator-late",
    "domain-direction-not-named",
    "domain-direction-reversed-under-type-checking",
    "simulator-imports-domain",
    "program-imports-simulator-late",
    "module-cycle-hidden-by-late-import",
    "package-cycle",
]


@pytest.mark.parametrize(("contract", "files", "reported"), CASES, ids=IDS)
def test_a_deliberate_violation_breaks_its_contract(
    tree: Path, added: dict[str, str], contract: str, files: dict[str, str], reported: str
) -> None:
    for rel, text in files.items():
        added[rel] = text
        (tree / rel).write_text(text, encoding="utf-8")
    proc = _lint(tree, contract)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 broken" in proc.stdout
    assert reported in proc.stdout, proc.stdout


def test_every_contract_has_a_case_that_breaks_it() -> None:
    assert {contract for contract, _, _ in CASES} == set(_contract_ids())


def test_the_architecture_page_states_every_contract() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    layers = page[page.index("## Layers\n") :]
    layers = layers[: layers.index("\n## ", 1)]
    for contract in _contract_ids():
        assert f"**{contract}**" in layers, contract
