"""The compiled catalog: the same recipes as the checked catalog, kept only when it checked, and
read back without pydantic."""

from __future__ import annotations

import datetime
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import cachedir, errors
from shared.recipe import catalog, compiled, resolver
from shared.recipe.criteria import Criteria
from tests.recipe import minicatalog

AXES = {
    "service": ["eks", "gke", "aks", "kind", "oke", "any"],
    "accelerator": ["h100", "gb200", "a100", "b200", "any"],
    "os": ["ubuntu", "cos", "amazonlinux", "any"],
    "intent": ["training", "inference", "any"],
    "platform": ["dynamo", "kubeflow", "any"],
}
QUERIES = [
    Criteria(**dict(zip(AXES, combo, strict=True)))
    for combo in itertools.product(*AXES.values())
    if any(value != "any" for value in combo)
]


def _cached() -> list[Path]:
    return sorted(cachedir.user_cache(compiled.CACHE_FOLDER).glob("*.json"))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(QUERIES))
def test_the_compiled_embedded_catalog_resolves_as_the_checked_one_and_its_model_reads_back_the_same(
    query: Criteria,
) -> None:
    from_models = resolver.resolve(query, catalog.embedded())
    from_plain = resolver.resolve(query, compiled.embedded())
    assert from_plain.document() == from_models.document()
    assert from_plain.component_origin == from_models.component_origin
    assert resolver.recipe_document(from_plain.recipe) == from_plain.document()


def test_a_second_read_comes_from_the_cache_and_equals_the_first(tmp_path: Path) -> None:
    root = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    first = compiled.directory(root)
    assert len(_cached()) == 1
    cache = _cached()[0]
    data = json.loads(cache.read_text())
    data["overlays"]["eks"]["spec"]["componentRefs"][0]["version"] = "9.9.9"  # proves the next read is the cache
    cache.write_text(json.dumps(data))
    second = compiled.directory(root)
    assert second.overlays["eks"]["spec"]["componentRefs"][0]["version"] == "9.9.9"
    second.overlays["eks"]["spec"]["componentRefs"][0]["version"] = "1.1.0"
    assert second == first


def test_the_same_catalog_in_another_folder_names_its_own_files(tmp_path: Path) -> None:
    one = minicatalog.write(tmp_path / "one", minicatalog.default_documents())
    two = minicatalog.write(tmp_path / "two", minicatalog.default_documents())
    compiled.directory(one)
    again = compiled.directory(two)
    assert len(_cached()) == 1  # keyed by content
    assert again.where("overlay:eks") == str(two / "overlays" / "eks.yaml")
    assert again.files["overlays/eks.yaml"] == two / "overlays" / "eks.yaml"
    assert again.label == str(two)


def test_a_changed_file_is_checked_again_and_a_catalog_that_fails_is_never_kept(tmp_path: Path) -> None:
    root = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    compiled.directory(root)
    overlay = root / "overlays" / "eks.yaml"
    overlay.write_text(overlay.read_text().replace("version: 1.1.0", "version: 1.1.0\n      bogus: 1"))
    for _ in range(2):  # the error every time: nothing was cached for the broken content
        with pytest.raises(errors.InvalidInput, match=re.escape("unknown field 'spec.componentRefs[0].bogus'")):
            compiled.directory(root)
    assert len(_cached()) == 1


@pytest.mark.parametrize(
    ("values", "read"),
    [("released: 2024-05-01\n", {"released": datetime.date(2024, 5, 1)}), ("1: one\n", {1: "one"})],
    ids=["a date JSON cannot hold", "a number key JSON turns into text"],
)
def test_a_value_json_would_change_is_not_cached_and_reads_the_same_every_time(
    tmp_path: Path, values: str, read: dict[object, object]
) -> None:
    root = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    (root / "components" / "alpha" / "values.yaml").write_text(values)
    for _ in range(2):
        cat = compiled.directory(root)
        assert cat.values("components/alpha/values.yaml") == read
        assert catalog.load_directory(root).values("components/alpha/values.yaml") == read
    assert _cached() == []


def test_an_unreadable_cache_is_a_miss(tmp_path: Path) -> None:
    root = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    first = compiled.directory(root)
    _cached()[0].write_text('{"registry": 1}')
    assert compiled.directory(root) == first
    assert json.loads(_cached()[0].read_text())["registry"] == first.registry  # and written again


def test_the_oldest_compiled_catalogs_go_first(tmp_path: Path) -> None:
    documents = minicatalog.default_documents()
    for index in range(compiled.MAX_ENTRIES + 2):
        documents["overlays/eks.yaml"]["spec"]["componentRefs"][0]["version"] = f"1.1.{index}"
        root = minicatalog.write(tmp_path / f"cat{index}", documents)
        compiled.directory(root)
        os.utime(max(_cached(), key=lambda p: p.stat().st_mtime_ns), (index, index))
    assert len(_cached()) == compiled.MAX_ENTRIES


def test_a_recipe_from_a_compiled_catalog_imports_no_pydantic(tmp_path: Path) -> None:
    root = minicatalog.write(tmp_path / "cat", minicatalog.default_documents())
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from shared.output import Format\n"
        "from shared.recipe import service\n"
        f"text, _ = service.recipe_text(fmt=Format.YAML, service='eks', catalog_dir=Path({str(root)!r}))\n"
        "assert 'alpha' in text\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' or m == 'shared.recipe.models'))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run() -> str:
        shutil.rmtree(tmp_path / "cache" / "aicr" / "recipes", ignore_errors=True)  # resolve, not the memo
        done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert run() != "[]"  # the first run checks the catalog: the models, with pydantic
    assert run() == "[]"
