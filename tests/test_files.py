"""Atomic writes and staged directories: a failure leaves nothing behind, success replaces whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import errors, files


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("old")
    files.atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]


def test_atomic_write_into_a_missing_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput):
        files.atomic_write_text(tmp_path / "missing" / "out.yaml", "x")


def test_a_failing_stage_leaves_the_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    with pytest.raises(RuntimeError), files.staged_directory(target, force=False) as stage:
        (stage / "half.yaml").write_text("x")
        raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_target_needs_force(tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    target.mkdir()
    (target / "old.txt").write_text("x")
    with pytest.raises(errors.InvalidInput, match="--force"), files.staged_directory(target, force=False):
        pass
    with files.staged_directory(target, force=True) as stage:
        (stage / "new.txt").write_text("y")
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
