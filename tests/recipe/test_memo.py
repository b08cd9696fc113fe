"""The recipe memo: hits give the same bytes, any input change misses, warnings are never hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.output import Format
from shared.recipe import memo, service
from tests.recipe import minicatalog


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


def test_a_second_run_is_served_from_the_memo_with_identical_bytes(cat_dir: Path) -> None:
    first, _ = service.recipe_text(fmt=Format.YAML, service="eks", catalog_dir=cat_dir)
    assert len(list((memo._cache_dir()).glob("*.out"))) == 1
    second, _ = service.recipe_text(fmt=Format.YAML, service="eks", catalog_dir=cat_dir)
    assert second == first


def test_a_changed_catalog_file_misses_the_memo(cat_dir: Path) -> None:
    first, _ = service.recipe_text(fmt=Format.YAML, service="eks", catalog_dir=cat_dir)
    overlay = cat_dir / "overlays" / "eks.yaml"
    overlay.write_text(overlay.read_text().replace("1.1.0", "1.1.1"))
    second, _ = service.recipe_text(fmt=Format.YAML, service="eks", catalog_dir=cat_dir)
    assert "1.1.1" in second and "1.1.1" not in first


def test_runs_that_warn_are_not_memoised(cat_dir: Path) -> None:
    service.recipe_text(fmt=Format.YAML, service="gke", catalog_dir=cat_dir)  # no overlay matches: a warning
    assert list(memo._cache_dir().glob("*.out")) == []
    service.recipe_text(fmt=Format.YAML, service="eks", catalog_dir=cat_dir)
    assert len(list(memo._cache_dir().glob("*.out"))) == 1


def test_the_memo_keeps_a_bounded_number_of_entries(cat_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo, "MAX_ENTRIES", 2)
    for fmt in (Format.YAML, Format.JSON, Format.TABLE):
        service.recipe_text(fmt=fmt, service="eks", catalog_dir=cat_dir)
    assert len(list(memo._cache_dir().glob("*.out"))) == 2
