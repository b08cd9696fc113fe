"""The one way a bundle builds a path from data: a join that refuses to leave the bundle.

Component names, manifest file names and the paths listed in ``checksums.txt`` all come from
files a user may have edited; a ``..`` or an absolute part there must never write or read outside
the bundle folder.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from shared import errors


def safe_relpath(relpath: str, *, where: str | None = None) -> str:
    """``relpath`` normalised to POSIX form; InvalidInput if it is absolute, empty or climbs out."""
    text = relpath.replace("\\", "/")
    pure = PurePosixPath(text)
    if not text or pure.is_absolute() or any(part in ("..", "") for part in text.split("/")) or "\0" in text:
        raise errors.InvalidInput(f"path {relpath!r} escapes the bundle directory", where=where)
    return pure.as_posix()


def safe_join(root: Path, relpath: str, *, where: str | None = None) -> Path:
    """``root / relpath``, refusing any path that would end outside ``root``."""
    joined = root.joinpath(*safe_relpath(relpath, where=where).split("/"))
    base = root.resolve()
    resolved = joined.resolve()
    if resolved != base and base not in resolved.parents:
        raise errors.InvalidInput(f"path {relpath!r} escapes the bundle directory", where=where)
    return joined
