"""Fixtures of the bundle tests: the seed recipe and its bundle for every deployer, rendered once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bundle import bundles

REPO = "https://git.example.com/gitops.git"


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Session fixtures run before the per-test isolation: give them a private cache as well."""
    cache = tmp_path_factory.mktemp("session-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(scope="session")
def seed_recipe(tmp_path_factory: pytest.TempPathFactory, _session_cache: Path) -> Path:
    """eks/h100/ubuntu/inference/dynamo from the embedded catalog: charts, OCI charts, manifests."""
    return bundles.write_recipe(tmp_path_factory.mktemp("seed") / "recipe.yaml", **bundles.SEED)


@pytest.fixture(scope="session")
def seed_bundles(tmp_path_factory: pytest.TempPathFactory, seed_recipe: Path, _session_cache: Path) -> dict[str, Path]:
    """The seed recipe bundled by every deployer (with --repo), read-only for the tests."""
    root = tmp_path_factory.mktemp("seed-bundles")
    out: dict[str, Path] = {}
    for deployer in bundles.DEPLOYERS:
        bundles.make_bundle(seed_recipe, root / deployer, deployer, repo=REPO)
        out[deployer] = root / deployer
    return out
