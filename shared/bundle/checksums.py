"""``checksums.txt``: the sha256 of every file of a bundle, and the check ``aicr verify`` runs.

The file lists ``<sha256>  <path>`` (two spaces, as ``sha256sum`` writes and upstream AICR reads),
sorted by path so the same bundle always gives the same bytes. Unlike upstream it also covers
``recipe.yaml``: every file but itself. Verification reports every changed, missing and extra file
at once, so one run tells the whole story. A bundle written by upstream (its checksums.txt leaves
``recipe.yaml`` out) verifies as upstream verifies it: its ``recipe.yaml`` is said to be unchecked,
not counted as extra.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from shared import errors, files
from shared.bundle import paths

FILE_NAME = "checksums.txt"
_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def digest(path: Path) -> str:
    return files.sha256(path)


def render(entries: Iterable[tuple[str, str]]) -> str:
    """The text of ``checksums.txt`` for (relative path, sha256) pairs."""
    return "".join(f"{sha}  {rel}\n" for rel, sha in sorted(entries))


def bundle_files(root: Path) -> list[str]:
    """Every regular file and symbolic link below ``root`` (POSIX relative paths), sorted."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        found.extend(Path(folder, name).relative_to(root).as_posix() for name in names)
        # A symlinked directory is a file for verification: it must not be followed out of the bundle.
        found.extend(Path(folder, d).relative_to(root).as_posix() for d in dirs if Path(folder, d).is_symlink())
    return sorted(found)


UPSTREAM_UNLISTED = "recipe.yaml"
"""The one file upstream's bundler writes and leaves out of checksums.txt (ours lists it)."""


class Verification(BaseModel):
    """What ``aicr verify`` found; ``passed`` is the verdict (exit 1 when false)."""

    directory: str
    checked: int = 0
    changed: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    extra: list[str] = Field(default_factory=list)
    unchecked: list[str] = Field(
        default_factory=list, description="Files upstream's bundles leave out of checksums.txt, present here."
    )

    @property
    def passed(self) -> bool:
        return not (self.changed or self.missing or self.extra)

    def text(self) -> str:
        """The report printed on stdout, one line per problem file."""
        lines = [f"changed: {p}" for p in self.changed] + [f"missing: {p}" for p in self.missing]
        lines += [f"extra: {p}" for p in self.extra]
        lines += [f"unchecked: {p} (not listed in {FILE_NAME}, as upstream writes it)" for p in self.unchecked]
        if self.passed:
            lines.append(f"Checksums verified ({self.checked} files)")
            lines.append("Bundle verification: PASSED")
        else:
            lines.append(
                f"Bundle verification: FAILED ({len(self.changed)} changed, {len(self.missing)} missing, "
                f"{len(self.extra)} extra; {self.checked} files listed)"
            )
        return "\n".join(lines) + "\n"


def parse(text: str, *, where: str) -> dict[str, str]:
    """``checksums.txt`` as {path: sha256}; a malformed line is InvalidInput naming its line."""
    listed: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _LINE.match(line)
        if match is None:
            raise errors.InvalidInput("expected '<sha256>  <path>'", where=f"{where}:{number}")
        rel = paths.safe_relpath(match.group(2), where=f"{where}:{number}")
        if rel in listed:
            raise errors.InvalidInput(f"{rel!r} is listed twice", where=f"{where}:{number}")
        listed[rel] = match.group(1)
    return listed


def _linked(root: Path, rel: str) -> bool:
    """A symbolic link on the way is a change: a bundle is written with none, and reading through
    one could read outside the bundle."""
    path = root
    for part in rel.split("/"):
        path = path / part
        if path.is_symlink() or not path.exists():
            return True
    return not path.is_file()


def verify(root: Path) -> Verification:
    """Recompute every checksum of the bundle at ``root``.

    Raises InvalidInput when ``root`` is not a bundle (no folder, no or unreadable checksums.txt);
    a bundle that differs is a result with ``passed`` false, not an error.
    """
    if not root.is_dir():
        raise errors.InvalidInput("bundle directory does not exist", where=str(root))
    listing = root / FILE_NAME
    if not (listing.exists() or listing.is_symlink()):  # a directory or a loop: the layer says which
        raise errors.InvalidInput(f"not a bundle: {FILE_NAME} is missing", where=str(root))
    listed = parse(files.read_text(listing), where=str(listing))
    present = set(bundle_files(root)) - {FILE_NAME}
    result = Verification(directory=str(root), checked=len(listed))
    for rel, expected in sorted(listed.items()):
        if rel not in present:
            result.missing.append(rel)
        elif _linked(root, rel) or digest(paths.safe_join(root, rel, where=str(listing))) != expected:
            result.changed.append(rel)
    result.extra = sorted(present - set(listed))
    if UPSTREAM_UNLISTED in result.extra:
        result.extra.remove(UPSTREAM_UNLISTED)
        result.unchecked.append(UPSTREAM_UNLISTED)
    return result
