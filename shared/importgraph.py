"""The import graph of our own source, read from the syntax trees: edges, cycles and a Mermaid diagram.

The contracts in ``.importlinter`` say which package may import which; ``lint-imports`` checks them.
This module answers the questions those contracts leave open and draws the picture a newcomer needs:

- ``cycles`` finds every strongly connected set of modules, counting imports made inside functions
  (a cycle hidden by a late import is still a cycle) and imports of a package's ``__init__``.
  ``tests/test_architecture.py`` holds the tree to none.
- ``render`` writes ``docs/architecture-imports.md``: one node per package (``shared.health``) or
  top-level module (``shared.output``), grouped by the layers the contract file lists, one edge per
  package-level import, and the same edges as a table. ``python -m shared.importgraph
  docs/architecture-imports.md`` (``make diagram``) rewrites it; a test fails while it is stale.
- ``python -m shared.importgraph --cycles`` prints the module and package cycles.

An import is resolved as Python (and import-linter) resolve it: ``from shared.health import drain``
is an import of the module ``shared.health.drain``, ``from shared.health.settings import Values`` of
``shared.health.settings``; relative imports are made absolute; third-party imports are left out.
Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import ast
import configparser
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shared", "aicr", "nvcre", "nvsentinel")
CONTRACTS = ".importlinter"
LAYERS_CONTRACT = "importlinter:contract:library"
"""The contract whose layers group the diagram's nodes (the library's own layers)."""
PROGRAMS_LAYER = "programs"
REGENERATE = "make diagram"


@dataclass(frozen=True, order=True)
class Import:
    """One import statement's edge: ``importer`` imports ``imported`` at ``line``."""

    importer: str
    imported: str
    line: int
    late: bool
    """Made inside a function: runs when the function does, but is a dependency all the same."""
    typing_only: bool
    """Under ``if TYPE_CHECKING:``: never executed, so it cannot close a cycle at run time."""


def modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``) for every module under ``packages``."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            found[name] = (path, is_package)
    return found


def _typing_only_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node inside an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) body."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def _statements(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it sits inside a function (or lambda)."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, late = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, late
            inner = late or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            stack.append((child, inner))


def _absolute(statement: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not statement.level:
        return statement.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (statement.level - 1)]
    return ".".join([*base, *([statement.module] if statement.module else [])])


def _targets(
    statement: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: Mapping[str, object]
) -> set[str]:
    """The modules of ours a statement imports (a name that is not a module means its package)."""
    wanted: list[str] = []
    if isinstance(statement, ast.Import):
        wanted = [alias.name for alias in statement.names]
    else:
        source = _absolute(statement, module, is_package)
        for alias in statement.names:
            wanted.append(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    found = set()
    for name in wanted:
        while name and name not in known:  # ``import a.b.c`` of a name inside a module: its module
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def imports(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[Import]:
    """Every import of one of our modules by another, in file order."""
    known = modules(root, packages)
    edges: list[Import] = []
    for module, (path, is_package) in sorted(known.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        typing_only = _typing_only_nodes(tree)
        for statement, late in _statements(tree):
            for target in sorted(_targets(statement, module, is_package, known)):
                edges.append(Import(module, target, statement.lineno, late, id(statement) in typing_only))
    return sorted(edges)


def graph(edges: Iterable[Import], *, run_time: bool = True) -> dict[str, set[str]]:
    """Importer → imported; with ``run_time``, ``TYPE_CHECKING`` imports are left out."""
    out: dict[str, set[str]] = {}
    for edge in edges:
        if run_time and edge.typing_only:
            continue
        out.setdefault(edge.importer, set()).add(edge.imported)
        out.setdefault(edge.imported, set())
    return out


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more nodes, each sorted, in sorted order (Tarjan)."""
    search = _Tarjan(edges)
    for start in sorted(edges):
        if start not in search.index:
            search.visit(start)
    return sorted(search.found)


class _Tarjan:
    """Tarjan's strongly connected components, depth first without recursion (import chains are deep)."""

    def __init__(self, edges: Mapping[str, Iterable[str]]) -> None:
        self.edges = edges
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.stack: list[str] = []
        self.on_stack: set[str] = set()
        self.found: list[list[str]] = []

    def visit(self, start: str) -> None:
        work = [self._enter(start)]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                self._leave(node, work[-1][0] if work else None)
            elif child not in self.index:
                work.append(self._enter(child))
            elif child in self.on_stack:
                self.low[node] = min(self.low[node], self.index[child])

    def _enter(self, node: str) -> tuple[str, Iterator[str]]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return node, iter(sorted(self.edges.get(node, ())))

    def _leave(self, node: str, parent: str | None) -> None:
        """Every child of ``node`` is done: pass its low link up, and pop its component if it is the root."""
        if parent is not None:
            self.low[parent] = min(self.low[parent], self.low[node])
        if self.low[node] != self.index[node]:
            return
        component = []
        while True:
            member = self.stack.pop()
            self.on_stack.discard(member)
            component.append(member)
            if member == node:
                break
        if len(component) > 1:
            self.found.append(sorted(component))


def package_of(module: str) -> str:
    """The diagram's node for a module: ``shared.<child>`` inside the library, else the program."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "shared" and len(parts) > 1 else parts[0]


def package_graph(edges: Iterable[Import]) -> dict[str, set[str]]:
    """Package-level imports (every import counted, ``TYPE_CHECKING`` ones included); every package
    and top-level module is a key, those that import none of ours too."""
    out: dict[str, set[str]] = {}
    for edge in edges:
        source, target = package_of(edge.importer), package_of(edge.imported)
        out.setdefault(source, set())
        out.setdefault(target, set())
        if target not in (source, "shared"):
            out[source].add(target)
    out.pop("shared", None)  # the library's __init__ holds only its docstring and version
    return out


def layers(root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """(layer title, its packages as ``shared.<child>``), top first, from the library's layers contract.

    The programs come first as their own layer; a comment line (``# title``) before a layer names it.
    """
    parser = configparser.ConfigParser(comment_prefixes=(";",), inline_comment_prefixes=None)
    parser.read(root / CONTRACTS, encoding="utf-8")
    raw = parser[LAYERS_CONTRACT]["layers"]
    found: list[tuple[str, list[str]]] = [(PROGRAMS_LAYER, [p for p in PACKAGES if p != "shared"])]
    title = ""
    for line in (part.strip() for part in raw.splitlines()):
        if not line:
            continue
        if line.startswith("#"):
            title = line.lstrip("# ").strip()
            continue
        names = [n.strip().strip("()") for n in line.replace(":", "|").split("|")]
        found.append((title or names[0], [f"shared.{n}" for n in names if n]))
        title = ""
    return found


def _node_id(name: str) -> str:
    return name.replace(".", "_")


def _label(name: str) -> str:
    return name.removeprefix("shared.") if name.startswith("shared.") else name


def mermaid(packages: Mapping[str, set[str]], grouping: list[tuple[str, list[str]]]) -> str:
    """A flowchart: one subgraph per layer, the base layers inside one ``base`` subgraph.

    Above the base, a package's imports of base modules are drawn as one arrow into ``base``, so
    the picture stays readable; inside the base every import is drawn.
    """
    base = {name for title, names in grouping if title.startswith("base") for name in names}
    lines = ["```mermaid", "flowchart TB"]
    placed: set[str] = set()
    opened = False
    for number, (title, names) in enumerate(grouping):
        if title.startswith("base") and not opened:
            lines.append('  subgraph base["base modules"]')
            opened = True
        indent = "    " if title.startswith("base") else "  "
        lines.append(f'{indent}subgraph L{number}["{title}"]')
        for name in (n for n in names if n in packages):
            lines.append(f'{indent}  {_node_id(name)}["{_label(name)}"]')
            placed.add(name)
        lines.append(f"{indent}end")
    if opened:
        lines.append("  end")
    lines.extend(f'  {_node_id(name)}["{_label(name)}"]' for name in sorted(set(packages) - placed))
    for source in sorted(packages):
        targets = sorted(packages[source])
        if source in base:
            lines.extend(f"  {_node_id(source)} --> {_node_id(t)}" for t in targets)
            continue
        lines.extend(f"  {_node_id(source)} --> {_node_id(t)}" for t in targets if t not in base)
        if any(t in base for t in targets):
            lines.append(f"  {_node_id(source)} --> base")
    lines.append("```")
    return "\n".join(lines)


def render(root: Path = ROOT) -> str:
    """The page ``docs/architecture-imports.md``: the diagram and the table of package imports."""
    packages = package_graph(imports(root))
    rows = [
        f"| `{_label(name)}` | {', '.join(f'`{_label(t)}`' for t in sorted(packages[name])) or '—'} |"
        for name in sorted(packages)
    ]
    return "\n".join(
        [
            "# Package imports",
            "",
            f"Generated from the source by `{REGENERATE}` (`python -m shared.importgraph",
            "docs/architecture-imports.md`); a test fails while this page is stale. The layers are those",
            'of the `library` contract in `.importlinter`, top first (docs/architecture.md, "Layers").',
            "An arrow into `base` stands for imports of any base module; the table lists every import.",
            "Imports inside functions and under `TYPE_CHECKING` count.",
            "",
            mermaid(packages, layers(root)),
            "",
            "| package | imports |",
            "|---|---|",
            *rows,
            "",
        ]
    )


def describe_cycles(edges: list[Import]) -> list[str]:
    """One line per module cycle and per package cycle (none: an empty list)."""
    found = [f"module cycle: {' <-> '.join(c)}" for c in cycles(graph(edges))]
    found += [f"package cycle: {' <-> '.join(c)}" for c in cycles(package_graph(edges))]
    return found


def main(argv: list[str]) -> int:
    if argv == ["--cycles"]:
        lines = describe_cycles(imports())
        sys.stdout.write("".join(f"{line}\n" for line in lines) or "no cycles\n")
        return 1 if lines else 0
    if len(argv) != 1:
        sys.stderr.write("usage: python -m shared.importgraph DEST.md | --cycles\n")
        return 2
    from shared import files

    files.atomic_write_text(Path(argv[0]), render())
    sys.stdout.write(f"{argv[0]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
