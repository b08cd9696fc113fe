"""Atomic writes: a reader never sees half a file, and bad input never leaves one behind.

Everything the programs write goes to a temporary path in the destination's folder and is
renamed into place only when complete.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from shared import errors


def atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` by rename; the folder must exist."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise errors.InvalidInput("output folder does not exist", where=str(folder))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def staged_directory(target: Path, *, force: bool) -> Iterator[Path]:
    """Yield an empty temporary folder that replaces ``target`` only if the block succeeds.

    Without ``force`` an existing non-empty ``target`` is refused before anything is written.
    """
    if target.exists() and not target.is_dir():
        raise errors.InvalidInput("output exists and is not a directory", where=str(target))
    if target.is_dir() and any(target.iterdir()) and not force:
        raise errors.InvalidInput("output directory is not empty (use --force to replace it)", where=str(target))
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=parent))
        os.replace(target, old / "x")
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, target)
