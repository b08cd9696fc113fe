"""Memoised recipe output: a recipe is a pure function of its inputs, so the bytes are kept.

``aicr recipe`` runs in CI loops and scripts; most of its cost is importing the libraries that
resolve (pydantic models, networkx, ruamel). The key covers everything the output depends on: the
program's own source, every catalog file, the criteria, snapshot and criteria-file bytes and the
format. A hit needs only the standard library. Runs that logged a warning are not kept, so a
warning is never silently lost on the next run. Stdlib only, on purpose.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from shared import cachedir, errors, files

logger = logging.getLogger(__name__)

MAX_ENTRIES = 256
EMBEDDED_CATALOG = Path(__file__).resolve().parent / "catalog"
_PROGRAM_MODULES = ("shared/recipe", "shared/yamlio.py", "shared/output.py", "shared/__init__.py")


def _cache_dir() -> Path:
    return cachedir.user_cache("recipes")


def _hash_tree(digest: hashlib._Hash, root: Path, *, suffixes: tuple[str, ...] | None = None) -> None:
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(names):
            if suffixes and not name.endswith(suffixes):
                continue
            path = Path(folder, name)
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")


@functools.cache
def program_digest() -> str:
    """A hash of the program's own source that shapes a recipe (OSError when it cannot be read):
    a new release, or an edited checkout, misses every cache keyed by it."""
    package = Path(__file__).resolve().parent.parent.parent
    digest = hashlib.sha256()
    for module in _PROGRAM_MODULES:
        path = package / module
        if path.is_dir():
            _hash_tree(digest, path, suffixes=(".py",))
        else:
            digest.update(path.read_bytes())
    return digest.hexdigest()


def key(*, request: dict[str, object], fmt: str, catalogs: list[Path], inputs: list[Path]) -> str | None:
    """The memo key, or None when an input cannot be read (the slow path then reports why)."""
    if not all(path.is_file() for path in inputs):
        return None  # a FIFO or process substitution would be used up here and read empty later
    digest = hashlib.sha256()
    try:
        digest.update(program_digest().encode())
        for root in catalogs:
            digest.update(b"catalog\0")
            _hash_tree(digest, root)
        for path in inputs:
            digest.update(b"input\0" + files.read_bytes(path))
    except (OSError, errors.InvalidInput):
        return None
    digest.update(repr(sorted(request.items())).encode() + fmt.encode())
    return digest.hexdigest()


def request_key(fields: Mapping[str, object], fmt: str) -> str | None:
    """The key of a recipe request: ``fields`` as ``service.recipe_text`` takes them (a None is
    a flag not given), in the format named ``fmt``. One function for the command and for
    ``aicr.fast``, which looks the memo up before the command line framework is imported: the
    same request has the same key on both paths."""
    given = {k: v for k, v in fields.items() if v is not None}
    catalogs = [p for p in (given.get("catalog_dir") or EMBEDDED_CATALOG, given.get("data_dir")) if p]
    inputs = [p for p in (given.get("criteria_file"), given.get("snapshot_file")) if p]
    return key(
        request={k: str(v) for k, v in given.items()},
        fmt=fmt,
        catalogs=[Path(str(p)) for p in catalogs],
        inputs=[Path(str(p)) for p in inputs],
    )


def query_key(fields: Mapping[str, object], selector: str, fmt: str) -> str | None:
    """The key of an ``aicr query``: the recipe request's, with the selector and the command in it
    (a query and a recipe of the same criteria are different outputs)."""
    return request_key({**fields, "query_selector": selector}, fmt)


def lookup(memo_key: str | None) -> str | None:
    if memo_key is None:
        return None
    try:
        return (_cache_dir() / f"{memo_key}.out").read_text(encoding="utf-8")
    except OSError:
        return None


def store(memo_key: str | None, text: str) -> None:
    if memo_key is None:
        return
    folder = _cache_dir()
    try:
        files.program_folder(folder)
        files.atomic_write_text(folder / f"{memo_key}.out", text)
        entries = sorted(folder.glob("*.out"), key=lambda p: p.stat().st_mtime)
        for stale in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            stale.unlink(missing_ok=True)
    except Exception:  # a cache that cannot be written only costs speed
        logger.debug("recipe memo not writable", extra={"folder": str(folder)})


class _WarningCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextmanager
def counting_warnings() -> Iterator[_WarningCounter]:
    """Count warnings logged by the library while resolving."""
    counter = _WarningCounter()
    root = logging.getLogger("shared")
    root.addHandler(counter)
    try:
        yield counter
    finally:
        root.removeHandler(counter)
