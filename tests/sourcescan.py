"""Walking the product's source for the layer tests: which calls read or write outside the layer.

``tests/test_input_layer.py`` and ``tests/test_output_layer.py`` scan the same packages the same
way and differ only in what they look for, so the walk and the import table live here once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "aicr", "nvcre", "nvsentinel")


def imported_names(tree: ast.AST) -> dict[str, str]:
    """Local name -> what it was imported as (``documents`` -> ``shared.refs``), anywhere in the file."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = alias.name if alias.asname else top
    return names


def product_sources(skipped: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(path relative to the repository, source) of every product module not under ``skipped``."""
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            rel = file.relative_to(ROOT).as_posix()
            if not rel.startswith(skipped):
                yield rel, file.read_text(encoding="utf-8")
