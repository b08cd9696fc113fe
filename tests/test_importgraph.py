"""The import graph read from the syntax trees, and the diagram generated from it.

Covers: imports resolve as Python resolves them (a submodule named in ``from P import m``, a name
from a module, relative imports, ``import a.b.c``), third-party imports are left out, and each
edge knows whether it sits inside a function or under ``TYPE_CHECKING``; cycles are found through
a late import and through a package's ``__init__``, a ``TYPE_CHECKING``-only cycle is no run-time
cycle, and ``cycles`` agrees with mutual reachability on random graphs; the diagram groups
packages by the layers exactly as import-linter reads them from ``.importlinter``, places every
package of the library, and the committed docs/architecture-imports.md equals a fresh rendering.
"""

from __future__ import annotations

import configparser
import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from shared import importgraph

ROOT = Path(__file__).resolve().parent.parent


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _edges(root: Path) -> set[tuple[str, str, bool, bool]]:
    return {(e.importer, e.imported, e.late, e.typing_only) for e in importgraph.imports(root, ("pkg",))}


def test_imports_resolve_to_the_module_python_would_load(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "import json\n"
                "import pkg.sub.c\n"
                "from pkg import b\n"
                "from pkg.b import NAME\n"
                "from .sub import c\n"
                "from . import d\n"
            ),
            "pkg/b.py": "NAME = 1\n",
            "pkg/d.py": "",
            "pkg/sub/__init__.py": "from ..b import NAME\n",
            "pkg/sub/c.py": "from pkg.sub import NAME\n",
        },
    )
    assert _edges(root) == {
        ("pkg.a", "pkg.sub.c", False, False),
        ("pkg.a", "pkg.b", False, False),
        ("pkg.a", "pkg.d", False, False),
        ("pkg.sub", "pkg.b", False, False),
        ("pkg.sub.c", "pkg.sub", False, False),
    }


def test_each_edge_says_whether_it_is_late_or_for_typing_only(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg import b\n"
                "def f():\n    from pkg import c\n"
                "g = lambda: __import__('pkg.d')\n"
            ),
            "pkg/b.py": "",
            "pkg/c.py": "",
            "pkg/d.py": "",
        },
    )
    assert _edges(root) == {("pkg.a", "pkg.b", False, True), ("pkg.a", "pkg.c", True, False)}


def test_a_cycle_hidden_by_a_late_import_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "from pkg import c\n",
            "pkg/c.py": "def f():\n    from pkg import a  # the late import that hides it\n",
        },
    )
    assert importgraph.cycles(importgraph.graph(importgraph.imports(root, ("pkg",)))) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_cycle_through_a_package_init_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"pkg/__init__.py": "from pkg.a import run\n", "pkg/a.py": "from pkg import VERSION\n\ndef run(): ...\n"},
    )
    assert importgraph.cycles(importgraph.graph(importgraph.imports(root, ("pkg",)))) == [["pkg", "pkg.a"]]


def test_a_cycle_only_under_type_checking_is_no_run_time_cycle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        },
    )
    edges = importgraph.imports(root, ("pkg",))
    assert importgraph.cycles(importgraph.graph(edges)) == []
    assert importgraph.cycles(importgraph.graph(edges, run_time=False)) == [["pkg.a", "pkg.b"]]


def _reaches(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=30))
def test_cycles_are_the_sets_of_nodes_that_reach_each_other(pairs: list[tuple[int, int]]) -> None:
    edges: dict[str, set[str]] = {}
    for a, b in pairs:
        edges.setdefault(f"m{a}", set()).add(f"m{b}")
        edges.setdefault(f"m{b}", set())
    reach = {node: _reaches(edges, node) for node in edges}
    expected = {frozenset(n for n in edges if n in reach[node] and node in reach[n]) for node in edges}
    expected_lists = sorted(sorted(group) for group in expected if len(group) > 1)
    assert importgraph.cycles(edges) == expected_lists


def test_the_diagram_layers_are_the_ones_import_linter_reads() -> None:
    parser = configparser.ConfigParser()  # import-linter's reading: '#' lines are comments
    parser.read(ROOT / importgraph.CONTRACTS, encoding="utf-8")
    raw = parser[importgraph.LAYERS_CONTRACT]["layers"]
    theirs = [
        [f"shared.{n.strip().strip('()')}" for n in line.replace(":", "|").split("|")]
        for line in raw.splitlines()
        if line.strip()
    ]
    ours = importgraph.layers()
    assert ours[0] == (importgraph.PROGRAMS_LAYER, ["aicr", "nvcre", "nvsentinel"])
    assert [names for _, names in ours[1:]] == theirs
    assert all(title for title, _ in ours)


def test_every_package_of_the_library_is_placed_in_a_layer() -> None:
    placed = set(itertools.chain.from_iterable(names for _, names in importgraph.layers()))
    packages = importgraph.package_graph(importgraph.imports())
    assert sorted(set(packages) - placed) == []


def test_the_committed_diagram_matches_the_code() -> None:
    page = ROOT / "docs" / "architecture-imports.md"
    assert page.is_file(), f"run `{importgraph.REGENERATE}`: {page} is missing"
    assert page.read_text(encoding="utf-8") == importgraph.render(), f"run `{importgraph.REGENERATE}`: {page} is stale"
