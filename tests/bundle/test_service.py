"""Writing a bundle: atomic, deterministic, refusing to clobber.

Covers: two runs of every deployer byte-identical; checksums.txt covering every other file (a
fresh bundle verifies); a failing deployer leaving neither output nor staging folder behind; an
input error creating nothing; a non-empty output needing --force, which replaces it whole; the
current directory refused even with --force; an unknown deployer listing the allowed ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared import errors
from shared.bundle import checksums, deployers, plan
from tests.bundle import bundles


@pytest.mark.parametrize("deployer", bundles.DEPLOYERS)
def test_two_runs_give_byte_identical_trees_that_verify(seed_recipe: Path, tmp_path: Path, deployer: str) -> None:
    first = bundles.make_bundle(seed_recipe, tmp_path / "one", deployer)
    bundles.make_bundle(seed_recipe, tmp_path / "two", deployer)
    assert bundles.tree(tmp_path / "one") == bundles.tree(tmp_path / "two")
    assert sorted(first.files) == sorted(bundles.tree(tmp_path / "one"))
    assert checksums.verify(tmp_path / "one").passed
    assert {"recipe.yaml", "README.md", "checksums.txt"} <= set(first.files)


def test_a_failing_deployer_leaves_nothing_behind(
    seed_recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(plan_: plan.BundlePlan, out_dir: Path) -> None:
        (out_dir / "half.yaml").write_text("x")
        raise errors.InvalidInput("deployer broke halfway")

    monkeypatch.setattr(deployers, "renderer", lambda _d: broken)
    with pytest.raises(errors.InvalidInput, match="halfway"):
        bundles.make_bundle(seed_recipe, tmp_path / "out")
    assert os.listdir(tmp_path) == []


def test_bad_input_creates_nothing(seed_recipe: Path, tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput):
        bundles.make_bundle(seed_recipe, tmp_path / "out", sets=["nope:a=1"])
    assert os.listdir(tmp_path) == []


def test_a_non_empty_output_needs_force_which_replaces_it_whole(seed_recipe: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    with pytest.raises(errors.InvalidInput, match="output directory is not empty"):
        bundles.make_bundle(seed_recipe, out)
    assert (out / "stale.txt").exists()
    bundles.make_bundle(seed_recipe, out, force=True)
    assert not (out / "stale.txt").exists() and (out / "deploy.sh").exists()
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_the_current_directory_is_refused_even_with_force(
    seed_recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(errors.InvalidInput, match="refusing to write a bundle over the current"):
        bundles.make_bundle(seed_recipe, Path("."), force=True)


def test_an_unknown_deployer_lists_the_allowed_ones(seed_recipe: Path, tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput, match="allowed values are helm, argocd, argocd-helm, flux, helmfile"):
        bundles.make_bundle(seed_recipe, tmp_path / "o", "kustomize")


def test_the_recipe_copy_is_the_recipe_as_bundled(seed_recipe: Path, tmp_path: Path) -> None:
    bundles.make_bundle(seed_recipe, tmp_path / "o", sets=["nvsentinel:enabled=false"])
    copy = bundles.load(tmp_path / "o", "recipe.yaml")
    assert "nvsentinel" not in copy["deploymentOrder"]
    assert "nvsentinel" not in [c["name"] for c in copy["componentRefs"]]
