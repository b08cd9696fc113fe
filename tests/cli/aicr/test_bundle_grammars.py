"""``aicr bundle`` refuses a recipe whose pasted-in values leave their grammars, before writing.

Covers, through the entry wrapper: an unknown field anywhere in the recipe (top level and inside a
component) named with its line; a chart name, chart version, chart source, Kustomize source, path
and tag carrying shell syntax or breaking Helm's, SemVer's or git's rules, each named by its field
path and line; an invalid label value or taint value in the placement flags. Each exits 2 with one
stderr line and leaves the output folder absent, for every deployer where the value would land.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from tests.bundle import bundles
from tests.recipe import minicatalog


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


@pytest.fixture()
def recipe(cat_dir: Path, tmp_path: Path) -> Path:
    from shared.recipe import catalog

    return bundles.write_recipe(tmp_path / "recipe.yaml", cat=catalog.load_directory(cat_dir), service="eks")


def _edit(recipe: Path, change: dict[str, Any], *, top: dict[str, Any] | None = None) -> None:
    doc = yamlio.load_file(recipe)
    doc["componentRefs"][0].update(change)
    doc.update(top or {})
    recipe.write_text(yamlio.dumps(doc), encoding="utf-8")


def _bundle(run_cli, recipe: Path, cat_dir: Path, out: Path, *args: str, deployer: str = "helm"):  # type: ignore[no-untyped-def]
    return run_cli(
        "aicr", "bundle", "-r", str(recipe), "-o", str(out), "--catalog", str(cat_dir), "-d", deployer, *args
    )


def _line_of(recipe: Path, path: str) -> int:
    line = yamlio.line_of(recipe.read_text(encoding="utf-8"), path)
    assert line is not None
    return line


REFUSED = [
    ("chart-backtick", {"chart": "evil`touch x`"}, "chart", "invalid chart name 'evil`touch x`'"),
    ("chart-upper", {"chart": "GPU-Operator"}, "chart", "invalid chart name 'GPU-Operator'"),
    ("version-semicolon", {"version": "1.0.0;touch x"}, "version", "invalid chart version '1.0.0;touch x'"),
    ("version-two-parts", {"version": "1.2"}, "version", "invalid chart version '1.2'"),
    ("version-newline", {"version": "1.0.0\n--set x=y"}, "version", "invalid chart version"),
    ("source-subshell", {"source": "https://charts.example.com/$(touch x)"}, "source", "invalid chart source"),
    ("source-quote", {"source": "https://charts.example.com/a'b"}, "source", "invalid chart source"),
    ("source-scheme", {"source": "ftp://charts.example.com/x"}, "source", "invalid chart source"),
    ("oci-dollar", {"source": "oci://registry.example.com/${IFS}x"}, "source", "invalid chart source"),
    ("oci-upper-path", {"source": "oci://ghcr.io/NVIDIA"}, "source", "invalid chart source"),
    (
        "kustomize-source",
        {"type": "Kustomize", "source": "https://github.com/x/y;reboot", "path": "a", "tag": "v1"},
        "source",
        "invalid source",
    ),
    (
        "kustomize-path",
        {"type": "Kustomize", "source": "https://github.com/x/y", "path": "a b", "tag": "v1"},
        "path",
        "invalid path 'a b'",
    ),
    (
        "kustomize-tag",
        {"type": "Kustomize", "source": "https://github.com/x/y", "path": "a", "tag": "v1..2"},
        "tag",
        "invalid git ref 'v1..2'",
    ),
]


@pytest.mark.parametrize(("change", "field", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_value_outside_its_grammar_is_refused_with_its_field_and_line(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, cat_dir: Path, tmp_path: Path, change: dict[str, Any], field: str, message: str
) -> None:
    _edit(recipe, change)
    out = tmp_path / "out"
    result = _bundle(run_cli, recipe, cat_dir, out)
    assert result.code == 2, result.stderr
    lines = result.stderr.splitlines()
    key = f"componentRefs[0].{field}"
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {recipe}:{_line_of(recipe, key)} {key}: {message}"), lines[0]
    assert not out.exists()


@pytest.mark.parametrize("deployer", bundles.DEPLOYERS)
def test_every_deployer_refuses_before_writing(
    run_cli, recipe: Path, cat_dir: Path, tmp_path: Path, deployer: str
) -> None:  # type: ignore[no-untyped-def]
    _edit(recipe, {"version": "1.0.0 && reboot"})
    out = tmp_path / "out"
    args = ["--repo", "https://git.example.com/r.git"] if deployer.startswith("argocd") else []
    result = _bundle(run_cli, recipe, cat_dir, out, *args, deployer=deployer)
    assert result.code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "invalid chart version '1.0.0 && reboot'" in result.stderr
    assert not out.exists()


UNKNOWN = [
    ("top-level", {}, {"componentRef": []}, "componentRef"),
    ("in-a-component", {"overides": {"a": 1}}, None, "componentRefs[0].overides"),
    ("in-metadata", {}, {"metadata": {"version": "1", "generatedBy": "x"}}, "metadata.generatedBy"),
]


@pytest.mark.parametrize(("change", "top", "path"), [u[1:] for u in UNKNOWN], ids=[u[0] for u in UNKNOWN])
def test_an_unknown_recipe_field_is_refused_with_its_path_and_line(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, cat_dir: Path, tmp_path: Path, change: dict[str, Any], top: dict[str, Any] | None, path: str
) -> None:
    _edit(recipe, change, top=top)
    out = tmp_path / "out"
    result = _bundle(run_cli, recipe, cat_dir, out)
    assert result.code == 2
    assert result.stderr.splitlines() == [f"error: {recipe}:{_line_of(recipe, path)} {path}: unknown field {path!r}"]
    assert not out.exists()


FLAGS = [
    ("selector-value", ["--system-node-selector", "pool=gpu;reboot"], "--system-node-selector: invalid label value"),
    ("accelerated-key", ["--accelerated-node-selector", "a/b/c=x"], "--accelerated-node-selector: invalid label key"),
    ("workload-value", ["--workload-selector", "app=-x"], "--workload-selector: invalid label value '-x'"),
    ("toleration-value", ["--system-node-toleration", "k=a b:NoSchedule"], "--system-node-toleration: invalid taint"),
]


@pytest.mark.parametrize(("args", "expected"), [f[1:] for f in FLAGS], ids=[f[0] for f in FLAGS])
def test_an_invalid_placement_flag_is_refused(  # type: ignore[no-untyped-def]
    run_cli, recipe: Path, cat_dir: Path, tmp_path: Path, args: list[str], expected: str
) -> None:
    out = tmp_path / "out"
    result = _bundle(run_cli, recipe, cat_dir, out, *args)
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {expected}"), result.stderr
    assert not out.exists()


def test_upstream_recipes_and_our_catalog_pass_the_grammars(team_shared: Path, tmp_path: Path) -> None:
    """Upstream's resolved recipes (v-prefixed versions, oci:// and https sources) and a recipe our
    embedded catalog resolves load strictly and pass the reference checks."""
    from shared.bundle import plan
    from shared.recipe import result

    recipes = sorted((team_shared / "research/aicr-golden/recipes").glob("*.yaml"))
    assert len(recipes) >= 4
    recipes.append(bundles.write_recipe(tmp_path / "ours.yaml", **bundles.SEED))
    for path in recipes:
        text = path.read_text(encoding="utf-8")
        parsed = result.parse(yamlio.loads(text, source=str(path)), where=str(path))
        assert parsed.componentRefs
        for index, ref in enumerate(parsed.componentRefs):
            plan.check_references(ref, index, text, str(path))
