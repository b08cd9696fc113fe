"""The one user cache directory (shared/cachedir.py) and the caches that use it.

Covers: ``$XDG_CACHE_HOME/aicr`` when the variable is set; ``~/.cache/aicr`` when it is unset or
empty (the XDG Base Directory specification's default); sub-paths joined below it; nothing is
created by asking; the recipe memo, the parsed-catalog cache, the parsed-recipe cache of
``aicr bundle`` and the compiled-template cache all live below the same folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import cachedir


def test_the_cache_is_below_xdg_cache_home_when_it_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert cachedir.user_cache() == tmp_path / "c" / "aicr"
    assert cachedir.user_cache("templates") == tmp_path / "c" / "aicr" / "templates"
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_the_cache_is_below_the_home_folder_without_xdg_cache_home(
    value: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", value)
    assert cachedir.user_cache("recipes") == tmp_path / ".cache" / "aicr" / "recipes"


def test_every_cache_of_the_programs_lives_below_the_one_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.bundle import _templating, plan
    from shared.recipe import catalog, compiled, memo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "aicr"
    doc = tmp_path / "registry.yaml"
    doc.write_text("a: 1\n", encoding="utf-8")
    entries = [("registry.yaml", doc)]
    assert catalog._parse_documents(entries, catalog.digest(entries)) == {"registry.yaml": {"a": 1}}
    compiled.directory(catalog.embedded_root(), external=False)
    assert plan._parse_cached("b: 2\n", "recipe.yaml") == {"b": 2}
    assert _templating._bytecode_cache() is not None
    assert memo._cache_dir() == root / "recipes"
    names = sorted(p.name.split("-")[0] for p in root.iterdir())
    assert names == ["catalog", "catalog", "compiled", "recipe", "templates"]
