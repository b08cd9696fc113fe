"""No writer in the product bypasses the output layer (shared/files.py), and the layer keeps its word.

Covers: an AST scan of shared/ (but the simulator and the layer itself), aicr/, nvcre/ and
nvsentinel/ finds every ``open(...)`` with a writing mode, ``X.write_text``/``X.write_bytes``,
``X.mkdir``/``os.makedirs``/``os.mkdir``, ``shutil.copy*``/``shutil.move``, ``os.replace``/``os.rename``,
``tempfile.mkstemp``/``mkdtemp``/``NamedTemporaryFile``, ``X.touch`` and ``os.open`` outside the
layer; each one found must be in ALLOWED with its reason, and every entry must still be found.
Calls on the layer's modules (``files.atomic_write_text``, ``refs.write_text``) are not writers
to list. The scan is tested on small sources, so it can fail.
The layer itself, on real files: a missing folder, a file where a folder is expected, a folder
where a file is expected and an unwritable folder are one InvalidInput each and leave nothing
behind; a FIFO (like ``-o /dev/null``, a device) is written in place, not replaced; a staged folder that fails
half-way leaves the old folder as it was and no staging folder; any bytes replace a file whole
(hypothesis).
"""

from __future__ import annotations

import ast
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import errors, files
from tests import sourcescan

PACKAGES = sourcescan.PACKAGES
SKIPPED = ("shared/sim/", "shared/files.py")
LAYER_MODULES = frozenset({"shared.files", "shared.refs"})
PATH_WRITES = frozenset({"write_text", "write_bytes", "mkdir", "touch"})
MODULE_WRITES = {
    "os": frozenset({"replace", "rename", "renames", "makedirs", "mkdir", "open"}),
    "shutil": frozenset({"copy", "copy2", "copyfile", "copytree", "move"}),
    "tempfile": frozenset({"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory"}),
}

ALLOWED: dict[tuple[str, str, str], str] = {
    # (file, enclosing function, what) -> why it may write on its own. (jinja2's template cache
    # writes through jinja2, into the program's own cache folder, made by files.program_folder.)
}


@dataclass(frozen=True)
class Write:
    path: str
    scope: str
    kind: str
    line: int

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.path, self.scope, self.kind)


def _writing_mode(call: ast.Call, position: int) -> bool:
    """True when an ``open`` call's mode (positional ``position`` or ``mode=``) writes, appends or creates."""
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # a mode computed at run time: assume it writes


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, names: dict[str, str]) -> None:
        self.path, self.names = path, names
        self.scope: list[str] = []
        self.found: list[Write] = []

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _add(self, node: ast.expr, kind: str) -> None:
        self.found.append(Write(self.path, ".".join(self.scope) or "<module>", kind, node.lineno))

    def visit_Call(self, node: ast.Call) -> None:
        called = node.func
        if isinstance(called, ast.Name):
            origin = self.names.get(called.id, "")
            module, _, name = origin.rpartition(".")
            if called.id == "open" and _writing_mode(node, 1):
                self._add(node, "open")
            elif name in MODULE_WRITES.get(module, ()):
                self._add(node, f"{module}.{name}")
        elif isinstance(called, ast.Attribute):
            receiver = self.names.get(called.value.id) if isinstance(called.value, ast.Name) else None
            if receiver in LAYER_MODULES:
                pass
            elif receiver in MODULE_WRITES:
                if called.attr in MODULE_WRITES[receiver]:
                    self._add(node, f"{receiver}.{called.attr}")
            elif called.attr == "open" and _writing_mode(node, 0):
                self._add(node, "open")
            elif called.attr in PATH_WRITES:
                self._add(node, called.attr)
        self.generic_visit(node)


def writers(source: str, path: str = "<source>") -> list[Write]:
    """Every write the output layer should be doing, in one module's source."""
    tree = ast.parse(source)
    finder = _Finder(path, sourcescan.imported_names(tree))
    finder.visit(tree)
    return finder.found


@pytest.fixture(scope="module")
def found() -> list[Write]:
    return [write for rel, source in sourcescan.product_sources(SKIPPED) for write in writers(source, rel)]


def test_every_writer_outside_the_layer_is_an_allowed_exception(found: list[Write]) -> None:
    unlisted = [f"{w.path}:{w.line} {w.scope} {w.kind}" for w in found if w.key not in ALLOWED]
    assert unlisted == [], "write through shared.files, or add a reasoned entry to ALLOWED"


def test_every_allowed_exception_still_exists(found: list[Write]) -> None:
    stale = [key for key in ALLOWED if key not in {w.key for w in found}]
    assert stale == [], "these writers moved onto the output layer (or were renamed): drop them from ALLOWED"


def test_the_scan_covers_the_three_programs() -> None:
    assert {rel.split("/")[0] for rel, _ in sourcescan.product_sources(SKIPPED)} == set(PACKAGES)


CASES = [
    ("def f(p):\n    open(p, 'w').write('x')\n", ["f open"]),
    ("def f(p):\n    return open(p).read()\n", []),
    ("def f(p):\n    return open(p, mode='ab')\n", ["f open"]),
    ("def f(p, m):\n    return p.open(m)\n", ["f open"]),
    ("def f(p):\n    return p.open('rb')\n", []),
    ("def f(p):\n    p.write_text('x')\n", ["f write_text"]),
    ("class C:\n    def m(self, p):\n        p.write_bytes(b'x')\n", ["C.m write_bytes"]),
    ("def f(p):\n    p.parent.mkdir(parents=True)\n", ["f mkdir"]),
    ("import os\ndef f(a, b):\n    os.replace(a, b)\n", ["f os.replace"]),
    ("import os\ndef f(p):\n    os.makedirs(p)\n", ["f os.makedirs"]),
    ("from os import rename\ndef f(a, b):\n    rename(a, b)\n", ["f os.rename"]),
    ("import shutil\ndef f(a, b):\n    shutil.copytree(a, b)\n", ["f shutil.copytree"]),
    ("import tempfile\ndef f():\n    return tempfile.mkstemp()\n", ["f tempfile.mkstemp"]),
    ("from tempfile import mkdtemp\ndef f():\n    return mkdtemp()\n", ["f tempfile.mkdtemp"]),
    ("def f(p):\n    p.touch()\n", ["f touch"]),
    ("from shared import files\ndef f(p):\n    files.atomic_write_text(p, 'x')\n", []),
    ("from shared import refs\ndef f(r, a):\n    refs.write_text(r, 'x', api=a, component='c')\n", []),
    ("import shutil\ndef f(c):\n    return shutil.which(c)\n", []),
]


@pytest.mark.parametrize(("source", "expected"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_scan_finds_writes_and_leaves_the_layer_alone(source: str, expected: list[str]) -> None:
    assert [f"{w.scope} {w.kind}" for w in writers(source)] == expected


def _refused(path: Path, message: str, *, where: Path) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        files.atomic_write_text(path, "data\n")
    assert caught.value.line() == f"error: {where}: {message}"


def test_a_missing_folder_is_refused_and_not_created(tmp_path: Path) -> None:
    _refused(tmp_path / "nope" / "out.yaml", "output folder does not exist", where=tmp_path / "nope")
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_a_folder_is_expected_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("keep\n")
    _refused(tmp_path / "f" / "out.yaml", "is a file, expected an output folder", where=tmp_path / "f")
    assert (tmp_path / "f").read_text() == "keep\n"


def test_a_folder_where_a_file_is_expected_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    _refused(tmp_path / "d", "is a directory, expected a file", where=tmp_path / "d")
    assert list((tmp_path / "d").iterdir()) == []


def test_an_unwritable_folder_is_refused(readonly_dir: Path) -> None:
    before = sorted(os.listdir(readonly_dir))
    with pytest.raises(errors.InvalidInput) as caught:
        files.atomic_write_text(readonly_dir / "out.yaml", "data\n")
    assert caught.value.line().startswith(f"error: {readonly_dir / 'out.yaml'}: cannot write: ")
    assert sorted(os.listdir(readonly_dir)) == before


def read_fifo(path: Path) -> tuple[threading.Thread, list[bytes]]:
    """A reader of the FIFO at ``path`` in a thread (a writer's open blocks until one is there)."""
    got: list[bytes] = []

    def read() -> None:
        with path.open("rb") as fifo:
            got.append(fifo.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


def test_a_fifo_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    """As ``-o /dev/null`` must be: renaming over a device would replace it for every process."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader, got = read_fifo(fifo)
    files.atomic_write_text(fifo, "through\n")
    reader.join(timeout=60)
    assert (got, fifo.is_fifo(), os.listdir(tmp_path)) == ([b"through\n"], True, ["pipe"])


def test_a_replaced_file_is_whole_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old\n")
    files.atomic_write_text(target, "new\n", mode=0o600)
    assert target.read_text() == "new\n"
    assert (target.stat().st_mode & 0o777, os.listdir(tmp_path)) == (0o600, ["out.json"])


def test_a_staged_folder_that_fails_leaves_the_old_one_and_no_staging(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    target.mkdir()
    (target / "old.txt").write_text("old\n")
    with pytest.raises(RuntimeError), files.staged_directory(target, force=True) as staging:
        files.write_staged(staging / "a" / "new.txt", "new\n")
        raise RuntimeError("half-way")
    assert (os.listdir(tmp_path), os.listdir(target)) == (["bundle"], ["old.txt"])


def test_a_staged_folder_replaces_the_old_one_whole(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    target.mkdir()
    (target / "old.txt").write_text("old\n")
    with files.staged_directory(target, force=True) as staging:
        files.write_staged(staging / "a" / "new.sh", "new\n", mode=0o755)
    assert (os.listdir(tmp_path), sorted(p.name for p in target.rglob("*"))) == (["bundle"], ["a", "new.sh"])
    assert (target / "a" / "new.sh").stat().st_mode & 0o777 == 0o755


def test_a_staged_folder_inside_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "recipe.yaml").write_text("keep\n")
    with (
        pytest.raises(errors.InvalidInput) as caught,
        files.staged_directory(tmp_path / "recipe.yaml" / "bundle", force=False),
    ):
        pass
    assert caught.value.line() == f"error: {tmp_path / 'recipe.yaml'}: is a file, expected an output folder"
    assert os.listdir(tmp_path) == ["recipe.yaml"]


def test_a_staged_folder_needs_its_parent(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput) as caught, files.staged_directory(tmp_path / "no" / "b", force=False):
        pass
    assert caught.value.line() == f"error: {tmp_path / 'no'}: output folder does not exist"
    assert os.listdir(tmp_path) == []


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.binary(max_size=4096), second=st.binary(max_size=4096))
def test_any_bytes_replace_a_file_whole_and_leave_nothing_beside_it(
    tmp_path: Path, first: bytes, second: bytes
) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    target = folder / "out.bin"
    files.atomic_write_bytes(target, first)
    files.atomic_write_bytes(target, second)
    assert (target.read_bytes(), os.listdir(folder)) == (second, ["out.bin"])
