"""The layering rules of the design, checked on the source: who may import what.

Covers: only shared/cel.py imports celpy, only shared/yamlio.py ruamel.yaml, only the simulator's
tls.py cryptography, only shared/kube/ kubernetes; the library never imports a program; programs
never import one another; product code never imports the simulator.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "aicr", "nvcre", "nvsentinel")


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
    ("cryptography", lambda rel: rel == "shared/sim/apiserver/tls.py"),
    ("kubernetes", lambda rel: rel.startswith("shared/kube/")),
]


@pytest.mark.parametrize(("library", "allowed"), RULES, ids=[r[0] for r in RULES])
def test_a_third_party_library_is_imported_by_its_one_module(library: str, allowed) -> None:  # type: ignore[no-untyped-def]
    offenders = sorted({rel for rel, name in _sources() if _top(name) == library and not allowed(rel)})
    assert offenders == []


def test_the_library_never_imports_a_program() -> None:
    offenders = sorted(
        {rel for rel, name in _sources() if rel.startswith("shared/") and _top(name) in ("aicr", "nvcre", "nvsentinel")}
    )
    assert offenders == []


def test_programs_never_import_one_another() -> None:
    offenders = sorted(
        {
            (rel, name)
            for rel, name in _sources()
            if _top(rel) in ("aicr", "nvcre", "nvsentinel") and _top(name) in PACKAGES[1:] and _top(name) != _top(rel)
        }
    )
    assert offenders == []


def test_product_code_never_imports_the_simulator() -> None:
    offenders = sorted(
        {rel for rel, name in _sources() if name.startswith("shared.sim") and not rel.startswith("shared/sim/")}
    )
    assert offenders == []
