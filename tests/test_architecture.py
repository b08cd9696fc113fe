"""The layering rules the import contracts leave to us, checked on the source, and the contracts kept.

Covers: only shared/cel.py imports celpy, only shared/yamlio.py ruamel.yaml, only shared/yamlio.py
and the kube client PyYAML, only the simulator's tls.py cryptography, only shared/kube/ kubernetes,
only shared/metrics.py prometheus_client, only shared/htmlpage.py plotly; no run-time cycle between
two modules (imports inside functions and of a package's ``__init__`` included) other than the one
listed; no cycle between packages; the tree keeps every contract of ``.importlinter`` (which
tests/test_import_contracts.py proves can fail).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import importgraph

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "aicr", "nvcre", "nvsentinel")

KNOWN_MODULE_CYCLES: list[list[str]] = []
"""Module cycles that exist and are known; a new one fails, and so does fixing one (drop it here)."""


def _imports(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _sources() -> list[tuple[str, str]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found.extend((rel, name) for name in _imports(path))
    return found


def _top(name: str) -> str:
    return name.split(".")[0]


RULES = [
    ("celpy", lambda rel: rel == "shared/cel.py"),
    ("ruamel", lambda rel: rel == "shared/yamlio.py"),
    ("yaml", lambda rel: rel in {"shared/yamlio.py", "shared/kube/client.py"}),  # the kube client catches its errors
    ("cryptography", lambda rel: rel == "shared/sim/apiserver/tls.py"),
    ("kubernetes", lambda rel: rel.startswith("shared/kube/")),
    ("prometheus_client", lambda rel: rel == "shared/metrics.py"),
    ("plotly", lambda rel: rel == "shared/htmlpage.py"),
    ("oras", lambda rel: rel == "shared/bundle/registry.py"),
]


@pytest.mark.parametrize(("library", "allowed"), RULES, ids=[r[0] for r in RULES])
def test_a_third_party_library_is_imported_by_its_one_module(library: str, allowed) -> None:  # type: ignore[no-untyped-def]
    offenders = sorted({rel for rel, name in _sources() if _top(name) == library and not allowed(rel)})
    assert offenders == []


@pytest.fixture(scope="module")
def edges() -> list[importgraph.Import]:
    return importgraph.imports()


def test_no_modules_import_each_other_in_a_cycle_at_run_time(edges: list[importgraph.Import]) -> None:
    assert importgraph.cycles(importgraph.graph(edges)) == KNOWN_MODULE_CYCLES


def test_no_packages_import_each_other_in_a_cycle(edges: list[importgraph.Import]) -> None:
    assert importgraph.cycles(importgraph.package_graph(edges)) == []


def test_the_tree_keeps_every_import_contract() -> None:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout
